"""Browser authentication and remote mode (PROTOCOL §4.1, DESIGN §6): pure policy (``config``,
``gate``, ``tickets``), the owner-only store (``store``), the routes and credentials (``auth``) and the
pages they serve (``pages``)."""
