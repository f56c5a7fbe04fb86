"""The daemon's two transports against a real ``shard daemon`` (PROTOCOL §2, §3, §4 loopback, §4.2, §7):
framing on the unix socket and the WebSocket, keepalive, large and non-ASCII messages, the hello
handshake, and the loopback WebSocket upgrade checks (Host, Origin, forwarded headers, bind address).

Tickets, cookies, enrollment and remote mode are tested in tests/web; the WebSocket clients here
authenticate through that real flow (``DaemonProcess.ws``).
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import os
import stat
from collections.abc import AsyncIterator

import aiohttp
import orjson
import pytest
import pytest_asyncio
from daemon_helpers import attach, connect, create_agent

import shard
from shard.cli.main import build_parser
from shard.daemon import websocket as ws_transport
from shard.testing import DaemonProcess, text_step, write_scripted_home
from shard.testing.tools import TEST_TOOLS
from shard.testing.web import ws_protocols

SLOW_WRITE = {
    "blocks": [
        {"type": "pause", "ms": 200},
        {"type": "tool_call", "name": "touch", "args": {"path": "made.txt"}},
    ]
}
PER_RUNTIME_PREFIXES = ("model-", "mode-", "reasoning-", "ui:")
CLOSED_TYPES = (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR)


# The tests marked SHARED speak to one daemon of the module (``daemon``) that no test gives an agent:
# malformed records, refused frames and upgrades, the listening address. Each opens its own
# connections and leaves nothing behind that another looks at; a test whose subject is agents,
# streaming, a flag or a fresh daemon starts its own with ``daemon_factory``.
SHARED = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DaemonProcess]:
    home = write_scripted_home(
        tmp_path_factory.mktemp("transports") / "home", [text_step("hi")], extensions=TEST_TOOLS
    )
    started = await DaemonProcess.start(home)
    yield started
    await started.kill()


def _origin(port):
    return f"http://127.0.0.1:{port}"


async def _upgrade(port, header_lines):
    """A WebSocket upgrade sent by hand, so the test controls every header (aiohttp sets Host itself).

    Returns (status code, the response head, the first bytes after it)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        "GET /ws HTTP/1.1\r\n"
        + "".join(f"{line}\r\n" for line in header_lines)
        + "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        + f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    writer.write(request.encode())
    await writer.drain()
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        status = int(head.split(b" ", 2)[1])
        rest = b""
        if status == 101:  # the hello frame follows at once
            rest = await asyncio.wait_for(reader.read(1 << 16), 10)
        return status, head, rest
    finally:
        writer.close()


async def _statuses(port, cases):
    """{label: status} for each (label, header lines) case."""
    return {label: (await _upgrade(port, lines))[0] for label, lines in cases}


async def _raw_ws(daemon, **kwargs):
    """An aiohttp WebSocket (and its session) with nothing in between: every frame is visible. It
    is authenticated like a browser: a fresh ticket from the daemon's enrolled test browser."""
    port = daemon.port
    protocols = ws_protocols(await daemon.ticket())
    session = aiohttp.ClientSession()
    try:
        ws = await session.ws_connect(
            f"http://127.0.0.1:{port}/ws",
            headers={"Origin": _origin(port)},
            max_msg_size=1 << 27,
            protocols=protocols,
            **kwargs,
        )
    except BaseException:
        await session.close()
        raise
    return session, ws


# --- §3 / §7: hello -------------------------------------------------------------------------------


