"""One daemon carrying a hundred agents (issue 31 item 3).

A real ``shard daemon`` (own SHARD_HOME in a temp dir, the offline ``scripted`` provider) gets
``--agents`` agents (100), every one with a live runtime. ``--clients`` clients (10) attach, each in a
process of its own (``scale_client.py``), alternately over the WebSocket and the unix socket:
``--watchers`` of them (5) watch every agent, the others share the agents out and each prompts its
share of the ``--streaming`` agents (20), which all stream a long reply at once (``--deltas`` pieces,
``--delay-ms`` apart, like a model emitting tokens). While they stream, config.toml is edited
``--config-edits`` times, each edit followed by one more agent.create (so the warm template is
retired and a new one built, as a person editing their config would cause).

What it reports:

- latency from a runtime's line to each client's frame: the scripted provider stamps each piece with
  CLOCK_MONOTONIC as it hands it to the runtime (which then encodes and writes that one line), and
  the client reads the same clock when the read that brought the frame returns — one clock, one
  machine, nothing estimated. p50, p99 and max over every frame of every client;
- whether a client's lag grows: its median latency over the first third of the streaming time
  against the last third (medians: a spike is no growing lag); it grows when the last is over 1.5
  times the first plus ``GROWTH_MS``;
- the daemon's CPU (utime + stime from /proc/<pid>/stat) over the streaming, per 1,000 deltas the
  runtimes wrote and per 1,000 delta frames the clients got (per client);
- PSS (/proc/<pid>/smaps_rollup) of the daemon, the warm template(s) and the live runtimes, read
  just after the streaming with every runtime alive, and how many templates live then;
- the wall time of the creates (``--create-concurrency`` in flight at a time).

Targets: p99 <= 20 ms; daemon CPU <= 50 ms per 1,000 deltas per client; total PSS <= 1.5 GB with 100
live runtimes; no client's lag grows; one template.

    python bench/scale.py [--quick] [--runs 3] [--out PATH]

Each run is a fresh daemon; the figures are the medians over ``--runs`` (the lag verdict is any
run's, the template count the largest). Prints the figures and saves them to
bench/results/scale.json (or ``--out``). ``--quick`` is a small size for a smoke test
(tests/bench/test_scale_bench.py), whose figures mean nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from harness import save_results
from procfs import DaemonTree, cpu_seconds
from shard.testing import DaemonProcess, write_scripted_home
from shard.testing.daemon import UnixClient

HERE = Path(__file__).parent
TARGET_P99_MS = 20.0
TARGET_CPU_MS_PER_1000_PER_CLIENT = 50.0
TARGET_PSS_MB = 1536.0
CHUNK = 8  # characters of reply in a delta, after the stamp
# A client that falls behind queues ~100 deltas a second per agent more than it gets: its lag grows
# by hundreds of milliseconds over a run. Other work on a shared machine moves a median by a
# millisecond or two either way; this margin tells the one from the other.
GROWTH_MS = 5.0


@dataclass
class Size:
    agents: int = 100
    streaming: int = 20
    clients: int = 10
    watchers: int = 5
    deltas: int = 1000
    delay_ms: float = 10.0
    config_edits: int = 3
    create_concurrency: int = 10


QUICK = Size(agents=6, streaming=3, clients=3, watchers=2, deltas=60, delay_ms=5.0, config_edits=1)


def write_home(home: Path, size: Size) -> None:
    step = {
        "blocks": [{"type": "text", "text": "x" * (CHUNK * size.deltas), "stamp": True}],
        "chunk": CHUNK,
        "delay_ms": size.delay_ms,
        "usage": {"input": 10, "output": size.deltas},
    }
    write_scripted_home(home, [step], loop=True, record=False)


async def create(admin: UnixClient, cwd: Path, count: int, concurrency: int) -> tuple[list[str], list[float]]:
    """``count`` agents, ``concurrency`` creates in flight; their ids and each create's seconds."""
    ids: list[str] = []
    took: list[float] = []
    sent: dict[str, float] = {}
    next_id = 0

    async def send_one() -> None:
        nonlocal next_id
        key = f"c{next_id}"
        next_id += 1
        sent[key] = time.perf_counter()
        await admin.send({"type": "agent.create", "id": key, "cwd": str(cwd)})

    for _ in range(min(concurrency, count)):
        await send_one()
    while len(ids) < count:
        message = await admin.next(timeout=120)
        if message.get("type") != "response" or message.get("command") != "agent.create":
            continue
        if not message["success"]:
            raise RuntimeError(f"agent.create failed: {message}")
        took.append(time.perf_counter() - sent.pop(message["id"]))
        ids.append(message["data"]["agent_id"])
        if next_id < count:
            await send_one()
    return ids, took


