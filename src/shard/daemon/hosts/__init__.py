"""Runtimes on other machines, over the system OpenSSH client (DESIGN §4 "Remote hosts").

* ``ssh.py`` — policy, no I/O: the ``ssh`` command lines (one multiplexed master per host, a client
  per runtime), the remote shell command, and what an ssh failure means in one line.
* ``connections.py`` — the masters: started on first use, reused, restarted after a drop, closed
  with the daemon.
* ``launcher.py`` — a runtime on a host: its ``ssh`` child and the handoff it writes first.
"""
