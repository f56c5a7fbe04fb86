"""The ``openai`` provider: Chat Completions, streamed, through the official SDK, against any
OpenAI-compatible ``base_url`` (OpenAI, Ollama, vLLM, llama.cpp server, OpenRouter).

Request side (:func:`build_params`, pure): calls and results paired first (``pairing.py``: no call
without its result), then the system prompt, user text and images (``image_url`` data
URLs), assistant text with ``tool_calls``, tool results as ``role: "tool"`` messages (errors prefixed
so the model knows), ``reasoning_effort`` for models with reasoning levels, and
``stream_options.include_usage``. Thinking from other providers is not sent back.

Response side (:class:`OpenAIFold`, pure): chunks fold into normalized events. Servers differ, so the
fold assumes little: a tool-call delta may lack ``index`` or ``id`` (a stable key is made up), parallel
calls may interleave (each argument fragment is tagged with its call), the name may come late, the
usage chunk and ``finish_reason`` may never come (the stop is inferred), reasoning text may arrive as
``reasoning_content`` or ``reasoning``. Some servers (llama.cpp's, LiteLLM proxies) may answer the
streaming request with ``200 application/json`` and the whole ``chat.completion``: it is folded as
the one chunk that says the same (:func:`completion_chunk`). A reply with no text, no thinking and
no tool call — usage or not — is a retryable ProviderError saying what came instead, never an empty
assistant message (``replies.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson

from shard._trace import mark
from shard.agent.catalog import ModelEntry
from shard.agent.providers import chat_http, sse
from shard.agent.providers.base import (
    ProviderEvent,
    ProviderRequest,
    Stop,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ToolCallArgs,
    ToolCallStart,
    UsageReport,
)
from shard.agent.providers.pairing import paired
from shard.agent.providers.replies import attrs, cut_before_anything, empty_reply, is_json, whole_reply
from shard.agent.providers.sdk import load, sdk_for
from shard.agent.providers.sdk_provider import SdkProvider
from shard.protocol.content import (
    ErrorContent,
    ImageBlock,
    JsonContent,
    Message,
    TextBlock,
    TextContent,
    ToolCallBlock,
    ToolResultBlock,
)
from shard.protocol.ids import new_id

_FINISH: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


class OpenAIProvider(SdkProvider):
    sdk_module = "openai"
    client_class = "AsyncOpenAI"
    no_key = chat_http.NO_KEY  # local servers (Ollama, llama.cpp, vLLM) take no key; the SDK wants one
    _direct: chat_http.ChatHttp | None = None  # a plain-http server: no SDK (chat_http.py)

    def __init__(self, entry: ModelEntry) -> None:
        super().__init__(entry)
        if sdk_for(entry) is None:
            assert entry.provider.base_url is not None
            self._direct = chat_http.ChatHttp(entry.provider.base_url, self._key)

    async def events(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        params = build_params(request, self.entry)
        fold = OpenAIFold(max_tokens=params.get("max_completion_tokens"))
        if self._direct is not None:
            async for out in self._direct_events(self._direct, params, fold):
                yield out
            return
        client = await self.client()
        sdk = await load(self.sdk_module)  # loaded by now: this only looks it up
        chat = sdk.types.chat
        # Not ``client.chat.completions.create(**params)``: it runs the parameters through the SDK's
        # TypedDict transform, 7 ms a call for ten exchanges with tools and growing with the
        # conversation, to turn Python values into JSON; these are JSON already.
        mark("provider: request")
        stream = await client.post(
            "/chat/completions",
            body=params,
            cast_to=chat.ChatCompletion,
            stream=True,
            stream_cls=sdk.AsyncStream[chat.ChatCompletionChunk],
            options={"security": {"bearer_auth": True}},  # what create() asks for: the key as bearer
        )
        async with stream:
            content_type = stream.response.headers.get("content-type", "")
            if is_json(content_type):
                # llama.cpp's server and LiteLLM proxies may answer a streaming request with the whole
                # chat.completion; the SDK would read it as an SSE stream of zero events.
                for out in self._whole(fold, await stream.response.aread()):
                    yield out
            else:
                async for chunk in stream:
                    for out in fold.feed(chunk):
                        yield out
        for out in self._end(fold, content_type):
            yield out

    async def _direct_events(
        self, http: chat_http.ChatHttp, params: dict[str, Any], fold: OpenAIFold
    ) -> AsyncIterator[ProviderEvent]:
        """The same request and the same reading as the SDK path above, without the SDK."""
        mark("provider: request")
        response = await http.post("/chat/completions", params)
        try:
            content_type = response.headers.get("content-type", "")
            if is_json(content_type):
                for out in self._whole(fold, await response.aread()):
                    yield out
            else:
                async for data in sse.events(response):
                    for out in fold.feed(attrs(data)):
                        yield out
        finally:
            http.release(response)
        for out in self._end(fold, content_type):
            yield out

    def _whole(self, fold: OpenAIFold, body: bytes) -> list[ProviderEvent]:
        whole = whole_reply(self.name, body, self._key, kind="a chat completion", content="choices")
        return fold.feed(completion_chunk(whole))

    def _end(self, fold: OpenAIFold, content_type: str) -> list[ProviderEvent]:
        """The events that close a reply, or the error an empty one is."""
        if fold.empty and fold.finish_reason == "length":
            raise cut_before_anything(self.name, self.entry.id, fold.max_tokens)
        if fold.empty:  # a server's (or a proxy's) failure, not an answer
            what = _nothing(fold, content_type or "no content-type", whole=is_json(content_type))
            raise empty_reply(self.name, what)
        return fold.finish()


def _nothing(fold: OpenAIFold, content_type: str, *, whole: bool) -> str:
    """What came instead of a reply."""
    finish = f"finish_reason {fold.finish_reason!r}" if fold.finish_reason else "no finish_reason"
    usage = "usage" if fold.usage is not None else "no usage"
    if whole:
        return f"a chat.completion ({content_type}) with an empty message, {finish} and {usage}"
    if fold.chunks == 0:
        return f"a stream ({content_type}) with no chunks"
    chunks = f"{fold.chunks} chunk{'s' if fold.chunks > 1 else ''}"
    return f"a stream ({content_type}) of {chunks} with {finish} and {usage}"


def completion_chunk(completion: dict[str, Any]) -> Any:
    """A non-streamed ``chat.completion`` as the one chunk that carries the same reply (pure): each
    choice's ``message`` becomes its ``delta``, so :class:`OpenAIFold` reads text, reasoning, tool
    calls (whole arguments, no ``index``), ``finish_reason`` and usage the way it reads a stream."""
    choices = [
        {**c, "delta": c.get("message") or {}} for c in completion.get("choices") or [] if isinstance(c, dict)
    ]
    return attrs({**completion, "choices": choices})


def _effort(entry: ModelEntry, level: str | None) -> str | None:
    for lv in entry.model.reasoning_levels:
        if lv.id == level:
            return lv.effort or lv.id
    return None


def build_params(request: ProviderRequest, entry: ModelEntry) -> dict[str, Any]:
    """The Chat Completions request body (pure): ``chat.completions.create``'s keyword arguments."""
    params: dict[str, Any] = {
        "model": request.model,
        "messages": convert_messages(request.system, request.messages),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            }
            for t in request.tools
        ]
    effort = _effort(entry, request.reasoning)
    if effort is not None:
        params["reasoning_effort"] = effort
    if limit := request.max_output_tokens or entry.model.max_output_tokens:
        params["max_completion_tokens"] = limit
    return params


