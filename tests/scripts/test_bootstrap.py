"""``scripts/bootstrap.sh``: what the first run of ``./shard`` or ``./test`` says, and what it hides.

The script runs for real on a copy of this checkout's layout, with a stand-in ``python3`` on PATH
whose venv "python" records each pip call and writes the noise a machine's pip config can cause, and
(with ``FAKE_UV``) installs a stand-in ``uv`` that records its calls — so the test needs neither the
network nor half a minute.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bootstrap.sh"
NOISE = (
    "WARNING: Location 'file:///opt/pypi-more/simple/idna/' is ignored: it is neither a file nor a directory."
)
KEPT = "WARNING: a warning that matters"

FAKE_PYTHON3 = """#!/usr/bin/env bash
# stand-in for `python3 -m venv DIR`: a venv whose python records pip calls
set -eu
[ "$1 $2" = "-m venv" ] || exit 9
mkdir -p "$3/bin"
cat > "$3/bin/python" <<'PY'
#!/usr/bin/env bash
if [ "$2" = pip ]; then
  echo "$*" >> "$PIP_LOG"
  echo "NOISE_LINE" >&2
  echo "KEPT_LINE" >&2
  if [ "${!#}" = uv ]; then  # pip installing uv: a stand-in uv that records its calls, when wanted
    [ -n "${FAKE_UV:-}" ] || exit 1
    uv="$(dirname "$0")/uv"
    printf '#!/usr/bin/env bash\necho "$*" >> "$UV_LOG"\necho UV_SAYS >&2\nexit "${UV_EXIT:-0}"\n' > "$uv"
    chmod +x "$uv"
    exit 0
  fi
  exit "${PIP_EXIT:-0}"
fi
exit 0
PY
chmod +x "$3/bin/python"
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(SCRIPT, root / "scripts" / "bootstrap.sh")
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    python3 = fake_bin / "python3"
    python3.write_text(FAKE_PYTHON3.replace("NOISE_LINE", NOISE).replace("KEPT_LINE", KEPT))
    python3.chmod(0o755)
    return root


def bootstrap(checkout: Path, what: str, **env: str) -> subprocess.CompletedProcess[str]:
    fake_bin = checkout.parent / "bin"
    return subprocess.run(
        ["bash", str(checkout / "scripts" / "bootstrap.sh"), what],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}",
            "PIP_LOG": str(checkout.parent / "pip.log"),
            "UV_LOG": str(checkout.parent / "uv.log"),
            **env,
        },
    )


def pip_calls(checkout: Path) -> list[str]:
    """The pip installs of the project (not of uv)."""
    log = checkout.parent / "pip.log"
    calls = log.read_text().splitlines() if log.exists() else []
    return [call for call in calls if not call.endswith(" uv")]


def uv_calls(checkout: Path) -> list[str]:
    log = checkout.parent / "uv.log"
    return log.read_text().splitlines() if log.exists() else []


def test_the_first_run_says_what_it_does_and_hides_only_the_index_noise(checkout: Path):
    """The first run announces the set-up before it starts, prints only the venv path on stdout,
    drops pip's "Location 'file:…' is ignored" lines (a machine's pip config naming local index
    folders) and keeps every other warning."""
    done = bootstrap(checkout, "dev")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{checkout}/.venv\n"
    lines = done.stderr.splitlines()
    assert lines[0] == "shard: setting up .venv (first run, ~30 s)…"
    assert NOISE not in done.stderr
    assert KEPT in lines
    (call,) = pip_calls(checkout)
    assert f"install --quiet --disable-pip-version-check -e {checkout}[dev]" in call


def test_later_runs_are_silent_until_pyproject_changes(checkout: Path):
    """Once installed, a run says nothing and installs nothing — also the runtime after a dev
    install, which holds it — until pyproject.toml changes, which is said before reinstalling."""
    assert bootstrap(checkout, "dev").returncode == 0
    again = bootstrap(checkout, "dev")
    runtime = bootstrap(checkout, "runtime")
    assert (again.stderr, runtime.stderr) == ("", "")
    assert runtime.stdout == f"{checkout}/.venv\n"
    assert len(pip_calls(checkout)) == 1

    pyproject = checkout / "pyproject.toml"
    later = pyproject.stat().st_mtime + 10
    os.utime(pyproject, (later, later))
    changed = bootstrap(checkout, "dev")
    assert changed.returncode == 0
    assert changed.stderr.splitlines()[0] == "shard: pyproject.toml changed; updating .venv…"
    assert len(pip_calls(checkout)) == 2


def test_a_failed_install_fails_and_is_tried_again(checkout: Path):
    """pip's failure is the script's (non-zero exit, its output shown), and nothing is marked
    installed, so the next run tries again."""
    failed = bootstrap(checkout, "dev", PIP_EXIT="1")
    assert failed.returncode != 0
    assert KEPT in failed.stderr
    assert not (checkout / ".venv" / ".installed-dev").exists()
    assert bootstrap(checkout, "dev").returncode == 0
    assert len(pip_calls(checkout)) == 2


def test_uv_installs_when_it_can_be_had_and_pip_is_then_not_run(checkout: Path):
    """pip installs uv into the venv, and uv installs the project (editable, byte-compiled, into
    that venv's Python); pip installs nothing else."""
    done = bootstrap(checkout, "dev", FAKE_UV="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{checkout}/.venv\n"
    (call,) = uv_calls(checkout)
    venv = checkout / ".venv"
    assert call == f"pip install --quiet --python {venv}/bin/python --compile-bytecode -e {checkout}[dev]"
    assert pip_calls(checkout) == []
    assert (venv / ".installed-dev").exists()


def test_when_uv_fails_pip_installs_and_says_what_uv_said(checkout: Path):
    """uv's failure is shown, then pip installs as it always did; a run without uv at all (pip could
    not install it) goes straight to pip."""
    done = bootstrap(checkout, "dev", FAKE_UV="1", UV_EXIT="2")
    assert done.returncode == 0, done.stderr
    assert "UV_SAYS" in done.stderr
    assert len(uv_calls(checkout)) == 1
    (call,) = pip_calls(checkout)
    assert f"install --quiet --disable-pip-version-check -e {checkout}[dev]" in call
    assert (checkout / ".venv" / ".installed-dev").exists()
