"""``python -m tests.fuzz``: generate and check programs for a while, or replay the regressions.

Every disagreement is reported with its program's seed and the program itself (in the
failures file), rather than stopping at the first. The last two lines printed are the summary
(programs run; disagreements per mode), which the project's before-stop hook shows.

``--grad`` checks the programs' gradients instead (fuzz_grad.py): the same flags, its own
regression list (fuzz_grad_regressions.py) and failures file (grad_failures.txt), and one more
summary line before the last two (gradient programs, runs per mode, finite-difference entries).
With mode jax the last line also counts the programs it skipped (``NotLowerable``).
``--survive-crashes`` generates in child processes, so that a check that kills the process
(XLA aborting in mode jax) is reported as a crash of that seed and the run goes on.
"""

from __future__ import annotations

import argparse
import faulthandler
import itertools
import json
import random
import re
import subprocess
import sys
import time
from collections import Counter
from functools import partial
from pathlib import Path

from fuzz_choosers import RandomChooser
from fuzz_compare import DEFAULT_MODES, MODES, Disagreement, check_program
from fuzz_generate import generate
from fuzz_program import Program, format_program, parse_program
from fuzz_reference import ExpectedError, run_program

import symscan as ss

FAILURES = Path(__file__).with_name("failures.txt")
GRAD_FAILURES = Path(__file__).with_name("grad_failures.txt")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=1.0, help="how long to generate programs (default 1)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the first program (default: random)")
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(DEFAULT_MODES),
                        help="modes to compare (default: all but numba and jax, which compile each new program; "
                             "with --grad mode py runs too, as the gradients' baseline)")
    parser.add_argument("--replay", nargs="?", const="", metavar="FILE",
                        help="check the regression list (or the programs of a failures file) instead")
    parser.add_argument("--show", metavar="SEED|FILE",
                        help="print one program (a seed, or a file holding a Program(...)) and what each mode does")
    parser.add_argument("--shrink", type=float, default=0, metavar="SECONDS",
                        help="at the end, shrink one program of each distinct problem for up to SECONDS")
    parser.add_argument("--failures", type=Path, default=None,
                        help=f"where to write failing programs (default {FAILURES.name} here, "
                             f"{GRAD_FAILURES.name} with --grad)")
    parser.add_argument("--grad", action="store_true",
                        help="check the gradients of the programs (fuzz_grad.py) instead of their values")
    parser.add_argument("--survive-crashes", action="store_true",
                        help="generate in child processes: where one dies in a check (XLA aborting in mode jax), "
                             "report the program as a crash and go on from the next seed")
    parser.add_argument("--summary-file", type=Path, default=None, help=argparse.SUPPRESS)  # a child's counts
    args = parser.parse_args(argv)
    faulthandler.enable()  # a compiler that aborts the process (XLA in mode jax) at least shows where
    ss.config.debug_checks = True  # as in the test suite: a rewrite that breaks an invariant fails loudly
    failures = args.failures or (GRAD_FAILURES if args.grad else FAILURES)
    if args.show is not None:
        if args.show.lstrip("-").isdigit():
            program = generate(RandomChooser(int(args.show)), int(args.show))
        else:
            program = parse_program(Path(args.show).read_text())
        if args.grad:
            from fuzz_grad import show_gradient

            show_gradient(program, args.modes)
        else:
            show(program, args.modes)
        return 0
    if args.replay is not None:
        programs, deadline = _replayed(args.replay, args.grad), None
    else:
        first = args.seed if args.seed is not None else random.randrange(10**9)
        what = "gradients, " if args.grad else ""
        if args.summary_file is None:
            print(f"fuzz: {what}seeds from {first}, modes {' '.join(args.modes)}", flush=True)
        if args.survive_crashes:
            return supervise(args, first, failures)
        programs = ((f"seed {seed}", generate(RandomChooser(seed), seed)) for seed in itertools.count(first))
        deadline = time.monotonic() + 60 * args.minutes
    if args.grad:
        from fuzz_grad import check_gradient
        from fuzz_grad_regressions import known_bug

        stats: Counter = Counter()
        return run(programs, args.modes, deadline, failures, args.shrink,
                   check=partial(check_gradient, stats=stats), stats=stats, shrink_check=check_gradient,
                   known=known_bug, grad=True, summary_file=args.summary_file)
    stats = Counter()
    return run(programs, args.modes, deadline, failures, args.shrink,
               check=partial(check_program, stats=stats), stats=stats, shrink_check=check_program,
               summary_file=args.summary_file)