async def test_hello_is_the_first_message_on_every_connection(daemon_factory, transport, project):
    """The daemon speaks first: each new connection's first message is hello (protocol 0.1.0, the
    server version, a list of capability strings) before the client sends anything, even while
    another client is creating agents (whose broadcasts go to every connection). The unix socket
    needs no in-band authentication.

    Covers: R3.2, R9.1.1, R7.1, R7.2, R4.2.1
    """
    daemon = await daemon_factory([text_step("hi")], loop=True)
    driver = await daemon.unix()

    async def first_message():
        if transport == "unix":
            reader, writer = await asyncio.open_unix_connection(str(daemon.socket))
            try:
                line = await asyncio.wait_for(reader.readline(), 10)
            finally:
                writer.close()
            assert line.endswith(b"\n")
            return orjson.loads(line)
        session, ws = await _raw_ws(daemon)
        try:
            msg = await ws.receive(timeout=10)
        finally:
            await session.close()
        assert msg.type == aiohttp.WSMsgType.TEXT, msg
        return orjson.loads(msg.data)

    async def busy():
        for i in range(3):
            await create_agent(driver, project, name=f"a{i}")

    results = await asyncio.gather(busy(), *[first_message() for _ in range(6)])
    for hello in results[1:]:
        assert hello["type"] == "hello", hello
        assert hello["protocol_version"] == "0.1.0"
        assert hello["server_version"] == shard.__version__
        assert isinstance(hello["capabilities"], list)
        assert all(isinstance(c, str) for c in hello["capabilities"])
        assert "id" not in hello
        assert "agent_id" not in hello


async def test_daemon_hello_capabilities_are_transport_scoped(daemon_factory, transport, project):
    """The daemon's hello advertises its transport and streaming-deltas, never per-runtime model,
    mode or reasoning support; the attached runtime's own capabilities arrive in sync.capabilities.

    Covers: R7.9, R7.2, R9.1.8, R9.1.9
    """
    daemon = await daemon_factory([text_step("hi")])
    client = await connect(daemon, transport)
    hello = client.seen[0]
    assert hello["type"] == "hello"
    caps = hello["capabilities"]
    other = "unix" if transport == "websocket" else "websocket"
    assert transport in caps, caps
    assert "streaming-deltas" in caps, caps
    assert other not in caps, caps
    assert [c for c in caps if c.startswith(PER_RUNTIME_PREFIXES)] == [], caps
    agent = await create_agent(client, project)
    _, sync = await attach(client, agent)
    runtime_caps = sync["capabilities"]
    for cap in ("streaming-deltas", "mode-catalog", "mode-switch", "model-catalog", "model-switch"):
        assert cap in runtime_caps, runtime_caps
    assert transport not in runtime_caps, runtime_caps


# --- §2.1: the unix socket is JSONL -------------------------------------------------------------


async def test_unix_socket_messages_are_single_lf_terminated_lines(daemon_factory, project):
    """Every message the daemon writes on the unix socket is one UTF-8 JSON object on one
    LF-terminated line, even when the text inside holds LF, CR, U+2028 and U+2029.

    Covers: R2.1.1, R2.3.1
    """
    text = "line one\nline two\r\n\u2028still two\u2029 — ünïcode ✓ 🚀"
    daemon = await daemon_factory([text_step(text)])
    setup = await daemon.unix()
    agent = await create_agent(setup, project)
    reader, writer = await asyncio.open_unix_connection(str(daemon.socket), limit=1 << 27)
    lines, messages = [], []

    async def read_until(type_):
        while not (messages and messages[-1]["type"] == type_):
            line = await asyncio.wait_for(reader.readline(), 30)
            assert line, "the daemon closed the connection"
            lines.append(line)
            messages.append(orjson.loads(line))

    try:
        writer.write(orjson.dumps({"type": "agent.attach", "id": "a", "agent_id": agent}) + b"\n")
        await read_until("sync")
        prompt = {"type": "prompt", "id": "p", "agent_id": agent, "message": "go\nnow\u2028"}
        writer.write(orjson.dumps(prompt) + b"\n")
        await read_until("turn_end")
    finally:
        writer.close()
    for line in lines:
        assert line.endswith(b"\n"), line[:200]
        assert line.count(b"\n") == 1, line[:200]
        assert not line.endswith(b"\r\n"), line[:200]
        line.decode("utf-8")  # strict: raises on anything that is not UTF-8
        assert isinstance(orjson.loads(line), dict)
    assert messages[0]["type"] == "hello"
    deltas = "".join(m.get("text_delta", "") for m in messages if m["type"] == "message_delta")
    assert deltas == text
    users = [m for m in messages if m["type"] == "message_complete" and m["message"]["role"] == "user"]
    assert users[0]["message"]["content"][0]["text"] == "go\nnow\u2028"


