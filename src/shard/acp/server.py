"""The agent side of ACP: what an editor calls (initialize, session/new, session/load,
session/prompt, session/cancel, session/set_mode, session/set_config_option), answered with Shard
agents from a :class:`~shard.acp.backends.Backend`.

Errors of the Shard client are translated once, at this boundary (:func:`_translated`), into
JSON-RPC errors with one clear message — never a traceback in the editor's log.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from shard.acp.backends import Backend
from shard.acp.mapping import PromptBlock, prompt_input
from shard.acp.options import MODEL_OPTION, mode_state, model_option
from shard.acp.session import AcpSession
from shard.client import CommandError, ShardClientError

log = logging.getLogger("shard.acp")
ConfigOption = SessionConfigOptionSelect | SessionConfigOptionBoolean


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except CommandError as exc:
        if exc.code in ("NOT_FOUND", "INVALID_REQUEST", "SESSION_CORRUPT", "CONFLICT"):
            raise RequestError.invalid_params({"message": str(exc), "code": exc.code}) from None
        raise RequestError.internal_error({"message": str(exc), "code": exc.code}) from None
    except ShardClientError as exc:
        raise RequestError.internal_error({"message": str(exc)}) from None


class ShardAcpAgent:
    """One per ``shard acp`` process; ``cwd`` (``--cwd``) overrides the directory the editor sends."""

    def __init__(self, backend: Backend, *, version: str, cwd: str | None = None) -> None:
        self.backend = backend
        self.version = version
        self.cwd = cwd
        self.sessions: dict[str, AcpSession] = {}
        self._client: Client | None = None

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
            ),
            agent_info=Implementation(name="shard", title="Shard", version=self.version),
        )

    async def authenticate(self, method_id: str, **_: Any) -> None:
        return None  # no methods are offered: providers' keys come from Shard's own config

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        session = await self._open(cwd, None)
        modes, models = await self._controls(session)
        session.start()
        return NewSessionResponse(session_id=session.id, modes=modes, config_options=models)

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> LoadSessionResponse:
        known = self.sessions.get(session_id)
        if known is not None:  # loaded again by the same editor: start over from the agent's state
            self.sessions.pop(session_id)
            await known.close()
        session = await self._open(cwd, session_id)
        modes, models = await self._controls(session)
        await session.replay()
        session.start()
        return LoadSessionResponse(modes=modes, config_options=models)

    async def prompt(self, session_id: str, prompt: list[PromptBlock], **_: Any) -> PromptResponse:
        session = self._session(session_id)
        text, images = prompt_input(prompt)
        if not text and not images:
            raise RequestError.invalid_params({"message": "the prompt has no text or image"})
        with _translated():
            return await session.prompt(text, images)

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            return  # a notification: nobody to tell
        try:
            await session.cancel()
        except ShardClientError as exc:
            log.warning("cancel %s: %s", session_id, exc)

    async def set_session_mode(self, mode_id: str, session_id: str, **_: Any) -> SetSessionModeResponse:
        session = self._session(session_id)
        with _translated():
            await session.agent.set_mode(mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if config_id != MODEL_OPTION or session.models is None or not isinstance(value, str):
            raise RequestError.invalid_params({"message": f"no option {config_id!r} takes {value!r}"})
        with _translated():
            result = await session.agent.set_model(value)
        session.models = session.models.model_copy(update={"current_value": result.active.id})
        return SetSessionConfigOptionResponse(config_options=[session.models])

    async def close(self) -> None:
        for session in list(self.sessions.values()):
            await session.close()
        self.sessions.clear()
        await self.backend.close()

    # --- helpers ------------------------------------------------------------------------------

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"no session {session_id!r} here (load it first)"})
        return session

    async def _open(self, cwd: str, session_id: str | None) -> AcpSession:
        if self._client is None:
            raise RequestError.internal_error({"message": "no client connection"})
        where = self.cwd or cwd
        if not os.path.isabs(where) or not os.path.isdir(where):  # noqa: ASYNC240 (one stat, at open)
            why = f"cwd {where!r} is not an existing absolute directory"
            raise RequestError.invalid_params({"message": why})
        with _translated():
            opened = await self.backend.open(where, session_id)
        session = AcpSession(opened, self._client, where)
        self.sessions[session.id] = session
        return session

    async def _controls(
        self, session: AcpSession
    ) -> tuple[SessionModeState | None, list[ConfigOption] | None]:
        """Modes and models, each offered when the runtime advertises its catalog (R9.1.10)."""
        agent = session.agent
        modes = None
        with _translated():
            if agent.supports("mode-catalog"):
                modes = mode_state(await agent.list_modes())
            if agent.supports("model-catalog") and agent.supports("model-switch"):
                session.models = model_option(await agent.list_models())
        return modes, [session.models] if session.models is not None else None
