"""``$SHARD_HOME/config.toml``: ``settings`` (read with the stdlib only) and ``mistakes`` (each mistake
told in one line naming the file, the line and the key)."""
