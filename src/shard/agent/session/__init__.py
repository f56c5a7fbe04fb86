"""Session transcripts: the append-only JSONL store and the views built from it."""
