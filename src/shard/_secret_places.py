"""Where keys and credentials live in a home (relative to ``$HOME``): hidden inside the bash sandbox
(``shard.agent.sandbox.bwrap``) and never shown by the daemon's read-only file tree
(``shard.daemon.files``) — one list, below both layers, so the two cannot disagree."""

from __future__ import annotations

HOME_SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".config/gh",
    ".local/share/keyrings",
    ".password-store",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".shard",
)
