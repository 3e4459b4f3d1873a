"""Tools and running them once: the registry (built-ins, command tools, and
what an attached source such as the MCP servers adds), the finaliser, the
approval rules and the dispatcher worker (DESIGN.md steps 6–8)."""
