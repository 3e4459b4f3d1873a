"""Tools and running them once: the registry, the finaliser, the ledger and
the dispatcher worker (DESIGN.md steps 6–8)."""
