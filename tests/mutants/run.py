"""``make mutants`` (issue 18): apply each one-line mutation of ``mutations.toml`` alone to a
scratch copy of the repository, run the fault suite at CI size there (and the unit tests the
mutation names), and print a table of what was caught and what survived.

    .venv/bin/python -m tests.mutants.run [--only NAME ...] [--list]

The scratch copy holds the files git tracks plus the working tree's changes to them (a temporary
directory, removed afterwards); the repository itself is never modified. Exit status 1 when a
mutation survived the fault suite.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path("layers/common/python/scheduled_posts")
#: The fault suite at CI size (``tests/faults/test_fault_suite.py``).
FAULT_TEST = "tests/faults/test_fault_suite.py::test_fault_suite_ci_seeds_every_promise_holds"


@dataclass(frozen=True)
class Mutant:
    """One mutation: replace the ``nth`` occurrence of ``find`` in ``path`` by ``replace``."""

    name: str
    guarantee: str
    path: str
    find: str
    replace: str
    nth: int | None = None
    tests: tuple[str, ...] = ()

    def apply(self, root: Path) -> None:
        """Mutate the file under ``root``.

        Raises
        ------
        ValueError
            When ``find`` does not occur (or, without ``nth``, occurs more than once).
        """
        target = root / PACKAGE / self.path
        text = target.read_text()
        count = text.count(self.find)
        if count == 0 or (self.nth is None and count != 1) or (self.nth or 1) > count:
            raise ValueError(f"{self.name}: {self.find!r} occurs {count} times in {self.path}")
        at = -1
        for _ in range(self.nth or 1):
            at = text.index(self.find, at + 1)
        target.write_text(text[:at] + self.replace + text[at + len(self.find) :])


def load(path: Path = Path(__file__).with_name("mutations.toml")) -> list[Mutant]:
    data = tomllib.loads(path.read_text())
    return [Mutant(**{**m, "tests": tuple(m.get("tests", ()))}) for m in data["mutant"]]


def scratch_copy(destination: Path) -> None:
    """The tracked files of the repository as they are in the working tree."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, files):
        source = ROOT / name.decode()
        if source.is_file() and not source.is_symlink():
            target = destination / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def _first_problem(output: str) -> str:
    """The first broken check a failing fault-suite run printed (after ``seed N:``)."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("seed ") and line.rstrip().endswith(":"):
            for problem in lines[i + 1 : i + 4]:
                if "reproduce:" not in problem:
                    return " ".join(problem.split())[:160]
    failed = [line for line in lines if line.startswith(("E ", "FAILED", "ERROR"))]
    return " ".join(failed[0].split())[:160] if failed else ""


def _pytest(root: Path, targets: list[str]) -> tuple[bool, float, str]:
    """Run pytest on ``targets`` in ``root``; (failed?, seconds, first problem)."""
    env = {
        **os.environ,
        "PYTHONPATH": f"{root / 'layers/common/python'}{os.pathsep}{root}",
    }
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *targets],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode != 0, time.monotonic() - started, _first_problem(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="run only these mutations (by name)")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = parser.parse_args(argv)
    mutants = load()
    if args.only:
        mutants = [m for m in mutants if m.name in set(args.only)]
    if args.list:
        for m in mutants:
            print(f"{m.name:32} {m.path}: {m.guarantee}")
        return 0
    started = time.monotonic()
    rows = []
    from tests.support.networks import reference_pds

    # one reference PDS for every scratch copy (they have no .pds/): FAULT_PDS_URL
    with reference_pds(), tempfile.TemporaryDirectory(prefix="mutants-") as tmp:
        base = Path(tmp) / "repo"
        scratch_copy(base)
        for m in mutants:
            work = Path(tmp) / m.name
            shutil.copytree(base, work, symlinks=True)
            m.apply(work)
            faults, seconds, why = _pytest(work, [FAULT_TEST])
            units = _pytest(work, list(m.tests))[0] if m.tests else None
            shutil.rmtree(work)
            rows.append((m, faults, units, why))
            verdict = "caught" if faults else "SURVIVED"
            print(f"{m.name}: {verdict} by the fault suite ({seconds:.0f} s) {why}", flush=True)
    load_average = os.getloadavg()[0]
    print(
        f"\n{len(rows)} mutations in {time.monotonic() - started:.0f} s wall "
        f"({os.cpu_count()} CPUs, load average {load_average:.1f} at the end)\n"
    )
    print("| mutation | file | guarantee | fault suite | first broken check | named unit tests |")
    print("|---|---|---|---|---|---|")
    for m, faults, units, why in rows:
        unit = "—" if units is None else ("caught" if units else "survived")
        verdict = "caught" if faults else "**survived**"
        print(f"| `{m.name}` | `{m.path}` | {m.guarantee} | {verdict} | {why} | {unit} |")
    return 0 if all(f for _, f, _, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
