"""Security boundaries (issue 9): each test pins one boundary named in docs/ARCHITECTURE.md's threat model."""
