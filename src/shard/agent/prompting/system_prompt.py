"""The system prompt the model gets on every call."""

from __future__ import annotations

import datetime
from pathlib import Path

from shard.agent.modes import Mode


def system_prompt(
    cwd: Path, mode: Mode, tool_names: list[str], instructions: str | None = None, context: str | None = None
) -> str:
    """``context`` (the session's environment and project instructions, ``instructions.py``) comes
    next; ``instructions`` (a delegated child's, from the daemon's --system-prompt-file) last."""
    today = datetime.date.today().isoformat()
    tools = ", ".join(tool_names) if tool_names else "none"
    extra = f"\n\n{context}" if context else ""
    extra += f"\n\n## Instructions for this agent\n\n{instructions}" if instructions else ""
    return (
        "You are Shard, a coding agent working in a user's project through tools.\n"
        f"Working directory: {cwd}\nToday: {today}\nTools: {tools}\n"
        f"Mode: {mode.name} — {mode.description}\n"
        "Paths are relative to the working directory. Read before you change; keep answers short "
        "and concrete; say what you did and what you could not do."
        f"{extra}"
    )
