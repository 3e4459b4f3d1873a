"""The conversation loop: request → stream → assemble → dispatch → next
request, UI-neutral. The TUI, ``ask`` and the store consume its events."""