def convert_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    messages = paired(messages)  # every tool call answered before the next message (else a 400)
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    pending_images: list[dict[str, Any]] = []

    def flush_images() -> None:
        # after the run of tool messages (which must directly follow their assistant message)
        if pending_images:
            out.append({"role": "user", "content": list(pending_images)})
            pending_images.clear()

    for message in messages:
        if not (message.role == "user" and all(isinstance(b, ToolResultBlock) for b in message.content)):
            flush_images()
        if message.role == "assistant":
            text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
            calls = [
                {
                    "id": b.id,
                    "type": "function",
                    "function": {"name": b.name, "arguments": orjson.dumps(b.args).decode()},
                }
                for b in message.content
                if isinstance(b, ToolCallBlock)
            ]
            if not text and not calls:
                continue
            turn: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                turn["tool_calls"] = calls
            out.append(turn)
            continue
        parts: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                out.append(
                    {"role": "tool", "tool_call_id": block.tool_call_id, "content": _result_text(block)}
                )
                # a tool message carries text only: its pictures follow as a user message
                images = (block.model_extra or {}).get("images") or []
                if images:
                    pending_images.append(
                        {"type": "text", "text": f"Images from tool call {block.tool_call_id}:"}
                    )
                    pending_images.extend(
                        {
                            "type": "image_url",
                            "image_url": {"url": f"data:{i['mime_type']};base64,{i['data']}"},
                        }
                        for i in images
                    )
            elif isinstance(block, TextBlock) and block.text:
                parts.append({"type": "text", "text": block.text})
            elif isinstance(block, ImageBlock):
                url = f"data:{block.mime_type};base64,{block.data}"
                parts.append({"type": "image_url", "image_url": {"url": url}})
        if parts:
            only_text = all(p["type"] == "text" for p in parts)
            content: Any = "\n\n".join(p["text"] for p in parts) if only_text else parts
            out.append({"role": "user", "content": content})
    flush_images()
    return out


