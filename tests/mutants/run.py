"""``make mutants`` (issue 18): apply each one-line mutation of ``mutations.toml`` alone to a
scratch copy of the repository and run the fault suite at CI size there; print a table of what
was caught (and by which check) and what survived, and write it into ``docs/reliability.md``.

    .venv/bin/python -m tests.mutants.run [--only NAME ...] [--jobs 2] [--list]
    .venv/bin/python -m tests.mutants.run --copy-to DIR NAME    # a mutated copy to run pytest in

A mutant is killed when ``pytest tests/faults`` would fail in its copy. The runner gets there
faster, with the same verdict:

* the CI test (``test_fault_suite_ci_seeds_every_promise_holds``) fails when any of its seeds
  reports a problem, and each seed is an independent world (``tests.faults.run --seeds S``, the
  very command its fixture runs), so the seeds run one at a time and the first failing seed
  stops the mutant (pytest's ``-x``, one level down);
* the mutant's ``seeds`` (the seeds that killed it last time) run first, then the rest in CI
  order, so a caught mutant usually costs one seed;
* only when every seed passes do the other tests of ``tests/faults`` run (a few seconds);
* mutants run ``--jobs`` at a time (default 2, one per core), each in its own copy: a copy of
  the tracked files (plus the working tree's changes to them) in a temporary directory, so the
  repository is never modified and nothing is reinstalled (the copy runs on the same venv with
  ``PYTHONPATH`` pointing into it).

A survivor needs a written reason in ``mutations.toml`` (``survives``: why it is equivalent or
out of scope); the exit status is 1 when a survivor has none, or a mutation no longer applies.
Each verdict is kept in ``tests/mutants/results.json`` as soon as it is known, and the results
section of ``docs/reliability.md`` is rewritten from it (a whole run, no ``--only``, also
records its total wall and CPU time and the machine's load).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from tests.faults.run import CI_POSTS, CI_SEEDS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path("layers/common/python/scheduled_posts")
#: The fault suite's CI test: the seeds the runner plays one at a time are its seeds.
CI_TEST = "tests/faults/test_fault_suite.py::test_fault_suite_ci_seeds_every_promise_holds"
#: What else ``pytest tests/faults`` runs (harness tests, the lag-bound table), when no seed failed.
REST_OF_SUITE = ["tests/faults", "-k", "not ci_seeds"]
#: The results section of the reliability doc, between these two lines.
RESULTS_DOC = Path("docs/reliability.md")
#: The latest verdict of each mutant (see :class:`Results`).
RESULTS_JSON = Path(__file__).with_name("results.json")
BEGIN = "<!-- mutants:begin (written by make mutants) -->"
END = "<!-- mutants:end -->"


@dataclass(frozen=True)
class Mutant:
    """One mutation: replace the ``nth`` occurrence of ``find`` in ``path`` by ``replace``.

    ``path`` is relative to the domain package; ``guarantee`` names the promise it breaks;
    ``seeds`` are CI seeds to try first; ``survives`` is the written reason a survivor is
    accepted (equivalent or out of scope); ``tests`` are extra tests run only for a survivor.
    """

    name: str
    guarantee: str
    path: str
    find: str
    replace: str
    nth: int | None = None
    seeds: tuple[int, ...] = ()
    survives: str = ""
    tests: tuple[str, ...] = ()

    def mutate(self, text: str) -> str:
        """``text`` with the mutation applied.

        Raises
        ------
        ValueError
            When ``find`` does not occur (or, without ``nth``, occurs more than once).
        """
        count = text.count(self.find)
        if count == 0 or (self.nth is None and count != 1) or (self.nth or 1) > count:
            raise ValueError(f"{self.name}: {self.find!r} occurs {count} times in {self.path}")
        at = -1
        for _ in range(self.nth or 1):
            at = text.index(self.find, at + 1)
        return text[:at] + self.replace + text[at + len(self.find) :]

    def apply(self, root: Path) -> None:
        """Mutate the file under ``root`` (raises ``ValueError`` as :meth:`mutate`)."""
        target = root / PACKAGE / self.path
        target.write_text(self.mutate(target.read_text()))

    def seed_order(self) -> list[int]:
        """The CI seeds, this mutant's ``seeds`` first (each CI seed exactly once)."""
        first = [s for s in self.seeds if s in CI_SEEDS]
        return first + [s for s in CI_SEEDS if s not in first]


