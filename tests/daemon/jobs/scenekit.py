"""A real daemon, its real children and the protocol over its sockets, for the scenario tests of
background subagents (PROTOCOL §10.3, §12.5): several scripted providers (one script and one
``record`` file each), a parent that speaks ``subagent.*`` and an audit that the private task text
never left the private record.

Every task of a scenario carries :data:`MARKER`. The task may live in ``state.db`` (the private job
record), in a child's own session (where it is the child's prompt; a dashboard attached to the child
shows it) and in what the scripted provider was sent (the child's model input: what a real LLM API
would receive); :meth:`Scene.audit` finds it nowhere else — no other file of SHARD_HOME, nothing the
daemon printed, no message any other test client received, no ``AgentInfo`` — and checks that a
``final_text`` reached only connections of the parent that owns its run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import orjson
from daemon_helpers import attach, connect, create_agent, runtime_pids

from shard.testing import DaemonProcess, text_step
from shard.testing.reader import MessageReader

MARKER = f"PRIVATE-{uuid.uuid4().hex[:12]}"  # in every task, and nowhere it must not be
# Parents run on their own model, so the completion reports that wake them (R10.3.67) are answered
# by its script and recorded apart from what the children's model was sent.
PARENT_PROVIDER = "boss"
PARENT_MODEL = f"{PARENT_PROVIDER}/m"


def child_runtime_pids(home: Path) -> list[int]:
    """Live runtimes of agents that are not parents (children), read from /proc and state.db."""
    db = sqlite3.connect(home / "state.db")
    try:
        children = {
            s for (s,) in db.execute("SELECT session_id FROM agents WHERE parent_agent_id IS NOT NULL")
        }
    finally:
        db.close()
    found = []
    for pid in runtime_pids(home):
        with contextlib.suppress(OSError, ValueError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
            if argv[argv.index("--session") + 1] in children:
                found.append(pid)
    return found


def task(name: str) -> str:
    return f"{MARKER} task of {name}: survey the ledger"


def provider_toml(name: str) -> str:
    """A scripted provider ``name`` playing ``<name>.json``, recording to ``<name>.jsonl``; its one
    model is ``<name>/m``."""
    return (
        f'\n[[providers]]\nname = "{name}"\nkind = "scripted"\nscript = "{name}.json"\n'
        f'record = "{name}.jsonl"\nmodels = [{{ id = "m", context_window = 100000 }}]\n'
    )


def requests_of(home: Path, provider: str, needle: str | None = None) -> list[dict[str, Any]]:
    """What provider ``provider`` was sent (``test``: the default one), oldest first; with
    ``needle``, only the requests whose conversation holds it."""
    path = home / ("requests.jsonl" if provider == "test" else f"{provider}.jsonl")
    if not path.exists():
        return []
    found = [orjson.loads(line) for line in path.read_bytes().splitlines() if line]
    return [r for r in found if needle is None or needle in orjson.dumps(r["messages"]).decode()]


def run_changes(client: MessageReader, run_id: str) -> list[tuple[str | None, str]]:
    """The (previous_state, state) of every ``subagent_run_changed`` of ``run_id`` the client got."""
    return [
        (m.get("previous_state"), m["state"])
        for m in client.seen
        if m.get("type") == "subagent_run_changed" and m["run_id"] == run_id
    ]


def activity(agent_id: str, phase: str) -> Any:
    """A predicate: the ``agent_activity`` of ``agent_id`` entering ``phase``."""
    return lambda m: m.get("type") == "agent_activity" and m["agent_id"] == agent_id and m["phase"] == phase


class Parent:
    """A durable parent agent and the client that speaks for it (one of its job connections)."""

    def __init__(self, client: MessageReader, agent_id: str) -> None:
        self.client = client
        self.agent_id = agent_id
        self._ids = 0

    async def ask(self, kind: str, **fields: Any) -> dict[str, Any]:
        """The response to ``subagent.<kind>`` for this parent."""
        self._ids += 1
        if kind == "create":  # children on the scene's model, not on the parent's (PARENT_MODEL)
            fields.setdefault("model", "test/m")
        message = {"type": f"subagent.{kind}", "id": f"{kind}-{self._ids}", "parent_agent_id": self.agent_id}
        response, _ = await self.client.request({**message, **fields})
        return response

    async def ok(self, kind: str, **fields: Any) -> dict[str, Any]:
        response = await self.ask(kind, **fields)
        assert response["success"] is True, response
        return response["data"]

    async def create(self, strategy: str, *names: str, **fields: Any) -> dict[str, Any]:
        tasks = [{"name": n, "task": task(n)} for n in names]
        return await self.ok("create", tasks=tasks, strategy=strategy, **fields)

    async def heard(self, predicate: Any) -> dict[str, Any]:
        """The first message this client got that satisfies ``predicate``, reading on until one comes."""
        for m in self.client.seen:
            if predicate(m):
                return m
        return (await self.client.until(predicate))[-1]

    async def until_run(self, run_id: str, state: str) -> dict[str, Any]:
        """The run's ``subagent_run_changed`` to ``state`` (read already, or reading on until it comes)."""
        return await self.heard(
            lambda m: (
                m.get("type") == "subagent_run_changed" and m["run_id"] == run_id and m["state"] == state
            )
        )

    async def permission_requests(self, count: int) -> list[dict[str, Any]]:
        """The first ``count`` permission requests shown to this client (waiting for the missing)."""
        while len(got := [m for m in self.client.seen if m.get("type") == "permission_request"]) < count:
            await self.client.until_type("permission_request")
        return got[:count]

    async def answer(self, request: dict[str, Any], decision: str = "allow") -> None:
        message = {
            "type": "permission_response",
            "id": f"answer-{request['request_id']}",
            "agent_id": request["agent_id"],
            "request_id": request["request_id"],
            "decision": decision,
        }
        response, _ = await self.client.request(message)
        assert response["success"] is True, response