def _result_text(block: ToolResultBlock) -> str:
    content = block.content
    if isinstance(content, TextContent):
        text = content.text or "(no output)"
    elif isinstance(content, ErrorContent):
        text = content.message
    else:
        assert isinstance(content, JsonContent)
        text = orjson.dumps(content.value).decode()
    return f"Error: {text}" if block.is_error else text


class _Call:
    __slots__ = ("buffered", "id", "name", "started")

    def __init__(self, call_id: str | None) -> None:
        self.id = call_id
        self.name: str | None = None
        self.started = False
        self.buffered: list[str] = []


class OpenAIFold:
    """Chat Completions chunks → normalized events. Works on the SDK's chunk objects."""

    def __init__(self, max_tokens: int | None = None) -> None:
        self.max_tokens = max_tokens  # what the request asked for: named when the reply is cut at it
        self.chunks = 0
        self._content = False
        self._calls: dict[Any, _Call] = {}
        self._last_key: Any = None
        self._finish: str | None = None
        self._usage: UsageReport | None = None

    @property
    def empty(self) -> bool:
        """No text, no thinking and no tool call: nothing that makes a reply, whatever else came."""
        return not (self._content or self._calls)

    @property
    def finish_reason(self) -> str | None:
        return self._finish

    @property
    def usage(self) -> UsageReport | None:
        return self._usage

    def feed(self, chunk: Any) -> list[ProviderEvent]:
        out: list[ProviderEvent] = []
        self.chunks += 1
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self._usage = _usage(usage)
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) not in (0, None):
                continue  # n > 1 is never requested; ignore stray alternatives
            delta = getattr(choice, "delta", None)
            if delta is not None:
                reasoning = _extra(delta, "reasoning_content") or _extra(delta, "reasoning")
                if isinstance(reasoning, str) and reasoning:
                    out.append(ThinkingDelta(reasoning))
                content = getattr(delta, "content", None)
                if content:
                    out.append(TextDelta(content))
                for tc in getattr(delta, "tool_calls", None) or []:
                    out.extend(self._tool_delta(tc))
            if getattr(choice, "finish_reason", None):
                self._finish = choice.finish_reason
        self._content = self._content or bool(out)
        return out

    def _tool_delta(self, tc: Any) -> list[ProviderEvent]:
        index = getattr(tc, "index", None)
        call_id = getattr(tc, "id", None) or None
        fn = getattr(tc, "function", None)
        name = getattr(fn, "name", None) if fn is not None else None
        args = getattr(fn, "arguments", None) if fn is not None else None
        if index is not None:
            key: Any = ("index", index)
        elif call_id is not None:
            key = ("id", call_id)
        elif self._last_key is not None and not name:
            key = self._last_key
        else:
            key = ("anon", len(self._calls))
        call = self._calls.get(key)
        if call is None:
            call = self._calls[key] = _Call(call_id)
        self._last_key = key
        if call_id and not call.id:
            call.id = call_id
        if name and not call.name:
            call.name = name
        out: list[ProviderEvent] = []
        if not call.started and call.name:
            out.extend(self._start(call))
        if args:
            if call.started:
                out.append(ToolCallArgs(args, call_id=call.id))
            else:
                call.buffered.append(args)  # no name yet: hold the arguments until the call can start
        return out

    def _start(self, call: _Call) -> list[ProviderEvent]:
        call.id = call.id or new_id("tc")
        call.started = True
        out: list[ProviderEvent] = [ToolCallStart(id=call.id, name=call.name or "")]
        out.extend(ToolCallArgs(piece, call_id=call.id) for piece in call.buffered)
        call.buffered.clear()
        return out

    def finish(self) -> list[ProviderEvent]:
        """At the end of the stream: start calls still waiting for a name, report usage and stop."""
        out: list[ProviderEvent] = []
        for call in self._calls.values():
            if not call.started:
                out.extend(self._start(call))
        if self._usage is not None:
            out.append(self._usage)
        if self._finish is not None:
            reason = _FINISH.get(self._finish, "other")
        else:
            reason = "tool_use" if self._calls else "end_turn"
        out.append(Stop(reason, self.max_tokens if reason == "max_tokens" else None))
        return out


def _extra(obj: Any, name: str) -> Any:
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None) or {}
        value = extra.get(name)
    return value


def _usage(usage: Any) -> UsageReport:
    prompt = getattr(usage, "prompt_tokens", None) or 0
    completion = getattr(usage, "completion_tokens", None) or 0
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return UsageReport(
        input=prompt - (cached or 0),
        output=completion,
        cache_read=cached,
        context_tokens=prompt + completion,
    )
