"""The agent runtime (L1): one ``shard agent --stdio`` process that runs one agent's conversation.

It imports nothing here, so that ``import shard.agent.x`` costs only ``x`` (start-up is measured) and a
module of the package never loops through this file. The surface others use:

- ``boot`` (start-up phase A: the hello before anything heavy), ``stdio`` (the JSONL transport) and
  ``runtime`` (``Runtime``: commands, the one task) — what ``shard agent --stdio`` and the daemon's
  warm template run;
- ``config`` (``config.toml`` read with the stdlib, and its mistakes told in one line each) and
  ``catalog`` / ``selection`` (models and providers) — what the daemon and the command line read too;
- ``session`` (the session files: store, window, fork, listing) — what ``shard sessions`` reads.

The rest is the runtime's inside, by family:

- the turn: ``turn`` (the loop), ``turn_context``, ``turn_usage``, ``tool_runs``, ``output_limit``,
  ``steering``, ``message_queue``, ``assembler`` (the stream fold), ``transcript``, ``sink``, ``status``;
- ``compaction/`` (the pipeline, its tiers and the window's budget);
- ``prompting/`` (the system prompt, project instructions, agent definitions);
- ``permissions/`` (the gate and its board), ``modes``, ``ui``;
- ``sandbox/`` (bubblewrap, the places it hides and protects, the network proxy and its bridge);
- ``providers/``, ``tools/``, ``mcp/``, and ``daemon_link`` (a daemon-hosted runtime's link back).
"""
