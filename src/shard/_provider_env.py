"""The provider environment: what in a process's environment decides which models a run can pick,
where its provider requests go and with which credentials — and how ``shard run`` and a daemon
compare theirs without either telling the other a value (stdlib only).

A daemon's runtimes call providers with the daemon's environment and the keys it captured when it
started, not the caller's. So before ``shard run`` hands its prompt to a daemon it asks, with
``daemon.compare_env``, whether the daemon's provider environment is its own, and runs in its own
process when it is not (issue 26 item 1): the same command then picks the same model and reaches the
same endpoint whether or not a daemon runs, and no key ever travels to a daemon.

The variables (:func:`is_provider_variable`): every ``ANTHROPIC_*`` and ``OPENAI_*`` (the built-in
providers' keys and endpoints, and whatever else their SDKs read: organization, project, auth token,
custom headers), the keys ``config.toml`` names (``api_key_env``), and the proxy and CA variables the
SDKs' HTTP client reads. An empty value counts as unset, as it does for the catalog.

The comparison: the caller picks a fresh random nonce and sends, for each of its variables,
HMAC-SHA256(nonce, value) — or null when unset; the daemon seals its own values the same way and
answers with the *names* that differ (:class:`Holder`). No value and no reusable digest leaves
either process; a name the daemon cannot vouch for (outside those namespaces and not a key it was
asked to capture at start) counts as different without being looked up, so the question cannot
probe the daemon's other variables.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Iterable, Mapping

NAMESPACES = ("ANTHROPIC_", "OPENAI_")
TRANSPORT = frozenset(
    {
        *(f"{name}_PROXY" for name in ("HTTP", "HTTPS", "ALL", "NO")),
        *(f"{name}_proxy" for name in ("http", "https", "all", "no")),
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
    }
)

Sealed = dict[str, str | None]  # variable -> HMAC-SHA256(nonce, value) in hex, or None when unset


def is_provider_variable(name: str) -> bool:
    """A variable of the provider namespaces or the HTTP transport (config's key names aside)."""
    return name.startswith(NAMESPACES) or name in TRANSPORT


def nonce() -> str:
    return secrets.token_hex(16)


def seal(nonce: str, value: str | None) -> str | None:
    """The value as the comparison sees it: an HMAC under the question's nonce; None when unset."""
    if not value:
        return None
    return hmac.new(nonce.encode(), value.encode(), hashlib.sha256).hexdigest()


def gather(environ: Mapping[str, str], key_names: Iterable[str]) -> dict[str, str | None]:
    """A caller's provider environment: its provider variables, and each key variable config
    names (None when unset)."""
    names = {n for n in environ if is_provider_variable(n)} | set(key_names)
    return {name: environ.get(name) or None for name in names}


def sealed(nonce: str, values: Mapping[str, str | None]) -> Sealed:
    return {name: seal(nonce, value) for name, value in values.items()}


class Holder:
    """The daemon's side: ``lookup`` gives the value a runtime it starts would see for a variable
    (its captured keys, else its environment); ``names`` the variables it holds a value for;
    ``vouched`` the key variables it was asked to capture at start (set or not)."""

    def __init__(
        self,
        lookup: Callable[[str], str | None],
        names: Callable[[], Iterable[str]],
        vouched: Callable[[], Iterable[str]],
    ) -> None:
        self._lookup = lookup
        self._names = names
        self._vouched = vouched

    def differing(self, nonce: str, theirs: Mapping[str, str | None]) -> list[str]:
        """The variables whose value differs between the caller (``theirs``, sealed under
        ``nonce``) and this process, by name; one the caller left out counts if this process holds
        it."""
        vouched = set(self._vouched())
        out = set()
        for name, their_seal in theirs.items():
            if not (is_provider_variable(name) or name in vouched):
                out.add(name)  # not ours to look at: it cannot be vouched for
            elif not _same(seal(nonce, self._lookup(name)), their_seal):
                out.add(name)
        out.update(
            name
            for name in self._names()
            if name not in theirs and (is_provider_variable(name) or name in vouched) and self._lookup(name)
        )
        return sorted(out)


def _same(ours: str | None, theirs: str | None) -> bool:
    if ours is None or theirs is None:
        return ours is theirs
    return hmac.compare_digest(ours, theirs)
