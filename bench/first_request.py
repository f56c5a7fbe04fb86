"""``shard run`` one-shot: spawn → the first provider request reaching a local server, and total wall
time, against a local OpenAI-compatible and a local Anthropic-compatible server.

The server answers with a short streamed reply in each API's real SSE shape. Prints medians over N
runs and saves them to bench/results/first_request.json.

    python bench/first_request.py [--runs 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from aiohttp import web

from harness import save_results, shard_argv

PEERS_WALL_S = [0.27, 0.82, 2.2]  # other agents' one-shot runs, measured on this machine (issue 3)

OPENAI_REPLY = [
    {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hello."}, "finish_reason": None}]},
    {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
]  # fmt: skip
ANTHROPIC_REPLY = [
    ("message_start", {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
     "model": "c", "content": [], "stop_reason": None, "stop_sequence": None,
     "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0,
     "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
     "delta": {"type": "text_delta", "text": "Hello."}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
     "usage": {"output_tokens": 2}}),
    ("message_stop", {"type": "message_stop"}),
]  # fmt: skip


class Server:
    def __init__(self) -> None:
        self.first_request_at: float | None = None
        self.requests = 0

    async def openai(self, request: web.Request) -> web.StreamResponse:
        self.first_request_at = self.first_request_at or time.perf_counter()
        self.requests += 1
        await request.read()
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(request)
        for chunk in OPENAI_REPLY:
            await resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        return resp

    async def anthropic(self, request: web.Request) -> web.StreamResponse:
        self.first_request_at = self.first_request_at or time.perf_counter()
        await request.read()
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(request)
        for event, data in ANTHROPIC_REPLY:
            await resp.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
        return resp


async def serve_openai() -> tuple[Server, web.AppRunner, int]:
    """A :class:`Server` answering Chat Completions on 127.0.0.1, its runner (to clean up), its port."""
    server = Server()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", server.openai)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return server, runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]


async def one_run(server: Server, home: Path, cwd: Path, model: str) -> tuple[float, float]:
    server.first_request_at = None
    env = {**os.environ, "SHARD_HOME": str(home), "BENCH_KEY": "bench-key"}
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *shard_argv(), "run", "--model", model, "say hello",
        cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    t_end = time.perf_counter()
    if proc.returncode != 0 or server.first_request_at is None:
        raise RuntimeError(f"run failed ({proc.returncode}): {err.decode()[-500:]}")
    assert out.decode().strip() == "Hello.", out
    return (server.first_request_at - t0) * 1000, (t_end - t0) * 1000


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    server = Server()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", server.openai)
    app.router.add_post("/v1/messages", server.anthropic)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    results: dict[str, dict[str, float]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            home, cwd = Path(tmp) / "home", Path(tmp) / "cwd"
            home.mkdir()
            cwd.mkdir()
            (home / "config.toml").write_text(
                f'[[providers]]\nname = "local"\nkind = "openai"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
                'models = [{ id = "m" }]\n\n'
                f'[[providers]]\nname = "ant"\nkind = "anthropic"\nbase_url = "http://127.0.0.1:{port}"\n'
                'api_key_env = "BENCH_KEY"\nmodels = [{ id = "c" }]\n'
            )
            for label, model in (("openai", "local/m"), ("anthropic", "ant/c")):
                await one_run(server, home, cwd, model)  # warm the page cache; not counted
                runs = [await one_run(server, home, cwd, model) for _ in range(args.runs)]
                first = [r[0] for r in runs]
                wall = [r[1] for r in runs]
                results[label] = {
                    "spawn_to_first_request_ms": round(statistics.median(first), 1),
                    "wall_ms": round(statistics.median(wall), 1),
                    "min_wall_ms": round(min(wall), 1),
                    "max_wall_ms": round(max(wall), 1),
                }
    finally:
        await runner.cleanup()
    print(f"shard run one-shot against a local server, median of {args.runs} runs")
    for label, r in results.items():
        print(
            f"  {label:9s} spawn -> first request {r['spawn_to_first_request_ms']:7.1f} ms,"
            f" wall {r['wall_ms']:7.1f} ms (min {r['min_wall_ms']}, max {r['max_wall_ms']})"
        )
    print("  peers (same one-shot, wall): " + ", ".join(f"{p} s" for p in PEERS_WALL_S))
    out = save_results("first_request", {"runs": args.runs, "results": results, "peers_wall_s": PEERS_WALL_S})
    print(f"  saved {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
