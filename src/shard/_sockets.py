"""Where Shard's private socket folders go (the ssh control masters', the sandbox proxy's):
``sun_path`` holds 108 bytes, and ssh appends a random suffix while it binds, so a socket's path of
at most :data:`SOCKET_PATH_MAX` bytes is the one kept to. Stdlib only."""

from __future__ import annotations

import os
import tempfile

SOCKET_PATH_MAX = 100


def socket_temp_dir(tail: int) -> str:
    """The temp dir to make a private (0700) socket folder in, when the folder and its socket add
    ``tail`` bytes to its path: the system's, unless that is too deep for them (a deep TMPDIR, as a
    test runner's), then /tmp."""
    base = tempfile.gettempdir()
    if len(base) + tail > SOCKET_PATH_MAX and os.path.isdir("/tmp"):
        return "/tmp"
    return base
