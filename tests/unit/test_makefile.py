"""The Makefile's front door: `make help` lists every target in aligned columns."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _make(*args: str) -> list[str]:
    done = subprocess.run(
        ["make", "-s", "-C", str(ROOT), *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.splitlines()


def test_make_help_descriptions_start_in_one_column() -> None:
    lines = _make("help")
    columns = {re.match(r"\s*\S+\s+", line).end() for line in lines}  # type: ignore[union-attr]
    assert len(lines) > 10
    assert len(columns) == 1


def test_make_help_lists_clean_and_env() -> None:
    targets = {line.split()[0] for line in _make("help")}
    assert {"clean", "env", "help", "run", "token"} <= targets


def test_make_env_runs_python_m_local_env() -> None:
    assert _make("-n", "env")[-1].endswith("-m local env")


def test_make_help_receiver_documents_several_secrets() -> None:
    line = next(line for line in _make("help") if line.split()[0] == "receiver")

    assert "RECEIVER_SECRET=s1,s2" in line and "RECEIVER_NOTIFY_SECRET" in line


def test_make_run_first_install_says_what_it_does_before_pip(tmp_path: Path) -> None:
    # Given no venv yet, make run's recipe (dry run) names the install before pip starts,
    # on stderr so that $(make -s token) still captures only the token
    lines = _make("-n", f"VENV={tmp_path / 'venv'}", "run")

    said = next(i for i, line in enumerate(lines) if "installing the local stack" in line)
    pip = next(i for i, line in enumerate(lines) if "pip install" in line)
    assert said < pip
    assert lines[said].endswith(">&2")