async def start_client(
    daemon: DaemonProcess, work: Path, n: int, spec: dict[str, Any]
) -> asyncio.subprocess.Process:
    spec = {**spec, "socket": str(daemon.socket), "port": daemon.port, "out": str(work / f"client{n}.json")}
    if spec["transport"] == "ws":
        spec["ticket"] = await daemon.ticket()
    path = work / f"spec{n}.json"
    path.write_text(json.dumps(spec))
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(HERE / "scale_client.py"),
        str(path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )


def client_specs(ids: list[str], size: Size) -> list[dict[str, Any]]:
    """Watchers see every agent; each driver attaches to its share of the agents and prompts its
    share of the streaming ones (the first ``streaming`` ids)."""
    drivers = size.clients - size.watchers
    streaming = ids[: size.streaming]
    specs = []
    for n in range(size.clients):
        transport = "ws" if n % 2 == 0 else "unix"
        if n < size.watchers:
            specs.append(
                {
                    "transport": transport,
                    "role": "observer",
                    "attach": ids,
                    "prompt": [],
                    "streams": streaming,
                }
            )
        else:
            d = n - size.watchers
            mine = ids[d::drivers]
            prompts = streaming[d::drivers]
            specs.append(
                {
                    "transport": transport,
                    "role": "interactive",
                    "attach": mine,
                    "prompt": prompts,
                    "streams": prompts,
                }
            )
    return specs