async def test_unix_socket_reader_splits_on_lf_only(daemon_factory):
    """The daemon's unix-socket reader: records end at LF only (not at a bare CR, U+2028 or U+2029),
    a single trailing CR is stripped (CRLF input works), blank lines are skipped, several records
    in one write and one record over many writes both work.

    Covers: R2.1.2, R2.1.3, R2.1.4
    """
    daemon = await daemon_factory([text_step("hi")])
    client = await daemon.unix()
    await client.send_raw(b'{"type":"agent.list","id":"crlf"}\r\n')
    resp = await client.next(10)
    assert (resp["id"], resp["success"]) == ("crlf", True), resp
    await client.send_raw(b'{"type":"agent.list",\r"id":"bare-cr"}\n')  # CR is JSON whitespace here
    resp = await client.next(10)
    assert (resp["id"], resp["success"]) == ("bare-cr", True), resp
    two = b'{"type":"agent.list","id":"one"}\n{"type":"agent.list","id":"two"}\r\n'
    await client.send_raw(b"\n\r\n   \n" + two)
    first, second = await client.next(10), await client.next(10)
    assert [first["id"], second["id"]] == ["one", "two"]
    name = "a\u2028b\u2029c"
    line = orjson.dumps({"type": "agent.create", "id": "sep", "cwd": str(daemon.home), "name": name})
    assert "\u2028".encode() in line  # sent raw, not escaped
    for i in range(0, len(line), 5):
        await client.send_raw(line[i : i + 5])
    await client.send_raw(b"\n")
    created = (await client.until(lambda m: m.get("id") == "sep"))[-1]
    assert created["success"] is True, created
    listed, _ = await client.request({"type": "agent.list", "id": "l"})
    assert [a["name"] for a in listed["data"]["agents"]] == [name]


@SHARED
async def test_unix_socket_bad_records_get_invalid_request_and_the_connection_stays_up(daemon):
    """Malformed JSON, a non-object, invalid UTF-8 and a missing type each get
    response{success:false, error.code:INVALID_REQUEST}; the same connection keeps working.

    Covers: R8.5, R8.6, R8.1, R2.3.1
    """
    client = await daemon.unix()
    for bad in (
        b'{"type": "agent.list", "id": \n',
        b"[1, 2]\n",
        b'{"type":"agent.list","id":"\xff\xfe"}\n',
        b'{"id":"no-type"}\n',
        b"not json at all\r\n",
    ):
        await client.send_raw(bad)
        resp = await client.next(10)
        assert resp["type"] == "response", (bad, resp)
        assert resp["success"] is False, (bad, resp)
        assert resp["error"]["code"] == "INVALID_REQUEST", (bad, resp)
        assert isinstance(resp["error"]["message"], str)
    resp, before = await client.request({"type": "agent.list", "id": "still-up"})
    assert before == []
    assert resp["success"] is True


# --- §2.2: the WebSocket is one message per text frame --------------------------------------------


