"""The config file: reading it (``config``: ``load_config`` and ``Config``,
with one module per kind of table — ``profiles``, ``tools``, ``limits``,
``ledger``, ``approval``, ``everyday``, ``mcp`` — and ``checks``, their shared
checks and ``ConfigError``), and the one way we write to it (``configfile``:
tomlkit, the user's lines kept)."""