def supervise(args: argparse.Namespace, first: int, failures: Path) -> int:
    """``--survive-crashes``: generate in a child process (this CLI, from seed ``first``) until
    the deadline; where a child dies in a check (XLA aborts the process on some programs in mode
    jax), note the program it was checking (``current_path``) as a crash in the failures file
    and start a new child from the next seed. Each child prints its own disagreements and
    distinct problems; the summary adds up the children's."""
    deadline = time.monotonic() + 60 * args.minutes
    part, counts = failures.with_name(failures.name + ".part"), failures.with_name(failures.name + ".counts")
    total = dict(checked=0, elapsed=0.0, failing=0, unknown=0, per_mode=Counter(), stats=Counter())
    crashes: list[str] = []
    failures.write_text("")
    seed = first
    while True:
        counts.unlink(missing_ok=True)
        minutes = max(deadline - time.monotonic(), 0.0) / 60
        command = [sys.executable, str(Path(__file__).with_name("__main__.py")), "--seed", str(seed),
                   "--minutes", f"{minutes:.4f}", "--modes", *args.modes, "--shrink", str(args.shrink),
                   "--failures", str(part), "--summary-file", str(counts)] + (["--grad"] if args.grad else [])
        child = subprocess.run(command)
        with failures.open("a") as out:
            out.write(part.read_text() if part.exists() else "")
        if counts.exists():  # a child that died wrote the counts of the programs before
            summary = json.loads(counts.read_text())
            for key in ("checked", "elapsed", "failing", "unknown"):
                total[key] += summary[key]
            total["per_mode"].update(summary["per_mode"])
            total["stats"].update(summary["stats"])
        running = current_path(part)
        if not running.exists():  # the child ran to its deadline (or died shrinking: its counts are in)
            break
        text = running.read_text()
        running.unlink()
        label = text.splitlines()[0].lstrip("# ")
        crashes.append(label)
        total["checked"] += 1
        print(f"{label}: the process died in it (exit code {child.returncode}); going on from the next seed",
              flush=True)
        with failures.open("a") as out:
            out.write(f"# {label}: crash: the process died checking it (exit code {child.returncode})\n"
                      f"{text.partition(chr(10))[2]}\n")
        seed = int(label.split()[-1]) + 1
        if time.monotonic() > deadline:
            break
    part.unlink(missing_ok=True)
    counts.unlink(missing_ok=True)
    total["crashes"] = crashes
    print_summary(total, args.modes, args.grad, failures)
    return 1 if total["failing"] or crashes else 0


def _replayed(path: str, grad: bool = False):
    """(label, program) of the regression list (the gradients' with ``grad``; a known bug's
    entry says so), or of each ``Program(...)`` in a failures file."""
    if not path and grad:
        from fuzz_grad_regressions import GRAD_REGRESSIONS

        return ((f"grad regression {i}: {why}" + (f" [known bug: {bug}]" if bug else ""), program)
                for i, (why, program, bug) in enumerate(GRAD_REGRESSIONS))
    if not path:
        from fuzz_regressions import REGRESSIONS

        return ((f"regression {i}: {why}", program) for i, (why, program) in enumerate(REGRESSIONS))
    texts = re.findall(r"^Program\(.*?^\)$", Path(path).read_text(), flags=re.S | re.M)
    return ((f"{path} program {i}", parse_program(text)) for i, text in enumerate(texts))


def run(programs, modes: list[str], deadline: float | None, failures_path: Path, shrink_seconds: float = 0,
        check=check_program, stats: Counter | None = None, shrink_check=None, known=None, grad: bool = False,
        summary_file: Path | None = None) -> int:
    """Check programs until the deadline (or the end) with ``check`` (``check_program``, or
    fuzz_grad's ``check_gradient`` with ``grad``, filling ``stats``: the programs each mode
    skipped, and the gradients' counts; ``shrink_check`` is the same check for the shrinker,
    which must not count; ``known(program, d)`` names the open bug a disagreement is, if any);
    report, write the failures file. With ``summary_file`` (a ``--survive-crashes`` child) the
    counts go there as JSON, before each program and at the end, instead of the summary lines."""
    known = known or (lambda program, d: None)
    stats = Counter() if stats is None else stats
    start = time.monotonic()
    summary = dict(checked=0, elapsed=0.0, failing=0, unknown=0, per_mode=Counter(), stats=stats)
    problems: dict[str, list[tuple[str, Program, set]]] = {}  # problem -> (label, program, modes)
    known_as: dict[str, set] = {}  # problem -> the known bugs (None: not one) its disagreements are
    failures_path.write_text("")
    current = current_path(failures_path)
    for label, program in programs:
        if deadline is not None and time.monotonic() > deadline:
            break
        current.write_text(f"# {label}\n{format_program(program)}\n")  # stays if the process dies in it
        if summary_file is not None:
            summary["elapsed"] = time.monotonic() - start
            summary_file.write_text(json.dumps(summary))
        found = check(program, modes)
        summary["checked"] += 1
        if not found:
            continue
        summary["failing"] += 1
        summary["per_mode"].update({d.mode for d in found})
        bugs = [known(program, d) for d in found]
        summary["unknown"] += None in bugs
        for problem in dict.fromkeys(d.problem() for d in found):
            problems.setdefault(problem, []).append((label, program, {d.mode for d in found if d.problem() == problem}))
            known_as.setdefault(problem, set()).update(b for d, b in zip(found, bugs) if d.problem() == problem)
        print(f"{label}: " + "; ".join(f"{d.mode} {d.kind}" + (f" (known bug {b})" if b else "")
                                       for d, b in zip(found, bugs)), flush=True)
        with failures_path.open("a") as out:
            out.write(_failure_text(label, program, found))
    current.unlink(missing_ok=True)
    summary["elapsed"] = time.monotonic() - start
    summary["stats"] = Counter(stats)  # as it is now: shrinking must not count
    if summary_file is not None:
        summary_file.write_text(json.dumps(summary))
    if problems:
        print("\ndistinct problems (programs, first program, modes showing it):")
        for problem, cases in sorted(problems.items(), key=lambda item: -len(item[1])):
            label, program, shown = cases[0]
            bugs = known_as[problem]
            note = "" if bugs == {None} else f" [known bug {' / '.join(sorted(b or 'none' for b in bugs))}]"
            print(f"  {len(cases):5d}  {label}  {problem}\n         in {_modes_text(shown, modes)}{note}")
            if shrink_seconds:
                _report_shrunk(program, shown, problem, modes, shrink_seconds, failures_path, shrink_check or check)
    if summary_file is None:
        print_summary(summary, modes, grad, failures_path)
    return 1 if summary["failing"] else 0


