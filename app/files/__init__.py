"""Where callstream keeps its files and how it opens them: ``paths`` (the
config file and the data directory, each overridable by the environment) and
``dbfile`` (every sqlite file opened one way: WAL, 0600, parameters redacted)."""
