"""``shard hosts [list|check NAME|setup NAME]``: the machines of ``[[hosts]]`` in config.toml.

* ``list`` — each entry and where it leads.
* ``check NAME`` — over ssh (the user's own config, agent and known hosts; a host key is never
  accepted silently): reachable, Python, the shard there and whether it speaks this daemon's
  protocol, ripgrep, bubblewrap, free space in its SHARD_HOME. Exit 0 when an agent can run there.
* ``setup NAME`` — makes a host with Python 3.11+ ready in one command, with no internet there: this
  machine's installed Shard and its dependencies are streamed over the ssh connection into a
  virtual environment in the host's SHARD_HOME (``runtime/venv``), then checked. The packages are
  this interpreter's, so the host must run the same Python version on the same platform (the check
  says when it does not, and what to do instead).
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import sysconfig
import tarfile
import time
from importlib import metadata
from pathlib import Path

from shard._hosts import HostConfig
from shard._version import PROTOCOL_VERSION, __version__
from shard.agent.config.settings import ConfigError, load_config, shard_home
from shard.cli import hosts_wheels
from shard.daemon.hosts import ssh

EXIT_NOT_READY = 1
EXIT_USAGE = 2
_TIMEOUT = 60.0
_ABOUT = (
    "import sys, sysconfig; v = sys.version_info; "
    "print('%d.%d.%d' % v[:3], sys.implementation.cache_tag, sysconfig.get_platform())"
)
_PROBE = r"""
py=$(command -v {python} || true)
if [ -n "$py" ]; then
  echo "python=$("$py" -c {about} 2>/dev/null)"