def print_summary(summary: dict, modes: list[str], grad: bool, failures_path: Path) -> None:
    """The summary lines: with ``grad`` the gradients' counts, then the last two (programs run;
    disagreements per mode, and the programs mode jax skipped and the crashes, if any)."""
    stats, per_mode, crashes = Counter(summary["stats"]), Counter(summary["per_mode"]), summary.get("crashes", [])
    if grad:
        runs = " ".join(f"{mode}={stats[f'mode {mode}']}" for mode in modes)
        print(f"fuzz: {stats['gradient programs']} programs with a gradient ({stats['no gradient']} without: "
              f"no float read or input, or scan() raised); must raise {stats['must raise']}, may raise "
              f"{stats['may raise']}; gradients run per mode: {runs}; finite differences on "
              f"{stats['finite differences']} programs, {stats['entries compared']} entries compared, "
              f"{stats['entries skipped']} skipped (a step changes a branch or an until's step count); "
              f"{summary['unknown']} programs with a disagreement that is no known bug")
    counts = " ".join(f"{mode}={per_mode[mode]}" for mode in ["build"] + modes)
    skips = " ".join(f"{mode}={stats[f'skipped {mode}']}" for mode in modes if MODES[mode]["mode"] == "jax")
    if skips:  # mode jax raised NotLowerable: neither an agreement nor a disagreement
        counts += f"; programs skipped (not lowerable): {skips}"
    if crashes:
        counts += f"; crashes (the process died): {len(crashes)} ({', '.join(crashes)})"
    checked, failing, elapsed = summary["checked"], summary["failing"], summary["elapsed"]
    written = f"; failing programs in {failures_path}" if failing or crashes else ""
    print(f"fuzz: {checked} programs in {elapsed / 60:.1f} min ({checked / max(elapsed, 1e-9):.1f}/s), "
          f"{failing} with disagreements{written}")
    print(f"fuzz: programs with a disagreement per mode: {counts}")


def current_path(failures_path: Path) -> Path:
    """Where ``run`` keeps the program it is checking (``failures.txt.current``): a process that
    dies in a check (XLA aborting in mode jax) leaves it there, for ``--show`` or ``--replay``."""
    return failures_path.with_name(failures_path.name + ".current")


def _modes_text(shown: set, modes: list[str]) -> str:
    missing = [m for m in modes if m not in shown and m != "py"]
    text = " ".join(m for m in ["build"] + modes if m in shown)
    return text + (f" (not in {' '.join(missing)})" if missing and len(shown) > 1 else "")


def _report_shrunk(program: Program, shown: set, problem: str, modes: list[str], seconds: float,
                   failures_path: Path, check=check_program) -> None:
    from fuzz_shrink import shrink

    small = shrink(program, problem, shown, modes, seconds, check=check)
    shown = {d.mode for d in check(small, modes) if d.problem() == problem}
    text = f"# shrunk: {problem}\n#   in {_modes_text(shown, modes)}\n{format_program(small)}\n\n"
    print(text)
    with failures_path.open("a") as out:
        out.write(text)


def _failure_text(label: str, program: Program, found: list[Disagreement]) -> str:
    lines = [f"# {label}"] + [f"#   {d.mode}: {d.kind}: {d.detail}".replace("\n", " ") for d in found]
    return "\n".join(lines) + "\n" + format_program(program) + "\n\n"


def show(program: Program, modes: list[str]) -> None:
    """The program, the reference's outcome and each mode's."""
    from fuzz_build import build_program
    from fuzz_compare import run_mode

    print(format_program(program))
    try:
        print("reference:", run_program(program))
    except ExpectedError as err:
        print("reference: error:", err)
    try:
        graph = build_program(program)
    except Exception as err:
        print(f"build: {type(err).__name__}: {err}")
        return
    for mode in modes:
        try:
            print(f"{mode}:", run_mode(graph, mode))
        except Exception as err:
            print(f"{mode}: {type(err).__name__}: {err}")
    for d in check_program(program, modes):
        print(f"DISAGREES {d.mode}: {d.kind}: {d.detail}")


if __name__ == "__main__":
    sys.exit(main())
