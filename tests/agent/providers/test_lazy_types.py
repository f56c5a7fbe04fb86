"""``openai.types`` packages load lazily in a runtime (``providers/lazy_types.py``): every name they
export resolves to the very object the SDK's own eager ``__init__`` files give, while a Chat
Completions client leaves the Responses, Evals and graders models unimported."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from shard.agent.providers.lazy_types import lazy_names

_EAGER = r"""
import importlib, json, pathlib, sys, types
for sdk in sys.argv[1:]:
    root = pathlib.Path(importlib.import_module(sdk).__file__).parent
    for init in sorted((root / "types").rglob("__init__.py")):
        importlib.import_module(".".join(init.parent.relative_to(root.parent).parts))
def ident(obj):
    if isinstance(obj, types.ModuleType):
        return "module " + obj.__name__
    if hasattr(obj, "__qualname__") and hasattr(obj, "__module__"):
        return f"{obj.__module__}.{obj.__qualname__}"
    return repr(obj)
packages = {sdk: {} for sdk in sys.argv[1:]}
for name, module in list(sys.modules.items()):
    sdk = name.split(".")[0]
    if sdk in packages and name.startswith(sdk + ".types") and hasattr(module, "__path__"):
        packages[sdk][name] = {k: ident(v) for k, v in vars(module).items() if not k.startswith("__")}
print(json.dumps(packages))
"""

_LAZY = r"""
import importlib, json, sys, types
from shard.agent.providers.backends import prepare_sdk_import
prepare_sdk_import()
# each SDK's state is read before the next one is imported (neither imports the other)
before = {}
for sdk in sys.argv[1:]:
    if sdk == "openai":
        import openai
        client = openai.AsyncOpenAI(api_key="x", base_url="http://127.0.0.1:9/v1")
        from openai.types.chat import ChatCompletionChunk
        heavy = ("openai.types.responses.response", "openai.types.eval_create_params",
                 "openai.types.graders.multi_grader")
    else:
        import anthropic
        client = anthropic.AsyncAnthropic(api_key="x", base_url="http://127.0.0.1:9")
        from anthropic.types import Message, RawMessageStreamEvent
        heavy = ()
    untouched = sorted(m for m in heavy if m in sys.modules)
    before[sdk] = (untouched, sum(m.startswith(sdk + ".types") for m in sys.modules))
def ident(obj):
    if isinstance(obj, types.ModuleType):
        return "module " + obj.__name__
    if hasattr(obj, "__qualname__") and hasattr(obj, "__module__"):
        return f"{obj.__module__}.{obj.__qualname__}"
    return repr(obj)
result = {}
for sdk, packages in json.loads(sys.stdin.read()).items():
    wrong = []
    for package, names in packages.items():
        module = importlib.import_module(package)
        for name, expected in names.items():
            got = ident(getattr(module, name))
            if got != expected:
                wrong.append([package, name, expected, got])
    untouched, loaded = before[sdk]
    checked = sum(map(len, packages.values()))
    result[sdk] = {"untouched": untouched, "loaded_before": loaded, "checked": checked, "wrong": wrong}
print(json.dumps(result))
"""


async def _python(code: str, *sdks: str, stdin: bytes = b"") -> bytes:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, *sdks,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(stdin), 120)
    assert proc.returncode == 0, err.decode()
    return out


@pytest.mark.long
@pytest.mark.slow
async def test_lazy_packages_give_what_the_eager_ones_do():
    """In two fresh interpreters (one eager, one lazy, each for both SDKs): every name of every
    ``<sdk>.types`` package as the SDK's own ``__init__`` files bind it, looked up under the lazy
    loader, is the same object (same module and qualified name). Before those look-ups, an imported
    SDK with a client and the stream's types has loaded fewer of its type modules than eagerly
    (openai 468, anthropic 2,845; for openai not the Responses, Evals or graders models)."""
    most_loaded = {"openai": 300, "anthropic": 2500}
    eager = await _python(_EAGER, *most_loaded)
    for sdk in most_loaded:
        assert len(json.loads(eager)[sdk]) > 10  # packages: the comparison below covers them all
    result = json.loads(await _python(_LAZY, *most_loaded, stdin=eager))
    assert set(result) == set(most_loaded)
    for sdk, most in most_loaded.items():
        assert result[sdk]["untouched"] == [], sdk
        assert result[sdk]["checked"] > 1000, sdk
        assert result[sdk]["wrong"] == [], sdk
        assert result[sdk]["loaded_before"] < most, sdk


def test_lazy_names_reads_an_init_of_relative_imports():
    source = (
        "from __future__ import annotations\n"
        "from .batch import Batch as Batch\n"
        "from .shared import (Metadata as Metadata, ChatModel)\n"
        "from . import chat\n"
        "from ..x import Y as Z\n"
    )
    assert lazy_names(source, "openai.types") == {
        "annotations": ("__future__", "annotations"),
        "batch": ("openai.types.batch", None),
        "Batch": ("openai.types.batch", "Batch"),
        "shared": ("openai.types.shared", None),
        "Metadata": ("openai.types.shared", "Metadata"),
        "ChatModel": ("openai.types.shared", "ChatModel"),
        "chat": ("openai.types.chat", None),
        "Z": ("openai.x", "Y"),
    }


def test_an_init_with_anything_else_runs_as_it_is():
    for source in ("from .a import B\nX = 1\n", "import os\n", "from .a import *\n", "from os import path\n"):
        assert lazy_names(source, "openai.types") is None, source