async def edit_config(
    home: Path, admin: UnixClient, cwd: Path, size: Size, streaming_s: float
) -> list[tuple[int, int]]:
    """Edit config.toml ``config_edits`` times in the middle third of the streaming, each time
    creating one agent (whose launch retires the template and waits for a new one); the
    CLOCK_MONOTONIC span of each create, the new template's imports included."""
    spans = []
    start = time.perf_counter()
    for k in range(size.config_edits):
        at = streaming_s * (1 / 3 + (k + 0.5) / (3 * size.config_edits))
        await asyncio.sleep(max(0.0, start + at - time.perf_counter()))
        config = home / "config.toml"
        config.write_text(config.read_text() + f"# edit {k}\n")
        began = time.monotonic_ns()
        await create(admin, cwd, 1, 1)
        spans.append((began, time.monotonic_ns()))
    return spans


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def lag_by_client(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each client's median latency over the first and the last third of the time it streamed.
    Medians, so that a spike (a config edit's new template importing, another process taking the
    core) does not pass for a lag that grows."""
    out = []
    for r in results:
        first, last = min(r["received_ns"]), max(r["received_ns"])
        third = (last - first) / 3
        pairs = list(zip(r["latency_us"], r["received_ns"], strict=True))
        early = statistics.median([lat for lat, t in pairs if t < first + third]) / 1000
        late = statistics.median([lat for lat, t in pairs if t >= last - third]) / 1000
        out.append(
            {
                "transport": r["transport"],
                "attached": r["attached"],
                "first_third_p50_ms": round(early, 2),
                "last_third_p50_ms": round(late, 2),
                "grows": late > 1.5 * early + GROWTH_MS,
            }
        )
    return out


async def main_async(size: Size) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="shard-scale-") as tmp:
        root = Path(tmp)
        home, cwd, work = root / "home", root / "project", root / "work"
        cwd.mkdir()
        work.mkdir()
        write_home(home, size)
        limit = size.agents + size.config_edits + 5
        daemon = await DaemonProcess.start(
            home, "--max-runtimes", str(limit), "--idle-runtime-timeout", "3600"
        )
        try:
            return await measure(daemon, home, cwd, work, size)
        finally:
            await daemon.stop()


async def measure(daemon: DaemonProcess, home: Path, cwd: Path, work: Path, size: Size) -> dict[str, Any]:
    admin = await daemon.unix()
    began = time.perf_counter()
    ids, create_s = await create(admin, cwd, size.agents, size.create_concurrency)
    creates_wall = time.perf_counter() - began
    specs = client_specs(ids, size)
    procs = [await start_client(daemon, work, n, spec) for n, spec in enumerate(specs)]
    for proc in procs:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 120)
        if line != b"ready\n":
            raise RuntimeError(f"a client did not attach: {line!r}")
    pid = daemon.proc.pid
    streaming_s = size.deltas * size.delay_ms / 1000
    cpu_before = cpu_seconds(pid)
    t0 = time.perf_counter()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(b"go\n")
    edits = asyncio.ensure_future(edit_config(home, admin, cwd, size, streaming_s))
    codes = await asyncio.wait_for(asyncio.gather(*(p.wait() for p in procs)), 60 + 20 * streaming_s)
    stream_wall = time.perf_counter() - t0
    cpu = cpu_seconds(pid) - cpu_before
    edit_spans = await edits
    if any(codes):
        raise RuntimeError(f"a client failed: exit codes {codes}")
    tree = DaemonTree.of(pid)
    pss = tree.pss()
    results = [orjson.loads((work / f"client{n}.json").read_bytes()) for n in range(len(specs))]
    latencies = [lat / 1000 for r in results for lat in r["latency_us"]]
    frames = len(latencies)
    deltas_in = size.streaming * size.deltas
    lags = lag_by_client(results)
    return {
        **{k: v for k, v in asdict(size).items()},
        "creates_s": round(creates_wall, 2),
        "create_p50_ms": round(statistics.median(create_s) * 1000, 1),
        "create_max_ms": round(max(create_s) * 1000, 1),
        "edit_create_max_ms": round(max((b - a for a, b in edit_spans), default=0) / 1e6, 1),
        "stream_wall_s": round(stream_wall, 2),
        "deltas_in": deltas_in,
        "delta_frames_out": frames,
        "latency_ms_p50": round(statistics.median(latencies), 2),
        "latency_ms_p99": round(percentile(latencies, 0.99), 2),
        "latency_ms_max": round(max(latencies), 2),
        "worst_client_p99_ms": round(
            max(percentile([x / 1000 for x in r["latency_us"]], 0.99) for r in results), 2
        ),
        "daemon_cpu_s": round(cpu, 2),
        "daemon_cpu_ms_per_1000_deltas": round(cpu * 1000 / (deltas_in / 1000), 1),
        "daemon_cpu_ms_per_1000_deltas_per_client": round(cpu * 1000 / (frames / 1000), 2),
        "runtimes_live": len(tree.runtimes),
        "templates_live": len(tree.templates),
        **{k: round(v, 1) for k, v in pss.items()},
        "lag_grows": any(lag["grows"] for lag in lags),
        "lag_by_client": lags,
    }


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One report from several runs: the median of each figure; a verdict holds if it held in every
    run; the most templates any run left; the first run's per-client lags."""
    out: dict[str, Any] = {"runs": len(runs)}
    for key, value in runs[0].items():
        values = [r[key] for r in runs]
        if key == "lag_grows":
            out[key] = any(values)
        elif key == "templates_live":
            out[key] = max(values)
        elif isinstance(value, bool) or not isinstance(value, int | float):
            out[key] = value
        else:
            out[key] = round(statistics.median(values), 2)
    for key in ("latency_ms_p99", "latency_ms_max", "lag_grows", "templates_live"):
        out[f"{key}_by_run"] = [r[key] for r in runs]
    out["lag_by_client_by_run"] = [r["lag_by_client"] for r in runs]
    return out


def verdicts(result: dict[str, Any]) -> dict[str, bool]:
    return {
        "latency_ms_p99": result["latency_ms_p99"] <= TARGET_P99_MS,
        "daemon_cpu_ms_per_1000_deltas_per_client": result["daemon_cpu_ms_per_1000_deltas_per_client"]
        <= TARGET_CPU_MS_PER_1000_PER_CLIENT,
        "pss_total_mb": result["pss_total_mb"] <= TARGET_PSS_MB,
        "lag_grows": not result["lag_grows"],
        "templates_live": result["templates_live"] <= 1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small size for a smoke test")
    for name, value in asdict(Size()).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=None)
    parser.add_argument("--runs", type=int, default=3, help="fresh daemons; the figures are medians")
    parser.add_argument("--out", type=Path, default=None, help="where to save the JSON")
    args = parser.parse_args()
    size = QUICK if args.quick else Size()
    size = Size(**{k: v if getattr(args, k) is None else getattr(args, k) for k, v in asdict(size).items()})
    result = medians([asyncio.run(main_async(size)) for _ in range(args.runs)])
    marks = verdicts(result)
    for key, value in result.items():
        if key == "lag_by_client_by_run":
            continue
        if key == "lag_by_client":
            for n, lag in enumerate(value):
                grows = "  GROWS" if lag["grows"] else ""
                print(
                    f"  client {n} ({lag['transport']}, {lag['attached']} agents):"
                    f" {lag['first_third_p50_ms']} ms → {lag['last_third_p50_ms']} ms{grows}"
                )
            continue
        mark = "" if key not in marks else ("  (target met)" if marks[key] else "  (TARGET MISSED)")
        print(f"{key:45} {value}{mark}")
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"saved {args.out}")
    else:
        print(f"saved {save_results('scale', result)}")


if __name__ == "__main__":
    main()
