"""The terminal client (``shard attach``): a Textual app over the SDK, the terminal twin of the web
client. Textual is imported only here, so only ``shard attach`` loads it.

* :mod:`.view` / :mod:`.roster` — pure folds of protocol events into what is shown (no Textual);
* :mod:`.render` — RenderDescriptors and conversation entries as rich text;
* :mod:`.app`, :mod:`.agents`, :mod:`.conversation`, :mod:`.dialogs`, :mod:`.pickers` — the widgets.
"""
