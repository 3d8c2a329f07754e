"""Size limits of the runtime code (issue 24, "one concern per module"): no module under
``layers/`` or ``functions/`` over 400 lines, ``functions/api/handler.py`` (the entry point only)
under 80, no function over 60 (counted by ``ast`` from its ``def`` line to its last line,
docstring included)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).parents[2]
MAX_MODULE_LINES = 400
MAX_HANDLER_LINES = 80
MAX_FUNCTION_LINES = 60


def _runtime_modules() -> list[Path]:
    return sorted(p for top in ("layers", "functions") for p in (ROOT / top).rglob("*.py"))


@cache
def _function_lengths() -> dict[str, int]:
    lengths: dict[str, int] = {}
    for path in _runtime_modules():
        name = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                key = f"{name}::{node.name}"
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                lengths[key] = max(length, lengths.get(key, 0))
    return lengths


def test_runtime_modules_found() -> None:
    assert len(_runtime_modules()) > 100


def test_no_runtime_module_over_400_lines() -> None:
    too_long = {
        p.relative_to(ROOT).as_posix(): n
        for p in _runtime_modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert too_long == {}


def test_api_handler_is_under_80_lines() -> None:
    handler = ROOT / "functions" / "api" / "handler.py"
    assert len(handler.read_text(encoding="utf-8").splitlines()) < MAX_HANDLER_LINES


def test_no_runtime_function_over_60_lines() -> None:
    over = {key: n for key, n in _function_lengths().items() if n > MAX_FUNCTION_LINES}
    assert over == {}
