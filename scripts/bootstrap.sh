#!/usr/bin/env bash
# Creates .venv in this checkout and installs Shard into it (editable), once and again whenever
# pyproject.toml changes. Usage: scripts/bootstrap.sh [runtime|dev]   (prints the venv path)
# Says on stderr what it is doing before each slow step; pip itself stays quiet.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Every `python -m` below runs in the checkout, not in the folder `./shard` was typed in: -m puts the
# current folder first on sys.path, and a repository's own json.py would run in place of Python's.
cd "$here"
venv="$here/.venv"
what="${1:-runtime}"
marker="$venv/.installed-$what"

# A pip config may name package indexes that are local folders (file://…) holding only some
# projects; pip then warns once per missing project. Only those lines are dropped: every other
# warning and error still shows.
quiet_pip() {
  "$venv/bin/python" -m pip "$@" 2>&1 | sed -e "/^WARNING: Location 'file:.*' is ignored: /d" >&2
}

dev_marker="$venv/.installed-dev"
if [ "$what" = runtime ] && [ -f "$dev_marker" ] && [ ! "$here/pyproject.toml" -nt "$dev_marker" ]; then
  touch "$marker"  # the dev install holds everything the runtime needs
fi
if [ ! -f "$marker" ] || [ "$here/pyproject.toml" -nt "$marker" ]; then
  if [ ! -x "$venv/bin/python" ]; then
    echo "shard: setting up .venv (first run, ~30 s)…" >&2
    python3 -m venv "$venv" >&2
  elif [ -f "$marker" ]; then
    echo "shard: pyproject.toml changed; updating .venv…" >&2
  else
    echo "shard: installing the $what dependencies into .venv…" >&2
  fi
  extra=""
  [ "$what" = dev ] && extra="[dev]"
  # uv installs the same packages from the same index several times faster than pip (it downloads,
  # unpacks and byte-compiles in parallel: ~25 s instead of ~90 on a fresh two-core machine). pip
  # stays the way whenever uv cannot be had (an index without it) or fails.
  if ! { quiet_pip install --quiet --disable-pip-version-check uv >/dev/null 2>&1 && [ -x "$venv/bin/uv" ] &&
    "$venv/bin/uv" pip install --quiet --python "$venv/bin/python" --compile-bytecode -e "$here$extra"; }; then
    quiet_pip install --quiet --disable-pip-version-check -e "$here$extra"
  fi
  # Installed packages ship bytecode; an editable install does not, so compile it once here.
  "$venv/bin/python" -m compileall -q "$here/src" >/dev/null
  # and the start paths' dataclass methods, forward references, regular expressions, model schemas
  # and modules (where Python finds each, and its code), kept the same way (src/shard/_dataclass_code.py,
  # _regex_code.py, _schema_code.py, _kept_imports.py); only a speed-up: an install never fails for it
  "$venv/bin/python" -m shard.cli.warm_cache >/dev/null ||
    echo "shard: could not keep the start paths' compiled code; starts are slower, nothing else" >&2
  touch "$marker"
fi
echo "$venv"
