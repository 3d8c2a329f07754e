"""Cold start and size: each handler's import time, and the zipped sizes of the layer and functions.

* **Import time.** ``python -X importtime -c "import functions.<name>.handler"`` in a fresh
  process, ``--repeat`` times per handler (median reported); the total is the sum of the
  cumulative times of the top-level imports it prints. Measured on this machine's CPython
  (x86_64, the venv's version), not on Lambda's arm64 runtime: a relative figure, and the part of
  a cold start that our code controls (Lambda's own init is not included).
* **Shared imports** (issue 16): the same measure for what every handler imports whatever it
  does (:data:`SHARED_MODULES`: the observability module, and the X-Ray SDK within it), the
  part of each handler's excess that importing lazily cannot remove.
* **Client libraries** (issue 12): the import cost of each candidate network client, in a fresh
  process, pinned in :data:`CLIENT_LIBRARIES` and pip-installed for this machine into
  ``.bench-cache/clients/`` (never into the venv): ``regex`` (used: grapheme clusters),
  ``Mastodon.py`` and the ``atproto`` SDK (measured, not used: decision "Raw HTTP adapters, no
  client SDKs"). The cost is the import's own cumulative time (``-X importtime`` of that module).
* **Sizes.** The layer as the CDK app bundles it (``infra/bundling.py``): ``pip install --target
  --platform manylinux2014_aarch64 --implementation cp --only-binary=:all: --python-version 3.12
  -r requirements.txt`` (cached under ``.bench-cache/``, keyed by the requirements' hash) plus the
  ``scheduled_posts`` package, zipped with deflate; each ``functions/<name>/`` folder zipped the
  same way (``__pycache__`` excluded).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import re
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

from bench.report import REPO_ROOT, table, write_result

CACHE = REPO_ROOT / ".bench-cache"
PACKAGE_ROOT = REPO_ROOT / "layers" / "common" / "python"
FUNCTIONS = REPO_ROOT / "functions"
PYTHON_VERSION = "3.12"
_LINE = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)")


def parse_importtime(stderr: str, module: str) -> dict[str, float]:
    """Parse ``-X importtime`` output.

    Returns ``total_ms`` (sum of the cumulative microseconds of the top-level imports, in ms),
    ``module_ms`` (the cumulative time of ``module`` itself) and ``modules`` (lines counted).
    """
    total_us = 0
    module_us = 0
    count = 0
    for line in stderr.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        count += 1
        cumulative, indent, name = int(match[2]), match[3], match[4]
        if len(indent) <= 1:  # top level: one space after the bar
            total_us += cumulative
        if name == module:
            module_us = cumulative
    return {"total_ms": total_us / 1000, "module_ms": module_us / 1000, "modules": count}


def handler_names() -> list[str]:
    """Every ``functions/<name>/handler.py``, sorted."""
    return sorted(p.parent.name for p in FUNCTIONS.glob("*/handler.py"))


#: What a handler's import is compared with (issue 16: at most 100 ms more than boto3 alone).
BASELINE_MODULE = "boto3"
#: Modules every handler imports, measured alone against the same baseline.
SHARED_MODULES = ("scheduled_posts.observability", "aws_xray_sdk.core")


def import_time(name: str, repeat: int, module: str | None = None) -> dict[str, Any]:
    """Median import time of ``functions.<name>.handler`` (or of ``module``) over ``repeat``
    fresh processes."""
    module = module or f"functions.{name}.handler"
    env = {
        **os.environ,
        "PYTHONPATH": f"{PACKAGE_ROOT}{os.pathsep}{REPO_ROOT}",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    runs = []
    error = None
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"],
            capture_output=True, text=True, env=env, cwd=REPO_ROOT, check=False, timeout=120,
        )  # fmt: skip
        if done.returncode != 0:
            error = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
            break
        runs.append(parse_importtime(done.stderr, module))
    if not runs:
        return {"handler": name, "error": error}
    return {
        "handler": name,
        "total_ms": statistics.median(r["total_ms"] for r in runs),
        "module_ms": statistics.median(r["module_ms"] for r in runs),
        "modules": runs[0]["modules"],
        "repeat": len(runs),
    }


#: ``(distribution==version, module)`` of each network client library measured.
CLIENT_LIBRARIES: tuple[tuple[str, str], ...] = (
    ("regex==2026.11.19", "regex"),
    ("Mastodon.py==2.3.3", "mastodon"),
    ("atproto==0.0.73", "atproto"),
)


def client_import_time(requirement: str, module: str, repeat: int) -> dict[str, Any]:
    """Median cumulative import time (ms) of ``module`` installed from ``requirement`` into
    ``.bench-cache/clients/<requirement>`` (installed once; its dependencies come along)."""
    target = CACHE / "clients" / requirement.replace("==", "-")
    marker = target / ".complete"
    if not marker.exists():
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--quiet",
             "--disable-pip-version-check", "--target", str(target), requirement],
            check=True, timeout=600,
        )  # fmt: skip
        marker.write_text("ok\n")
    env = {**os.environ, "PYTHONPATH": str(target), "PYTHONDONTWRITEBYTECODE": "1"}
    runs = []
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"],
            capture_output=True, text=True, env=env, cwd=target, check=False, timeout=120,
        )  # fmt: skip
        if done.returncode != 0:
            return {"library": requirement, "error": done.stderr.strip()[-200:] or "failed"}
        runs.append(parse_importtime(done.stderr, module)["module_ms"])
    return {"library": requirement, "module": module, "import_ms": statistics.median(runs)}


def _zip_size(root: Path, prefix: str = "") -> tuple[int, int, int]:
    """(zipped bytes, unzipped bytes, files) of ``root``'s tree, deflated, caches excluded."""
    buffer = io.BytesIO()
    raw = 0
    files = 0
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.rglob("*")):
            if path.is_dir() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            archive.write(path, prefix + str(path.relative_to(root)))
            raw += path.stat().st_size
            files += 1
    return len(buffer.getvalue()), raw, files


