"""A turn's token accounting: each provider call's usage (with its cost from the catalog's prices),
summed over the turn for ``turn_end``.

``input`` is what the model read fresh: tokens it read from its cache are ``cache_read`` and tokens
written to it ``cache_write`` (both provider kinds report them so: ``providers/openai.py`` takes the
cached tokens out of ``prompt_tokens``). Every input token is ``input + cache_read + cache_write``
(``shard.protocol.figures``): what a person is told was read."""

from __future__ import annotations

from shard.agent.catalog import ModelEntry, cost
from shard.agent.providers.base import UsageReport
from shard.agent.providers.window import ContextWindow
from shard.protocol.agent_events import UsageEvent
from shard.protocol.agents import Usage


class TurnUsage:
    def __init__(self) -> None:
        self.total: Usage | None = None

    def add(self, report: UsageReport, entry: ModelEntry) -> Usage:
        """Count one call's usage into the turn's; returns the call's own (for its ``usage`` event)."""
        call = Usage(input=report.input, output=report.output, model=entry.id)
        for name in ("cache_read", "cache_write", "context_tokens"):
            value = getattr(report, name)
            if value is not None:
                setattr(call, name, value)
        price = cost(entry.model, report.input, report.output, report.cache_read, report.cache_write)
        if price is not None:
            call.cost = price
        if self.total is None:
            self.total = call.model_copy()
        else:
            t = self.total
            t.input += call.input
            t.output += call.output
            for name in ("cache_read", "cache_write", "cost"):
                value = getattr(call, name)
                if value is not None:
                    setattr(t, name, round((getattr(t, name) or 0) + value, 8))
            if call.context_tokens is not None:
                t.context_tokens = call.context_tokens
            t.model = entry.id
        return call


def usage_dict(report: UsageReport) -> dict[str, int]:
    """A call's usage as the session entry of its message records it."""
    return {k: v for k in report.__slots__ if (v := getattr(report, k)) is not None}


def usage_event(call: Usage, window: ContextWindow | None) -> UsageEvent:
    """A call's ``usage`` event, with the window its ``context_tokens`` are measured against."""
    event = UsageEvent(**call.to_wire())
    if window is not None:
        event.context_window, event.context_window_source = window.tokens, window.source
    return event
