#!/usr/bin/env bash
# Creates .venv in this checkout and installs Shard into it (editable), once and again whenever
# pyproject.toml changes. Usage: scripts/bootstrap.sh [runtime|dev]   (prints the venv path)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$here/.venv"
what="${1:-runtime}"
marker="$venv/.installed-$what"
if [ ! -f "$marker" ] || [ "$here/pyproject.toml" -nt "$marker" ]; then
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" >&2
  fi
  extra=""
  [ "$what" = dev ] && extra="[dev]"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$here$extra" >&2
  # Installed packages ship bytecode; an editable install does not, so compile it once here.
  "$venv/bin/python" -m compileall -q "$here/src" >/dev/null
  touch "$marker"
fi
echo "$venv"