async def test_ws_every_frame_is_one_text_json_object(daemon_factory, project):
    """Over the WebSocket every frame the daemon sends in a whole session (hello, create, attach,
    a streamed turn whose text holds LF, CR and U+2028) is a text frame holding exactly one JSON
    object, with no newline delimiter; no binary frame is ever sent.

    Covers: R2.2.1, R2.2.2, R2.3.1
    """
    text = "first\nsecond\r\nthird\u2028fourth\u2029 — ✓"
    daemon = await daemon_factory([{"blocks": [{"type": "text", "text": text}], "chunk": 5}])
    session, ws = await _raw_ws(daemon)
    frames = []

    async def read_until(predicate):
        while True:
            msg = await ws.receive(timeout=30)
            frames.append(msg)
            assert msg.type == aiohttp.WSMsgType.TEXT, msg
            data = orjson.loads(msg.data)
            if predicate(data):
                return data

    try:
        await read_until(lambda m: m["type"] == "hello")
        await ws.send_str(orjson.dumps({"type": "agent.create", "id": "c", "cwd": str(project)}).decode())
        created = await read_until(lambda m: m.get("id") == "c")
        agent = created["data"]["agent_id"]
        await ws.send_str(orjson.dumps({"type": "agent.attach", "id": "a", "agent_id": agent}).decode())
        await read_until(lambda m: m["type"] == "sync")
        await ws.send_str(orjson.dumps({"type": "prompt", "agent_id": agent, "message": "go"}).decode())
        await read_until(lambda m: m["type"] == "turn_end")
        await read_until(lambda m: m["type"] == "status" and m["status"] == "idle")
    finally:
        await session.close()
    messages = []
    for frame in frames:
        assert frame.type == aiohttp.WSMsgType.TEXT
        assert "\n" not in frame.data, frame.data[:200]
        assert "\r" not in frame.data, frame.data[:200]
        message = orjson.loads(frame.data)  # raises on a second document in the frame
        assert isinstance(message, dict)
        assert isinstance(message["type"], str)
        messages.append(message)
    assert messages[0]["type"] == "hello"
    deltas = [m["text_delta"] for m in messages if m["type"] == "message_delta"]
    assert len(deltas) > 1, "the text was streamed in several frames"
    assert "".join(deltas) == text


@SHARED
async def test_ws_frame_boundary_is_the_record_boundary(daemon):
    """The daemon reads one record per text frame: two commands joined by a newline in one frame
    are one bad record (not two commands), and a command split over two frames is two bad records
    (never joined). Each gets INVALID_REQUEST; the connection stays usable.

    Covers: R2.2.1, R8.6
    """
    client = await daemon.ws()
    await client.ws.send_str('{"type":"agent.list","id":"a"}\n{"type":"agent.list","id":"b"}')
    await client.ws.send_str('{"type":"agent.list",')
    await client.ws.send_str('"id":"split"}')
    resp, before = await client.request({"type": "agent.list", "id": "sentinel"})
    assert resp["success"] is True
    assert [m["type"] for m in before] == ["response"] * 3, before
    assert all(m["success"] is False and m["error"]["code"] == "INVALID_REQUEST" for m in before), before
    assert not any(m.get("id") in ("a", "b", "split") and m["success"] for m in before)


@SHARED
async def test_ws_binary_frame_is_refused_and_the_connection_stays_usable(daemon):
    """A binary frame from the client (even one holding a valid command) gets
    response{success:false, error.code:INVALID_REQUEST} in a text frame, is not executed, and the
    connection keeps working.

    Covers: R2.2.2, R8.5, R8.1
    """
    session, ws = await _raw_ws(daemon)
    try:
        hello = await ws.receive(timeout=10)
        assert hello.type == aiohttp.WSMsgType.TEXT
        await ws.send_bytes(b'{"type":"agent.list","id":"bin"}')
        refused = await ws.receive(timeout=10)
        assert refused.type == aiohttp.WSMsgType.TEXT, refused
        resp = orjson.loads(refused.data)
        assert resp["type"] == "response"
        assert resp["success"] is False
        assert resp["error"]["code"] == "INVALID_REQUEST"
        await ws.send_str('{"type":"agent.list","id":"after"}')
        after = await ws.receive(timeout=10)
        assert after.type == aiohttp.WSMsgType.TEXT, after
        resp = orjson.loads(after.data)
        assert (resp["id"], resp["success"]) == ("after", True), resp
        assert not ws.closed
    finally:
        await session.close()


