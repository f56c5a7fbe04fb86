"""The provider seam: one interface every LLM backend implements, and the registry that builds them.

SDK-backed providers are imported only when a model of their kind is first used.
"""
