"""What a benchmark reads of a process tree from /proc: CPU time, PSS, and which of a daemon's
descendants are warm templates and which are runtimes."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` (its own threads, not its children), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime: fields 14 and 15 of stat(5)


def pss_mb(pid: int) -> float:
    """Proportional set size: each shared page counted as a share of the processes mapping it."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no Pss for pid {pid}")


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (children, their children, …)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(b")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


@dataclass
class DaemonTree:
    daemon: int
    templates: list[int]
    runtimes: list[int]

    @classmethod
    def of(cls, daemon: int) -> DaemonTree:
        templates, runtimes = [], []
        for pid in descendants(daemon):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"shard.cli.forkserver" in argv:
                templates.append(pid)
            elif b"agent" in argv and b"--stdio" in argv:
                runtimes.append(pid)
        return cls(daemon, templates, runtimes)

    def pss(self) -> dict[str, float]:
        def total(pids: list[int]) -> float:
            found = 0.0
            for pid in pids:
                with contextlib.suppress(OSError, RuntimeError):  # it ended since the listing
                    found += pss_mb(pid)
            return found

        daemon, templates, runtimes = pss_mb(self.daemon), total(self.templates), total(self.runtimes)
        return {
            "pss_daemon_mb": daemon,
            "pss_templates_mb": templates,
            "pss_runtimes_mb": runtimes,
            "pss_runtime_mean_mb": runtimes / len(self.runtimes) if self.runtimes else 0.0,
            "pss_total_mb": daemon + templates + runtimes,
        }
