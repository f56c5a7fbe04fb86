"""``shard hosts setup`` for a host on another Python or platform than this machine: wheels for
*its* interpreter, fetched here (this machine reaches the package index; the host needs no
internet), with a wheel of this Shard, streamed over ssh and installed there offline
(``pip install --no-index``) into a venv in the host's SHARD_HOME."""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
import tempfile
from importlib import metadata
from pathlib import Path

from shard._python import module_argv

# pip's names for a Linux platform: every manylinux level a wheel of it may carry
_MANYLINUX = ("manylinux2014_{arch}", "manylinux_2_17_{arch}", "manylinux_2_28_{arch}", "linux_{arch}")

INSTALL = r"""
set -e
D={install}
mkdir -p "$D"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
tar -xzf - -C "$T"
rm -rf "$D/venv"
{python} -m venv "$D/venv"
"$D/venv/bin/python" -m pip install --quiet --no-index --find-links "$T" --disable-pip-version-check shard
"$D/venv/bin/shard" --version
"""


class WheelError(Exception):
    """What could not be fetched or built: one line for the person."""


def requirements() -> list[str]:
    """Shard's own requirements (extras left out), as its metadata states them."""
    out = []
    for requirement in metadata.requires("shard") or ():
        if re.search(r"extra\s*==", requirement):
            continue
        out.append(requirement.split(";")[0].strip())
    return out


def platforms(platform: str) -> list[str]:
    """``linux-x86_64`` → pip's platform tags for it."""
    if not platform.startswith("linux-"):
        raise WheelError(f"no wheels are fetched for platform {platform} (Linux only)")
    arch = platform.removeprefix("linux-")
    return [tag.format(arch=arch) for tag in _MANYLINUX]


def project_root() -> Path:
    """The source tree this Shard runs from (its pyproject.toml), to build its wheel."""
    root = Path(__file__).resolve().parents[3]
    if not (root / "pyproject.toml").is_file():
        raise WheelError("this shard was not installed from a source tree: no wheel of it can be built here")
    return root


def wheelhouse(version: str, cache_tag: str, platform: str) -> bytes:
    """A gzipped tar of the wheels the host's interpreter needs (``3.12``, ``cpython-312``)."""
    match = re.fullmatch(r"cpython-(\d)(\d+)", cache_tag)
    if match is None:
        raise WheelError(f"no wheels are fetched for {cache_tag} (CPython only)")
    abi = f"cp{match[1]}{match[2]}"
    with tempfile.TemporaryDirectory(prefix="shard-wheels-") as folder:
        _pip("wheel", "--quiet", "--no-deps", "--wheel-dir", folder, str(project_root()))
        tags = [arg for tag in platforms(platform) for arg in ("--platform", tag)]
        _pip(
            "download",
            "--quiet",
            "--only-binary=:all:",
            "--python-version",
            version,
            "--implementation",
            "cp",
            "--abi",
            abi,
            "--abi",
            "abi3",
            "--abi",
            "none",
            *tags,
            "--dest",
            folder,
            *requirements(),
        )
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w:gz", compresslevel=1) as tar:
            for wheel in sorted(Path(folder).glob("*.whl")):
                tar.add(wheel, arcname=wheel.name)
        return out.getvalue()


def _pip(*args: str) -> None:
    done = subprocess.run(
        module_argv("pip", "--disable-pip-version-check", *args), capture_output=True, text=True
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise WheelError(f"pip {args[0]}: {last}")
