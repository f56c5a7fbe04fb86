"""Compaction: ``compactor`` (the one pipeline every trigger runs), ``tiers`` (when the turn loop asks
for it) and ``budget`` (how a model's window is shared out, pure)."""
