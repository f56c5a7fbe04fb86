"""``shard run``'s closing line gives token totals with their units (issue 26 item 10): "253M
tokens in, 1.05k out", never a bare 253,437,200."""

from __future__ import annotations

import pytest

from shard.cli.run_output import TextPrinter
from shard.protocol.events import TurnEnd


def test_the_summary_line_says_tokens_with_units(capsys: pytest.CaptureFixture[str]) -> None:
    printer = TextPrinter(lambda: None)
    usage = {"input": 253_437_200, "output": 1049, "cost": 1.5}
    printer.show(TurnEnd.model_validate({"type": "turn_end", "turn_id": "t", "usage": usage}))
    printer.finish("sess-1")
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == "[253M tokens in, 1.05k out · $1.5000 · session sess-1]"
