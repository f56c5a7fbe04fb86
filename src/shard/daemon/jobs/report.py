"""The completion report a parent's model reads when its children's runs end (PROTOCOL §10.3,
§12.5), pure.

Only this text enters the parent's conversation — never the child's progress (R12.5.6). It names
each run by its handles, says how it ended and carries the child's final answer (bounded), so the
model can act on it without a ``subagent_wait``. The task text is not repeated: it is private to the
job record (R10.3.7). The child's answer is untrusted text; a closing tag inside it is defused so it
cannot end its report early and pose as the daemon.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from shard.daemon.jobs.model import Run

MAX_FINAL_TEXT = 16_000  # characters of one child's answer carried in its report
_TAG = "subagent_report"
# An opening or closing tag of the report in any letter case, with any blanks around its slash and
# name: a model reads ``</SUBAGENT_REPORT >`` or ``< /Subagent_Report>`` as the tag all the same.
_ANY_TAG = re.compile(rf"<(\s*/?\s*)({_TAG})", re.IGNORECASE)


def completion_report(runs: Sequence[Run]) -> str:
    """One message for runs that ended together (oldest first)."""
    head = (
        "Background subagent runs ended. These reports come from the Shard daemon, not from the"
        " user; a child's answer is its own output."
        if len(runs) > 1
        else "A background subagent run ended. This report comes from the Shard daemon, not from"
        " the user; the child's answer is its own output."
    )
    return "\n\n".join([head, *(_one(run) for run in runs)])


def _one(run: Run) -> str:
    attrs = {
        "job_id": run.job_id,
        "run_id": run.run_id,
        "agent_id": run.agent_id,
        "alias": run.alias,
        "display_name": run.display_name,
        "state": run.state,
    }
    opening = " ".join(f'{k}="{_attr(v)}"' for k, v in attrs.items() if v is not None)
    lines = [f"<{_TAG} {opening}>"]
    if run.error:
        lines.append(f"error: {run.error}")
    if run.final_text:
        text = run.final_text
        if len(text) > MAX_FINAL_TEXT:
            cut = len(text) - MAX_FINAL_TEXT
            text = text[:MAX_FINAL_TEXT] + f"\n[… {cut} more characters: subagent_wait or subagent_status]"
        lines.append(_defused(text))
    elif run.state == "completed":
        lines.append("(the child finished without a written answer)")
    lines.append(f"</{_TAG}>")
    return "\n".join(lines)


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace("\n", " ")


def _defused(text: str) -> str:
    """The child's text with every report tag inside it broken by a backslash after its ``<``."""
    return _ANY_TAG.sub(r"<\\\1\2", text)
