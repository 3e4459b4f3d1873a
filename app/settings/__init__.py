"""The config file: reading it (``config``: profiles, command tools, limits,
the ledger, approvals, keys), its ``[mcp.NAME]`` tables (``mcp``), and the one
way we write to it (``configfile``: tomlkit, the user's lines kept)."""
