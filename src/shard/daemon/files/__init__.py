"""The agent's folder, read-only, for clients (``fs.list``, ``fs.read``) and the folders a new agent
may be made in (``fs.complete``): the policy of what may be seen in ``paths.py`` (no I/O), the
reading in ``tree.py`` (blocking, in a worker thread), the commands in ``service.py``."""
