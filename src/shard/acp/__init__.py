"""``shard acp``: Shard agents for editors, over the Agent Client Protocol (the official
``agent-client-protocol`` SDK, module ``acp``; see docs/acp.md).

* :mod:`.mapping`, :mod:`.options`, :mod:`.stops` — pure: our events, permission choices, modes and
  models in ACP's terms, and a prompt's turn folded to its stop reason;
* :mod:`.session` — one ACP session: a Shard agent and the task forwarding its events;
* :mod:`.backends` — where the agent runs: the daemon when one is running, else a direct child;
* :mod:`.server` — the ACP agent an editor talks to; :func:`serve` runs it on stdio.

Inside this package ``import acp`` is the SDK (absolute imports), never ``shard.acp``.
"""

from shard.acp.serve import serve

__all__ = ["serve"]
