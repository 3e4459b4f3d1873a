"""From the config and the command line to running sessions: ``endpoint``
(a profile to a base URL and headers; the demo server started when used) and
``wiring`` (the tools, the ledger, the store and the writer put together:
``ask`` and the TUI both start here)."""