@pytest.mark.no_local_runtimes
async def test_ws_server_pings_at_the_configured_interval(daemon_factory):
    """The server sends WS pings on its own (every 30 s by default; here --ws-ping-interval 1): a
    client that answers each one keeps getting them about one interval apart.

    Covers: R2.2.3
    """
    assert ws_transport.PING_INTERVAL == 30
    assert build_parser().parse_args(["daemon"]).ws_ping_interval == 30
    daemon = await daemon_factory([text_step("hi")], "--ws-ping-interval", "1")
    session, ws = await _raw_ws(daemon, autoping=False)
    loop = asyncio.get_running_loop()
    try:
        hello = await ws.receive(timeout=5)
        assert hello.type == aiohttp.WSMsgType.TEXT
        pings = []
        while len(pings) < 3:
            msg = await ws.receive(timeout=5)
            assert msg.type == aiohttp.WSMsgType.PING, msg
            pings.append(loop.time())
            await ws.pong(msg.data)
        gaps = [b - a for a, b in itertools.pairwise(pings)]
        # 1 s, not the default 30 s: three pings came within the receive timeouts above (5 s each),
        # and none came early. No tighter upper bound: the machine may be busy.
        assert all(gap > 0.5 for gap in gaps), gaps
        await ws.send_str('{"type":"agent.list","id":"alive"}')
        resp = await ws.receive(timeout=5)
        assert orjson.loads(resp.data)["success"] is True
    finally:
        await session.close()


async def test_ws_client_that_never_pongs_is_dropped_and_detached(daemon_factory, project):
    """With --ws-ping-interval 1 a client that never answers pings is closed by the server about
    1.5 s after its last message, and detached from the agent it was the only interactive client of
    (that agent's next permission request gets the headless deny at once); meanwhile a client that
    answers pings stays connected and usable.

    Covers: R2.2.5, R2.2.3, R3.4
    """
    daemon = await daemon_factory([SLOW_WRITE, text_step("done")], "--ws-ping-interval", "1")
    driver = await daemon.unix()
    agent = await create_agent(driver, project, headless_policy="deny")
    await attach(driver, agent, role="observer")
    loop = asyncio.get_running_loop()
    live_session, live = await _raw_ws(daemon, autoping=False)  # pongs by hand, counting pings
    silent_session, silent = await _raw_ws(daemon, autoping=False)
    live_frames: list = []
    pinged = asyncio.Condition()
    answered = asyncio.Event()

    async def keep_reading():
        while (msg := await live.receive()).type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.PING):
            if msg.type == aiohttp.WSMsgType.PING:
                await live.pong(msg.data)
                async with pinged:
                    live_frames.append("ping")
                    pinged.notify_all()
                continue
            live_frames.append(orjson.loads(msg.data))
            if live_frames[-1].get("id") == "still-here":
                answered.set()
        live_frames.append(msg.type)
        answered.set()

    live_reader = asyncio.ensure_future(keep_reading())
    try:
        await silent.send_str(orjson.dumps({"type": "agent.attach", "id": "s", "agent_id": agent}).decode())
        started = loop.time()
        kinds, texts = [], []
        while True:
            msg = await silent.receive(timeout=5)
            kinds.append(msg.type)
            if msg.type == aiohttp.WSMsgType.TEXT:
                texts.append(orjson.loads(msg.data))
            if msg.type in CLOSED_TYPES:
                break
        dropped_after = loop.time() - started
        attached = next(m for m in texts if m.get("id") == "s")
        assert attached["success"] is True, attached
        assert any(m["type"] == "sync" for m in texts), "it was attached before it went silent"
        assert aiohttp.WSMsgType.PING in kinds, kinds
        assert dropped_after > 0.9, dropped_after  # not before its pong was due
        async with pinged:  # meanwhile the live client answered three pings and is still served
            await asyncio.wait_for(pinged.wait_for(lambda: live_frames.count("ping") >= 3), 15)
        await live.send_str('{"type":"agent.list","id":"still-here"}')
        await asyncio.wait_for(answered.wait(), 15)
        assert not live.closed
        assert not live_reader.done(), live_frames[-1:]
        resp = next(m for m in live_frames if isinstance(m, dict) and m.get("id") == "still-here")
        assert resp["success"] is True
    finally:
        live_reader.cancel()
        await live_session.close()
        await silent_session.close()
    await driver.send({"type": "prompt", "agent_id": agent, "message": "write"})
    resolved = (await driver.until_type("permission_resolved", timeout=15))[-1]
    assert (resolved["decision"], resolved.get("source")) == ("deny", "headless"), resolved
    await driver.idle(agent_id=agent)
    assert not (project / "made.txt").exists()