class Scene:
    def __init__(self, factory: Any, home: Path, project: Path) -> None:
        self.factory = factory
        self.home = home
        self.project = project
        self.daemons: list[DaemonProcess] = []
        self.owners: dict[int, str] = {}  # id() of a client that speaks for a parent -> that parent
        self.parents: list[str] = []
        self.dashboards: set[int] = set()  # id() of the clients attached to a child (its own session)
        self.records = {home / "requests.jsonl"}  # what the scripted providers were sent

    async def start(
        self,
        steps: list[dict[str, Any]] | None = None,
        *,
        args: tuple[str, ...] = (),
        **scripts: list[dict[str, Any]],
    ) -> DaemonProcess:
        """A daemon (``args``: its flags) whose default model ``test/m`` plays ``steps`` and whose
        model ``<name>/m`` plays ``scripts[name]``; without ``steps``, a restart on the same home."""
        if steps is None:
            daemon = await self.factory(None, *args)
        else:
            self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
            scripts = {PARENT_PROVIDER: [text_step("noted")], **scripts}
            for name, script in scripts.items():
                body = {"steps": script, "loop": name == PARENT_PROVIDER}
                (self.home / f"{name}.json").write_bytes(orjson.dumps(body))
            extra = "".join(provider_toml(name) for name in scripts)
            self.records |= {self.home / f"{name}.jsonl" for name in scripts}
            daemon = await self.factory(steps, *args, extra_toml=extra)
        self.daemons.append(daemon)
        return daemon

    async def parent(
        self, transport: str = "unix", *, interactive: bool = False, agent_id: str | None = None
    ) -> Parent:
        """A client speaking for a parent (a new one unless ``agent_id``); ``interactive``: attached
        to it, the only responder of its hierarchy."""
        client = await connect(self.daemons[-1], transport)
        if agent_id is None:
            agent_id = await create_agent(
                client, self.project, name=f"parent{len(self.parents)}", model=PARENT_MODEL
            )
            self.parents.append(agent_id)
        if interactive:
            await attach(client, agent_id)
        self.owners[id(client)] = agent_id
        return Parent(client, agent_id)

    async def dashboard(self, child_id: str, transport: str = "websocket") -> MessageReader:
        """A client attached to a child: its own session (the task is its prompt) streams to it."""
        client = await connect(self.daemons[-1], transport)
        await attach(client, child_id)
        self.dashboards.add(id(client))
        return client

    async def kill9(self) -> None:
        """SIGKILL the daemon, then the runtimes it orphaned (a later daemon does not adopt them)."""
        daemon = self.daemons[-1]
        before = runtime_pids(self.home)
        daemon.proc.send_signal(signal.SIGKILL)
        await daemon.kill()
        for pid in before:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)

    async def audit(self) -> None:
        """The marker is nowhere it must not be; ``final_text`` reached only parents' connections."""
        daemon = self.daemons[-1]
        lister = await daemon.unix()
        listed, _ = await lister.request({"type": "agent.list", "id": "audit-list"})
        assert listed["success"] is True, listed
        children = [a for a in listed["data"]["agents"] if a.get("parent_agent_id") in self.parents]
        assert children, "the scenario made no child"
        for child in children:  # AgentInfo, one by one too
            status, _ = await lister.request(
                {"type": "agent.status", "id": "audit-s", "agent_id": child["agent_id"]}
            )
            assert MARKER not in orjson.dumps(status).decode()
        assert MARKER not in orjson.dumps(listed).decode()
        await daemon.stop()
        printed = "\n".join(line for d in self.daemons for line in d.output)
        assert MARKER not in printed
        clients = [client for d in self.daemons for client in d.clients]
        owner_of = {  # job -> its parent, as the run events told
            m["job_id"]: m["parent_agent_id"]
            for client in clients
            for m in client.seen
            if m.get("type") == "subagent_run_changed"
        }
        for client in clients:
            received = orjson.dumps(client.seen).decode()
            if id(client) not in self.dashboards:
                assert MARKER not in received, [m for m in client.seen if MARKER in orjson.dumps(m).decode()]
            for run in _with_final_text(client.seen):  # only on the owning parent's connections
                assert self.owners.get(id(client)) == owner_of[run["job_id"]], run
        db = sqlite3.connect(self.home / "state.db")
        rows = db.execute("SELECT session_id FROM agents WHERE parent_agent_id IS NOT NULL").fetchall()
        db.close()
        own = {self.home / "sessions" / session for (session,) in rows}  # the children's sessions
        leaks = [
            str(path)
            for path in self.home.rglob("*")
            if path.is_file()
            and not path.name.startswith("state.db")
            and path not in self.records  # the model input: the scripted "LLM API"
            and not own & set(path.parents)
            and MARKER.encode() in path.read_bytes()
        ]
        assert leaks == []


def _with_final_text(found: Any) -> list[dict[str, Any]]:
    """Every object with a ``final_text`` (a run snapshot) anywhere in ``found``."""
    if isinstance(found, list):
        return [run for item in found for run in _with_final_text(item)]
    if isinstance(found, dict):
        mine = [found] if "final_text" in found else []
        return mine + [run for value in found.values() for run in _with_final_text(value)]
    return []
