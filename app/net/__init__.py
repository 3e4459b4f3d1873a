"""The network edge: one streamed request over httpx, with explicit timeouts,
a recording tap before any parsing, and faults turned into stated causes."""