# --- §2.3: encoding and size ------------------------------------------------------------------------


async def test_multi_megabyte_non_ascii_messages_arrive_intact(daemon_factory, transport, project):
    """A 3 MB prompt goes in and a 3 MB answer comes out whole over each transport, with non-ASCII
    text (accents, CJK, emoji, U+2028/U+2029, LF) intact.

    Covers: R2.3.2, R2.3.1, R2.1.3
    """
    unit = "ünï ✓ 漢字 🚀 \u2028\u2029\n0123456789abcdef"
    answer = "answer " + unit * (3_000_000 // len(unit.encode()) + 1)
    prompt = "prompt " + unit * (3_000_000 // len(unit.encode()) + 1)
    assert len(answer.encode()) > 3_000_000
    assert len(prompt.encode()) > 3_000_000
    step = {"blocks": [{"type": "text", "text": answer}], "chunk": len(answer)}
    daemon = await daemon_factory([step], record=False)
    client = await connect(daemon, transport)
    agent = await create_agent(client, project)
    await attach(client, agent)
    resp, _ = await client.request({"type": "prompt", "id": "big", "agent_id": agent, "message": prompt})
    assert resp["success"] is True, resp
    read = await client.until(lambda m: m["type"] == "turn_end", timeout=60)
    completes = [m["message"] for m in read if m["type"] == "message_complete"]
    user = next(m for m in completes if m["role"] == "user")
    assistant = next(m for m in completes if m["role"] == "assistant")
    assert user["content"][0]["text"] == prompt
    assert assistant["content"][0]["text"] == answer
    assert "".join(m.get("text_delta", "") for m in read if m["type"] == "message_delta") == answer


# --- §4.1 loopback handshake ------------------------------------------------------------------------


@SHARED
async def test_ws_upgrade_with_the_exact_loopback_host_and_origin_is_accepted(daemon):
    """The one accepted handshake: Host exactly 127.0.0.1:<port> and Origin exactly
    http://127.0.0.1:<port> (header names in any case, optional whitespace around values); the
    upgrade succeeds and hello follows. Forwarded headers naming other hosts, schemes or clients
    change nothing, because none is honored in loopback mode.

    Covers: R4.1.1.2, R4.1.1.3, R4.1.1.4, R4.1.0.16
    """
    port = daemon.port
    host, origin = f"Host: 127.0.0.1:{port}", f"Origin: {_origin(port)}"
    cases = [
        ("plain", [host, origin]),
        ("lowercase names", [f"host: 127.0.0.1:{port}", f"origin: {_origin(port)}"]),
        ("whitespace", [f"Host:   127.0.0.1:{port}  ", f"Origin:  {_origin(port)} "]),
        ("x-forwarded-host", [host, origin, "X-Forwarded-Host: evil.example"]),
        ("x-forwarded-proto", [host, origin, "X-Forwarded-Proto: https"]),
        ("x-forwarded-for", [host, origin, "X-Forwarded-For: 203.0.113.7"]),
        ("forwarded", [host, origin, "Forwarded: for=203.0.113.7;host=evil.example;proto=https"]),
    ]
    statuses = {}
    for label, lines in cases:
        ticket = f"Sec-WebSocket-Protocol: shard.v1, ticket.{await daemon.ticket()}"
        statuses[label] = (await _upgrade(port, [*lines, ticket]))[0]
    assert statuses == {label: 101 for label, _ in cases}
    ticket = f"Sec-WebSocket-Protocol: ticket.{await daemon.ticket()}"
    _, _, rest = await _upgrade(port, [host, origin, ticket])
    assert rest[0] == 0x81, rest[:2]  # FIN + text frame
    assert b'"type":"hello"' in rest


@SHARED
async def test_ws_upgrade_without_origin_is_400(daemon):
    """An upgrade with no Origin header is refused with 400 (also through aiohttp), and an empty
    Origin is no better.

    Covers: R4.1.0.14
    """
    port = daemon.port
    host = f"Host: 127.0.0.1:{port}"
    assert await _statuses(port, [("absent", [host]), ("empty", [host, "Origin:"])]) == {
        "absent": 400,
        "empty": 400,
    }
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await daemon.ws(origin=None)
    assert refused.value.status == 400


@SHARED
async def test_ws_upgrade_with_a_foreign_origin_is_400(daemon):
    """Only the exact serialized http://127.0.0.1:<port> is allowed: another host, localhost, ::1,
    another port, no port, https, a path, a suffix match, 'null' are each refused with 400.

    Covers: R4.1.0.15, R4.1.1.3
    """
    port = daemon.port
    host = f"Host: 127.0.0.1:{port}"
    origins = [
        "http://evil.example",
        f"http://evil.example:{port}",
        f"http://localhost:{port}",
        f"http://[::1]:{port}",
        f"http://127.1:{port}",
        f"http://127.0.0.1:{port + 1 if port < 65535 else port - 1}",
        "http://127.0.0.1",
        f"https://127.0.0.1:{port}",
        f"ws://127.0.0.1:{port}",
        f"http://127.0.0.1:{port}/",
        f"http://127.0.0.1:{port}.evil.example",
        f"http://evil.example/http://127.0.0.1:{port}",
        "null",
    ]
    statuses = await _statuses(port, [(o, [host, f"Origin: {o}"]) for o in origins])
    assert statuses == {o: 400 for o in origins}


@SHARED
async def test_ws_upgrade_host_must_be_exactly_127_0_0_1_and_port(daemon):
    """Host is compared exactly, port included: a wrong or missing port, alternate loopback
    spellings (localhost, [::1], 127.1, decimal, hex, trailing dot, upper case), a suffix match and
    DNS-rebinding aliases are each refused with 400, as are a missing Host and an empty one.

    Covers: R4.1.0.16, R4.1.0.17, R4.1.0.18, R4.1.0.19, R4.1.1.2
    """
    port = daemon.port
    origin = f"Origin: {_origin(port)}"
    other_port = port + 1 if port < 65535 else port - 1
    hosts = {
        "wrong port": f"127.0.0.1:{other_port}",
        "no port": "127.0.0.1",
        "localhost": f"localhost:{port}",
        "LOCALHOST": f"LOCALHOST:{port}",
        "ipv6 loopback": f"[::1]:{port}",
        "v4-mapped": f"[::ffff:127.0.0.1]:{port}",
        "short form": f"127.1:{port}",
        "decimal": f"2130706433:{port}",
        "hex": f"0x7f.0.0.1:{port}",
        "trailing dot": f"127.0.0.1.:{port}",
        "other loopback": f"127.0.0.2:{port}",
        "suffix match": f"127.0.0.1:{port}.evil.com",
        "prefix match": f"evil.127.0.0.1:{port}",
        "rebinding alias": f"evil.example:{port}",
        "rebinding service": f"127.0.0.1.nip.io:{port}",
        "userinfo": f"127.0.0.1:{port}@evil.example",
        "empty": "",
    }
    cases = [(label, [f"Host: {value}", origin]) for label, value in hosts.items()]
    cases.append(("missing", [origin]))
    statuses = await _statuses(port, cases)
    assert statuses == {label: 400 for label, _ in cases}


@SHARED
async def test_ws_forwarded_headers_do_not_rescue_a_wrong_host_or_origin(daemon):
    """No forwarded header is honored in loopback mode: X-Forwarded-Host / Forwarded naming the
    right host do not make a wrong Host acceptable, and X-Forwarded-Proto / X-Forwarded-Host do not
    make a foreign Origin acceptable.

    Covers: R4.1.1.4, R4.1.0.16, R4.1.0.15
    """
    port = daemon.port
    right = f"127.0.0.1:{port}"
    origin = f"Origin: {_origin(port)}"
    cases = [
        ("xfh on evil host", [f"Host: evil.example:{port}", origin, f"X-Forwarded-Host: {right}"]),
        ("xfh on localhost", [f"Host: localhost:{port}", origin, f"X-Forwarded-Host: {right}"]),
        ("forwarded on evil host", [f"Host: evil.example:{port}", origin, f"Forwarded: host={right}"]),
        ("forwarded quoted", [f"Host: evil.example:{port}", origin, f'Forwarded: host="{right}"']),
        ("x-host", [f"Host: evil.example:{port}", origin, f"X-Host: {right}"]),
        ("x-original-host", [f"Host: evil.example:{port}", origin, f"X-Original-Host: {right}"]),
        (
            "https origin + xfp",
            [f"Host: {right}", f"Origin: https://{right}", "X-Forwarded-Proto: https"],
        ),
        (
            "foreign origin + xfh",
            [f"Host: {right}", "Origin: http://evil.example", "X-Forwarded-Host: evil.example"],
        ),
    ]
    statuses = await _statuses(port, cases)
    assert statuses == {label: 400 for label, _ in cases}


@SHARED
async def test_ws_upgrade_with_two_origin_headers_is_400(daemon):
    """An upgrade carrying two Origin headers has no single exact Origin (combined, its value is
    'a, b', which is no allowed origin): it is refused with 400 whichever one comes first, as a
    second Host header already is.

    Covers: R4.1.0.15, R4.1.0.16
    """
    port = daemon.port
    host, good, evil = f"Host: 127.0.0.1:{port}", f"Origin: {_origin(port)}", "Origin: http://evil.example"
    cases = [
        ("evil first", [host, evil, good]),
        ("good first", [host, good, evil]),
        ("two hosts", [host, f"Host: evil.example:{port}", good]),
    ]
    assert await _statuses(port, cases) == {label: 400 for label, _ in cases}


def _listeners(port):
    """(table, local address) of every listening TCP socket on ``port`` in this network namespace."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except FileNotFoundError:
            continue
        for row in rows:
            fields = row.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if fields[3] == "0A" and int(port_hex, 16) == port:
                found.append((table, address))
    return found


@SHARED
async def test_daemon_binds_127_0_0_1_only(daemon):
    """With no remote flags the WebSocket listens on 127.0.0.1:<port> (the port in daemon.json)
    and nowhere else: one listening socket, local address 127.0.0.1, nothing on IPv6, and another
    loopback address (127.0.0.2) is refused.

    Covers: R4.1.1.1
    """
    info = orjson.loads((daemon.home / "daemon.json").read_bytes())
    assert info["port"] == daemon.port > 0
    assert _listeners(daemon.port) == [("/proc/net/tcp", "0100007F")]
    _, writer = await asyncio.open_connection("127.0.0.1", daemon.port)
    writer.close()
    try:
        _, writer = await asyncio.open_connection("127.0.0.2", daemon.port)
    except ConnectionRefusedError:
        pass
    else:
        writer.close()
        raise AssertionError("the daemon accepted a connection on 127.0.0.2")


# --- §4.2: the unix socket's permissions ----------------------------------------------------------


@pytest.mark.no_local_runtimes
async def test_unix_socket_is_0600_and_owned_by_the_user(daemon_factory, home):
    """$SHARD_HOME/daemon.sock is a socket with mode 0600 owned by the current user, even when the
    daemon was started under a permissive umask.

    Covers: R4.2.2
    """
    old = os.umask(0)
    try:
        daemon = await daemon_factory([text_step("hi")])
    finally:
        os.umask(old)
    sock = home / "daemon.sock"
    assert daemon.socket == sock
    st = os.lstat(sock)
    assert stat.S_ISSOCK(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode)
    assert st.st_uid == os.getuid()
    client = await daemon.unix()  # the owner can still connect
    resp, _ = await client.request({"type": "agent.list", "id": "l"})
    assert resp["success"] is True
