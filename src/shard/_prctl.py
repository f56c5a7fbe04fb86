"""Linux's ``prctl(2)`` through ctypes, looked up once, when first asked (stdlib only: the secrets
module uses it before ``hello``). None elsewhere than Linux."""

from __future__ import annotations

import functools
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def prctl() -> Callable[..., int] | None:
    try:
        import ctypes

        call: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return call
