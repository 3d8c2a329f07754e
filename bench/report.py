"""Shared output helpers: JSON results with the machine they ran on, plain-text tables."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"
REPO_ROOT = Path(__file__).resolve().parent.parent


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of already sorted values, nearest-rank method.

    Returns ``nan`` for an empty sequence.
    """
    if not sorted_values:
        return float("nan")
    rank = max(1, -(-len(sorted_values) * q // 100))  # ceil(n * q / 100), at least 1
    return float(sorted_values[int(min(rank, len(sorted_values))) - 1])


def machine() -> dict[str, Any]:
    """Where a benchmark ran: CPU count, memory, Python version, platform."""
    mem = ""
    try:
        mem = subprocess.run(
            ["free", "-h"], capture_output=True, text=True, check=False, timeout=5
        ).stdout.splitlines()[1]
    except (OSError, IndexError, subprocess.SubprocessError):
        mem = "unknown"
    return {
        "nproc": os.cpu_count(),
        "memory": " ".join(mem.split()),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }


def write_result(name: str, payload: dict[str, Any]) -> Path:
    """Write ``bench/results/<name>.json`` with the date and machine added; returns the path."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    body = {
        "benchmark": name,
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        **payload,
    }
    path = RESULTS_DIR / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(body, indent=2, sort_keys=False, default=str) + "\n")
    tmp.replace(path)
    return path


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (also readable as plain text)."""

    def cell(value: Any) -> str:
        if isinstance(value, float):
            if value != value:  # nan
                return "-"
            return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"
        if isinstance(value, int) and not isinstance(value, bool):
            return f"{value:,}"
        return str(value)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