def layer_dependencies() -> Path:
    """The pip target of ``requirements.txt`` for arm64 / Python 3.12, cached by hash."""
    requirements = REPO_ROOT / "requirements.txt"
    digest = hashlib.sha256(requirements.read_bytes() + PYTHON_VERSION.encode()).hexdigest()[:16]
    target = CACHE / f"layer-deps-{digest}" / "python"
    marker = target.parent / ".complete"
    if not marker.exists():
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--quiet",
             "--disable-pip-version-check", "--no-compile", "--target", str(target),
             "--platform", "manylinux2014_aarch64", "--implementation", "cp",
             "--only-binary=:all:", "--python-version", PYTHON_VERSION,
             "-r", str(requirements)],
            check=True, timeout=600,
        )  # fmt: skip
        marker.write_text("ok\n")
    return target


def sizes() -> dict[str, Any]:
    """Zipped and unzipped sizes of the layer (dependencies + package) and of each function."""
    deps = layer_dependencies()
    deps_zip, deps_raw, deps_files = _zip_size(deps, "python/")
    pkg_zip, pkg_raw, pkg_files = _zip_size(PACKAGE_ROOT, "python/")
    out: dict[str, Any] = {
        "layer": {
            "zipped_bytes": deps_zip + pkg_zip,
            "unzipped_bytes": deps_raw + pkg_raw,
            "files": deps_files + pkg_files,
            "dependencies_zipped_bytes": deps_zip,
            "package_zipped_bytes": pkg_zip,
        },
        "functions": {},
    }
    for name in handler_names():
        zipped, raw, files = _zip_size(FUNCTIONS / name)
        out["functions"][name] = {"zipped_bytes": zipped, "unzipped_bytes": raw, "files": files}
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-sizes", action="store_true", help="skip the pip download")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    # The baseline is measured right before each handler, in the same run (the machine is
    # shared and its load drifts): each handler's excess is over the baseline taken beside it.
    imports = []
    baselines = []
    for name in handler_names():
        baseline = import_time(BASELINE_MODULE, args.repeat, module=BASELINE_MODULE)
        entry = import_time(name, args.repeat)
        if "total_ms" in entry and "total_ms" in baseline:
            entry["baseline_ms"] = baseline["total_ms"]
            entry["over_baseline_ms"] = round(entry["total_ms"] - baseline["total_ms"], 3)
        baselines.append(baseline)
        imports.append(entry)
    # What every handler imports whatever it does (issue 16: the part lazy imports cannot
    # remove): the shared observability module (Powertools Logger, Metrics and Tracer), and
    # within it the X-Ray SDK, which creates a botocore X-Ray client when imported (its
    # ``xray_recorder``), even with POWERTOOLS_TRACE_DISABLED.
    shared = []
    for module in SHARED_MODULES:
        baseline = import_time(BASELINE_MODULE, args.repeat, module=BASELINE_MODULE)
        entry = import_time(module, args.repeat, module=module)
        if "total_ms" in entry and "total_ms" in baseline:
            entry["baseline_ms"] = baseline["total_ms"]
            entry["over_baseline_ms"] = round(entry["total_ms"] - baseline["total_ms"], 3)
        baselines.append(baseline)
        shared.append(entry)
    measured = [b for b in baselines if "total_ms" in b]
    baseline = {
        "handler": BASELINE_MODULE,
        **(
            {
                "total_ms": statistics.median(b["total_ms"] for b in measured),
                "modules": measured[0]["modules"],
                "repeat": len(measured) * args.repeat,
            }
            if measured
            else {"error": "not measured"}
        ),
    }
    clients = [client_import_time(req, mod, args.repeat) for req, mod in CLIENT_LIBRARIES]
    size = None if args.no_sizes else sizes()
    payload = {
        "python_for_import_times": sys.version.split()[0],
        "baseline": baseline,
        "layer_target": f"manylinux2014_aarch64, Python {PYTHON_VERSION}",
        "imports": imports,
        "shared_imports": shared,
        "client_libraries": clients,
        "sizes": size,
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    path = write_result("cold_start", payload)
    print(table(
        ["handler", "import total ms (median)", "handler module ms", "modules"],
        [[i["handler"], i.get("total_ms", float("nan")), i.get("module_ms", float("nan")),
          i.get("modules", i.get("error", "-"))] for i in imports],
    ))  # fmt: skip
    print()
    print(table(
        ["client library", "import ms (median)"],
        [[c["library"], c.get("import_ms", c.get("error", "-"))] for c in clients],
    ))  # fmt: skip
    if size:
        rows = [["layer (deps + scheduled_posts)", size["layer"]["zipped_bytes"],
                 size["layer"]["unzipped_bytes"], size["layer"]["files"]]]  # fmt: skip
        rows += [
            [f"function {n}", s["zipped_bytes"], s["unzipped_bytes"], s["files"]]
            for n, s in size["functions"].items()
        ]
        print()
        print(table(["artifact", "zipped bytes", "unzipped bytes", "files"], rows))
    print(f"\nwrote {path} ({payload['wall_seconds']} s)")
    return payload


if __name__ == "__main__":
    main()
