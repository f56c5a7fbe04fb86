"""L1: the daemon — registry (state.db), runtime supervisor, broker (routing, fan-out, first-response
wins) and the unix-socket and WebSocket transports. It never imports the agent loop: runtimes are
``shard agent --stdio`` children and the two meet only on the wire."""
