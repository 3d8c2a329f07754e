"""The calendar page's pure modules (web/js/time.js, counts.js) under Node's test runner.

They hold the time-zone rules (gaps and overlaps on DST days) and the per-network counts;
``node --test web/tests`` runs them without a browser. Node is on every machine that runs the
CDK CLI (``make cdk-cli``).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_web_modules_node_tests_pass() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    done = subprocess.run(
        [node, "--test", "web/tests/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass 0" not in done.stdout
