"""A small filesystem that tests can fill: a real full disk, not a mocked write.

``with small_disk(path) as disk:`` mounts a 2 MiB tmpfs at ``path`` (root only — CI runs as root);
``disk.fill()`` takes every free byte, so the next write that needs a new page fails with ENOSPC;
``disk.free()`` gives the space back.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

_CHUNKS = (1 << 16, 1 << 12, 1)


class SmallDisk:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._fillers: list[Path] = []

    def fill(self) -> None:
        """Write filler files until no byte is left (big chunks, then pages, then single bytes)."""
        for size in _CHUNKS:
            path = self.root / f".filler-{len(self._fillers)}"
            self._fillers.append(path)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                block = b"\0" * size
                while True:
                    os.write(fd, block)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
            finally:
                os.close(fd)

    def free(self) -> None:
        for path in self._fillers:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self._fillers.clear()


@contextlib.contextmanager
def small_disk(root: Path, size: str = "2m") -> Iterator[SmallDisk]:
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(root)], check=True)
    try:
        yield SmallDisk(root)
    finally:
        subprocess.run(["umount", "-l", str(root)], check=False)
