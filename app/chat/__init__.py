"""The conversation loop: request → stream → assemble → dispatch → next
request, UI-neutral. The TUI, ``ask`` and the transcript writer
(``transcribe``) consume its events; the session places each new entry in
the stored tree itself (``place``)."""