def load(path: Path = Path(__file__).with_name("mutations.toml")) -> list[Mutant]:
    data = tomllib.loads(path.read_text())
    return [
        Mutant(**{**m, "tests": tuple(m.get("tests", ())), "seeds": tuple(m.get("seeds", ()))})
        for m in data["mutant"]
    ]


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


@dataclass
class Run:
    """One child process: exit code, wall and CPU seconds, output."""

    code: int
    wall: float
    cpu: float
    stdout: str
    stderr: str


def run_child(command: list[str], cwd: Path) -> Run:
    """Run ``command`` in ``cwd`` with the copy's packages first on ``PYTHONPATH``; its CPU time
    is the child's own (``wait4``), so two mutants in parallel are measured apart."""
    env = {
        **os.environ,
        "PYTHONPATH": f"{cwd / 'layers/common/python'}{os.pathsep}{cwd}",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "CRITICAL",
    }
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(
            child.returncode,
            time.monotonic() - started,
            usage.ru_utime + usage.ru_stime,
            out.read(),
            err.read(),
        )


def _pytest(targets: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *targets]


def _first_failure(output: str) -> str:
    """The first failing test's id and error line of a pytest run."""
    lines = output.splitlines()
    failed = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    first = failed[0].split(" ", 1)[1] if failed else ""
    return " ".join(first.split())[:200]


@dataclass
class Verdict:
    """What the fault suite did to one mutant, and when (JSON-able: ``results.json``)."""

    name: str
    killed_by: str = ""
    check: str = ""
    wall: float = 0.0
    cpu: float = 0.0
    seeds_run: list[int] = field(default_factory=list)
    named_tests: str = ""
    measured: str = ""

    @property
    def killed(self) -> bool:
        return bool(self.killed_by)

    @property
    def killer_seed(self) -> int | None:
        return self.seeds_run[-1] if self.killed and "seed" in self.killed_by else None


def judge(mutant: Mutant, work: Path, first: tuple[int, ...] = ()) -> Verdict:
    """Run the fault suite in ``work`` (already mutated), seeds ``first`` first, stopping at the
    first failure."""
    verdict = Verdict(mutant.name)

    def spend(run: Run) -> Run:
        verdict.wall += run.wall
        verdict.cpu += run.cpu
        return run

    for seed in replace(mutant, seeds=(*first, *mutant.seeds)).seed_order():
        verdict.seeds_run.append(seed)
        command = [sys.executable, "-m", "tests.faults.run", "--json"]
        run = spend(run_child([*command, "--posts", str(CI_POSTS), "--seeds", str(seed)], work))
        if run.code == 0:
            continue
        verdict.killed_by = f"`{CI_TEST.rsplit('::', 1)[1]}` seed {seed}"
        try:
            (result,) = json.loads(run.stdout.strip().splitlines()[-1])
            problems = [p for p in result["problems"] if not p.startswith("reproduce:")]
            verdict.check = str(problems[0])
        except (ValueError, IndexError, KeyError):
            tail = run.stderr.strip().splitlines()
            verdict.check = "the seed crashed: " + (tail[-1] if tail else f"exit {run.code}")
        return verdict
    run = spend(run_child(_pytest(REST_OF_SUITE), work))
    if run.code != 0:
        killer, _, check = _first_failure(run.stdout).partition(" - ")
        verdict.killed_by, verdict.check = killer or "tests/faults", check
        return verdict
    if mutant.tests:
        named = run_child(_pytest(list(mutant.tests)), work)
        verdict.named_tests = "caught" if named.code != 0 else "survived"
    return verdict