fi
{prelude}echo "shard=$({start} --version 2>/dev/null | head -n 1)"
R={install}/venv/bin/rg; [ -x "$R" ] || R=rg
echo "rg=$("$R" --version 2>/dev/null | head -n 1)"
echo "bwrap=$(bwrap --version 2>/dev/null | head -n 1)"
H={home}; mkdir -p "$H" 2>/dev/null
echo "free=$(df -Pk "$H" 2>/dev/null | tail -n 1 | awk '{{print $4}}')"
"""


def main_hosts(args: argparse.Namespace) -> int:
    if args.action == "git":
        from shard.cli.hosts_git import main_git

        return main_git(args.home)
    if args.action == "fs":
        from shard.cli.hosts_fs import main_fs

        return main_fs(args.home)
    home = shard_home(args.home)
    try:
        config = load_config(home)
    except ConfigError as exc:
        print(f"shard: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    if args.action == "list":
        if not config.hosts:
            print(f"no hosts: add [[hosts]] to {home / 'config.toml'} (see the README's section on hosts)")
        for h in config.hosts:
            print(f"{h.name}\t{h.ssh}{f' port {h.port}' if h.port else ''}\thome {h.home}\tconfig {h.config}")
        return 0
    host = next((h for h in config.hosts if h.name == args.name), None)
    if host is None:
        known = ", ".join(h.name for h in config.hosts) or "none"
        print(f"shard: no host {args.name!r} in {home / 'config.toml'} (hosts: {known})", file=sys.stderr)
        return EXIT_USAGE
    if args.action == "setup":
        return _setup(host, wheels=args.wheels)
    return _check(host)


# --- check -----------------------------------------------------------------------------------------


def probe(host: HostConfig) -> tuple[dict[str, str] | None, str, float]:
    """What the host has (None when ssh failed: then the one line saying why), and how long it took."""
    prelude, start = ssh.shard_command(host)
    script = _PROBE.format(
        about=ssh.remote_word(_ABOUT),
        python=ssh.remote_word(host.python),
        prelude=prelude,
        start=start,
        install=ssh.install_dir(host),
        home=ssh.remote_word(host.home),
    )
    began = time.monotonic()
    try:
        done = subprocess.run(
            ssh.direct_argv(host, f"sh -c {ssh.remote_word(script)}"),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"host {host.name} ({host.ssh}): {exc}", time.monotonic() - began
    took = time.monotonic() - began
    if done.returncode == 255:  # ssh's own failure: the command never ran
        return None, ssh.explain(host, done.stderr.decode("utf-8", "replace"), done.returncode), took
    found = {}
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition("=")
        found[key.strip()] = value.strip()
    return found, "", took


def _check(host: HostConfig) -> int:
    found, why, took = probe(host)
    print(f"host {host.name} ({host.ssh})")
    if found is None:
        print(f"  reachable   no: {why}")
        return EXIT_NOT_READY
    print(f"  reachable   yes ({took:.2f} s)")
    problems = verdicts(found)
    for label, value, problem in rows(found):
        print(f"  {label:<11} {value}{f'  ({problem})' if problem else ''}")
    if problems:
        print(f"not ready: {'; '.join(problems)}. Run `shard hosts setup {host.name}` from this machine.")
        return EXIT_NOT_READY
    print(f"ready: agents can run on {host.name}")
    return 0


def rows(found: dict[str, str]) -> list[tuple[str, str, str]]:
    """(what, what the host has, what is wrong with it or "") for each line of the report."""
    python = found.get("python", "")
    version = python.split()[0] if python else ""
    # `shard --version` says "shard 0.1.0 (protocol 0.1.0)"; an older one only "shard 0.1.0"
    words = found.get("shard", "").replace("(", " ").replace(")", " ").split()
    shard = " ".join(words[:2])
    protocol = words[3] if len(words) > 3 and words[2] == "protocol" else ""
    free = found.get("free", "")
    return [
        ("python", version or "missing", "" if _python_ok(version) else "needs Python 3.11 or later"),
        (
            "shard",
            f"{shard or 'missing'}{f' (protocol {protocol})' if protocol else ''}",
            _shard_problem(shard, protocol),
        ),
        ("ripgrep", found.get("rg") or "missing (search falls back to Python)", ""),
        ("bubblewrap", found.get("bwrap") or "missing (no sandbox there: commands ask)", ""),
        ("free space", f"{int(free) // 1024} MiB" if free.isdigit() else "unknown", _space_problem(free)),
    ]


def verdicts(found: dict[str, str]) -> list[str]:
    return [f"{label}: {problem}" for label, _, problem in rows(found) if problem]


def _python_ok(version: str) -> bool:
    parts = re.match(r"(\d+)\.(\d+)", version)
    return parts is not None and (int(parts[1]), int(parts[2])) >= (3, 11)


def _shard_problem(shard: str, protocol: str) -> str:
    if not shard:
        return "not installed"
    if protocol.split(".")[0] != PROTOCOL_VERSION.split(".")[0] or not protocol:
        return f"speaks protocol {protocol or '?'}, this daemon {PROTOCOL_VERSION}"
    if shard.split()[-1] != __version__:
        return f"another version than this machine's {__version__}"
    return ""


def _space_problem(free: str) -> str:
    return "less than 64 MiB free" if free.isdigit() and int(free) < 64 * 1024 else ""


# --- setup -----------------------------------------------------------------------------------------

_INSTALL = r"""
set -e
D={install}
N="$D/venv.new"
rm -rf "$N"
mkdir -p "$D"
{python} -m venv --without-pip "$N"
SP=$("$N/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
tar -xzf - -C "$T"
mkdir -p "$SP"
cp -R "$T/site/." "$SP/"
if [ -d "$T/bin" ]; then cp -R "$T/bin/." "$N/bin/"; fi
printf '#!%s\nimport sys\nfrom shard.cli.main import entry\nsys.exit(entry())\n' \
  "$D/venv/bin/python" > "$N/bin/shard"
chmod 755 "$N/bin/shard"
rm -rf "$D/venv.old"
if [ -d "$D/venv" ]; then mv "$D/venv" "$D/venv.old"; fi
mv "$N" "$D/venv"
rm -rf "$D/venv.old"
"$D/venv/bin/shard" --version
"""


def _setup(host: HostConfig, *, wheels: bool = False) -> int:
    found, why, _ = probe(host)
    if found is None:
        print(f"shard: {why}", file=sys.stderr)
        return EXIT_NOT_READY
    python = found.get("python", "")
    mismatch = interpreter_mismatch(python)
    words = python.split()
    if (mismatch or wheels) and len(words) == 3 and _python_ok(words[0]):  # its interpreter's own wheels
        print(
            f"shard: {host.name} runs {words[1]} on {words[2]}: fetching its wheels here…",
            file=sys.stderr,
            flush=True,
        )
        try:
            payload = hosts_wheels.wheelhouse(".".join(words[0].split(".")[:2]), words[1], words[2])
        except hosts_wheels.WheelError as exc:
            print(f"shard: host {host.name}: {exc}", file=sys.stderr)
            return EXIT_NOT_READY
        script = hosts_wheels.INSTALL.format(
            install=ssh.install_dir(host), python=ssh.remote_word(host.python)
        )
    elif mismatch:
        print(f"shard: host {host.name}: {mismatch}", file=sys.stderr)
        return EXIT_NOT_READY
    else:
        print(
            f"shard: packing shard {__version__} and its dependencies for {host.name}…",
            file=sys.stderr,
            flush=True,
        )
        payload = bundle()
        script = _INSTALL.format(install=ssh.install_dir(host), python=ssh.remote_word(host.python))
    print(f"shard: sending {len(payload) // 1024} KiB to {host.name}…", file=sys.stderr, flush=True)
    try:
        done = subprocess.run(
            ssh.direct_argv(host, f"sh -c {ssh.remote_word(script)}"),
            input=payload,
            capture_output=True,
            timeout=600,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"shard: host {host.name}: {exc}", file=sys.stderr)
        return EXIT_NOT_READY
    if done.returncode != 0:
        print(
            f"shard: {ssh.explain(host, done.stderr.decode('utf-8', 'replace'), done.returncode)}",
            file=sys.stderr,
        )
        return EXIT_NOT_READY
    return _check(host)


def interpreter_mismatch(python: str) -> str:
    """Why this machine's packages would not run on the host's Python ("" when they would)."""
    words = python.split()
    if len(words) < 3:
        return "has no python3 (Python 3.11 or later is needed there)"
    version, tag, platform = words[0], words[1], words[2]
    if not _python_ok(version):
        return f"has Python {version}; Shard needs 3.11 or later"
    here_tag, here_platform = sys.implementation.cache_tag, sysconfig.get_platform()
    if (tag, platform) != (here_tag, here_platform):
        return (
            f"runs {tag} on {platform}, this machine {here_tag} on {here_platform}: its wheels are "
            "fetched here"
        )
    return ""


def bundle() -> bytes:
    """A gzipped tar of Shard and every package it needs, as installed here: ``site/`` (for the
    host's site-packages) and ``bin/`` (programs such as ``rg``)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", compresslevel=1) as tar:
        seen: set[str] = set()
        for dist in _closure("shard"):
            _add_distribution(tar, dist, seen)
        package = Path(__file__).resolve().parents[1]  # src/shard, or site-packages/shard
        for path in sorted(package.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                name = f"site/shard/{path.relative_to(package).as_posix()}"
                if name not in seen:
                    seen.add(name)
                    tar.add(path, arcname=name, recursive=False)
    return out.getvalue()


def _closure(root: str) -> list[metadata.Distribution]:
    """The distribution ``root`` and every one it requires (extras left out), as installed."""
    found: dict[str, metadata.Distribution] = {}
    todo = [root]
    while todo:
        name = _normal(todo.pop())
        if name in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # a requirement for another platform or Python: not installed, not needed here
        found[name] = dist
        for requirement in dist.requires or ():
            if "extra ==" in requirement.replace('"', "'").replace("extra==", "extra =="):
                continue
            todo.append(re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0])
    return list(found.values())


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _add_distribution(tar: tarfile.TarFile, dist: metadata.Distribution, seen: set[str]) -> None:
    base = Path(str(dist.locate_file("")))
    for file in dist.files or ():
        rel = Path(str(file))
        if rel.suffix == ".pth" or rel.name == "direct_url.json" or "__pycache__" in rel.parts:
            continue  # an editable install's path hook and origin point at this machine's folders
        source = Path(str(dist.locate_file(file)))
        if not source.is_file():
            continue
        parts = rel.parts
        if parts[:3] == ("..", "..", ".."):  # ``<venv>/bin/…``: a program the package installs
            if len(parts) < 5 or parts[3] != "bin":
                continue
            name = "bin/" + "/".join(parts[4:])
            if parts[4] in {"shard", "python", "python3"}:
                continue
        elif ".." in parts:
            continue
        else:
            name = f"site/{rel.as_posix()}"
        if name not in seen and base.exists():
            seen.add(name)
            tar.add(source, arcname=name, recursive=False)
