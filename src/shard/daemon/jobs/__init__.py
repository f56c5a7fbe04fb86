"""Background subagent jobs (PROTOCOL §10.3, §11.2): the job catalog and its state machine
(``model.py``), handles and aliases (``handles.py``), and the coordinator (``coordinator.py``) that
answers ``subagent.*`` commands and drives runs through its desk (``shard.daemon.desk``). Plain state
and decisions: the durable half goes through the ``JobStore`` port (``store.py``)."""