class Results:
    """The latest verdict of each mutant and the last whole run, kept in ``results.json`` (so
    a run cut short, or one ``--only`` run, still updates the table, and a mutant's last killer
    seed runs first next time)."""

    def __init__(self, path: Path = RESULTS_JSON) -> None:
        self.path = path
        data = json.loads(path.read_text()) if path.exists() else {}
        self.verdicts = {n: Verdict(**v) for n, v in data.get("mutants", {}).items()}
        self.whole_run: str = data.get("whole_run", "")
        self.lock = threading.Lock()

    def first_seeds(self, name: str) -> tuple[int, ...]:
        seed = self.verdicts[name].killer_seed if name in self.verdicts else None
        return () if seed is None else (seed,)

    def record(self, verdict: Verdict) -> None:
        with self.lock:
            self.verdicts[verdict.name] = verdict
            self.save()

    def save(self) -> None:
        data = {
            "whole_run": self.whole_run,
            "mutants": {n: asdict(v) for n, v in sorted(self.verdicts.items())},
        }
        self.path.write_text(json.dumps(data, indent=1) + "\n")


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def _shorten(check: str, limit: int = 150) -> str:
    # Schedule and channel ids make a check unreadable in a table; the seed replays it anyway.
    check = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "…", check)
    return check if len(check) <= limit else check[: limit - 1] + "…"


def table(mutants: list[Mutant], verdicts: dict[str, Verdict]) -> list[str]:
    """The markdown table: one row per mutant, in ``mutations.toml`` order."""
    rows = [
        "| mutation | file (domain package) | what it breaks | killed by | first broken check "
        "| seeds run | seconds (wall / CPU) | measured (UTC, commit, load) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in mutants:
        v = verdicts.get(m.name)
        if v is None:
            killed, check, seeds, seconds, measured = "not run yet", "", "", "", ""
        else:
            if v.killed:
                killed, check = v.killed_by, _shorten(v.check)
            else:
                killed = "**survived**" + (" (explained)" if m.survives else " (UNEXPLAINED)")
                check = m.survives or "none"
                if v.named_tests:
                    check += f" (named tests: {v.named_tests})"
            seeds = ", ".join(map(str, v.seeds_run))
            seconds, measured = f"{v.wall:.0f} / {v.cpu:.0f}", v.measured
        rows.append(
            f"| `{m.name}` | `{m.path}` | {_cell(m.guarantee)} | {_cell(killed)} "
            f"| {_cell(check)} | {seeds} | {seconds} | {measured} |"
        )
    return rows


def _commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    # The runner's own outputs (written as verdicts come in) do not make the tree dirty.
    outputs = [":!tests/mutants/results.json", ":!docs/reliability.md"]
    dirty = subprocess.run(
        ["git", "diff", "--quiet", "HEAD", "--", ".", *outputs], cwd=ROOT, check=False
    ).returncode
    return done.stdout.strip() + ("+changes" if dirty else "")


def whole_run_line(verdicts: list[Verdict], wall: float, jobs: int, loads: tuple[str, str]) -> str:
    """One sentence on a whole run: counts, wall and CPU time, the machine's load."""
    mutants = {m.name: m for m in load()}
    killed = sum(v.killed for v in verdicts)
    explained = sum(not v.killed and bool(mutants[v.name].survives) for v in verdicts)
    return (
        f"**Last whole run: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC**, commit `{_commit()}`: "
        f"{len(verdicts)} mutations, **{killed} killed by the fault suite at CI size**, "
        f"{explained} explained survivors, {len(verdicts) - killed - explained} unexplained; "
        f"**{wall:.0f} s wall**, {sum(v.cpu for v in verdicts):.0f} s CPU in the children, "
        f"{jobs} mutants at a time on {os.cpu_count()} CPUs; load average (1/5/15 min) "
        f"{loads[0]} at the start, {loads[1]} at the end (a shared machine: the wall time is "
        f"inflated by the load, the CPU time is not)."
    )


def render(results: Results, mutants: list[Mutant]) -> list[str]:
    """The results section of the doc."""
    head = results.whole_run or "No whole run recorded yet."
    return [
        head,
        "A row measured later (`--only`) shows its own time and commit.",
        "",
        *table(mutants, results.verdicts),
    ]


def write_results(lines: list[str], doc: Path = ROOT / RESULTS_DOC) -> None:
    """Replace the text between :data:`BEGIN` and :data:`END` in ``doc`` by ``lines``.

    Raises
    ------
    ValueError
        When the markers are missing.
    """
    text = doc.read_text()
    head, begin, rest = text.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"{doc}: the markers {BEGIN!r} and {END!r} are missing")
    doc.write_text(head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + tail)


def _load_average() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def run_all(
    mutants: list[Mutant], jobs: int, results: Results, report: Callable[[Verdict], None]
) -> list[Verdict]:
    """Judge every mutant, ``jobs`` at a time; results in the order of ``mutants``."""
    with tempfile.TemporaryDirectory(prefix="mutants-") as tmp:
        base = Path(tmp) / "repo"
        scratch_copy(base)
        for m in mutants:  # fail before any run when a mutation no longer applies
            m.mutate((base / PACKAGE / m.path).read_text())
        commit = _commit()

        def one(mutant: Mutant) -> Verdict:
            work = base.parent / mutant.name
            shutil.copytree(base, work, symlinks=True)
            try:
                mutant.apply(work)
                verdict = judge(mutant, work, results.first_seeds(mutant.name))
            finally:
                shutil.rmtree(work, ignore_errors=True)
            verdict.measured = (
                f"{datetime.now(UTC):%Y-%m-%d %H:%M}, `{commit}`, {os.getloadavg()[0]:.1f}"
            )
            results.record(verdict)
            report(verdict)
            return verdict

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(one, mutants))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="run only these mutations (by name)")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--jobs", type=int, default=2, help="mutants at a time (default 2)")
    parser.add_argument(
        "--copy-to", metavar="DIR", help="write a mutated copy of the repo for ONE mutation"
    )
    args = parser.parse_args(argv)
    every = load()
    mutants = every
    if args.only:
        unknown = set(args.only) - {m.name for m in mutants}
        if unknown:
            parser.error(f"unknown mutations: {', '.join(sorted(unknown))}")
        mutants = [m for m in mutants if m.name in set(args.only)]
    if args.list:
        for m in mutants:
            print(f"{m.name:32} {m.path}: {m.guarantee}")
        return 0
    if args.copy_to:
        if len(mutants) != 1:
            parser.error("--copy-to takes exactly one mutation (--only NAME)")
        target = Path(args.copy_to)
        scratch_copy(target)
        mutants[0].apply(target)
        pytest = Path(sys.executable).parent / "pytest"
        print(f"cd {target} && PYTHONPATH=layers/common/python:. {pytest} tests/faults")
        return 0
    started, load_before = time.monotonic(), _load_average()
    results = Results()

    def report(v: Verdict) -> None:
        outcome = f"killed by {v.killed_by}: {_shorten(v.check)}" if v.killed else "SURVIVED"
        print(f"{v.name}: {outcome} ({v.wall:.0f} s wall, {v.cpu:.0f} s CPU)", flush=True)
        with results.lock:
            write_results(render(results, every))

    from tests.support.networks import reference_pds

    # one reference PDS for every scratch copy (they have no .pds/): FAULT_PDS_URL
    with reference_pds():
        verdicts = run_all(mutants, max(1, args.jobs), results, report)
    if not args.only:
        loads = (load_before, _load_average())
        results.whole_run = whole_run_line(verdicts, time.monotonic() - started, args.jobs, loads)
        results.save()
    write_results(render(results, every))
    print("\n" + "\n".join(render(results, mutants)))
    print(f"\nwritten to {RESULTS_DOC} (and {RESULTS_JSON.relative_to(ROOT)})")
    by_name = {m.name: m for m in mutants}
    unexplained = [v for v in verdicts if not v.killed and not by_name[v.name].survives]
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
