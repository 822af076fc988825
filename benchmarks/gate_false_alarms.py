"""How often identical runs trip the gates: golden figures from one run, judged against several others.

    .venv/bin/python benchmarks/gate_false_alarms.py GOLDEN RUN [RUN ...] [--gates-dir DIR] [--tolerance FIGURE=REL,ABS ...]
                                                     [--run-statistic median|min] [--trips]

GOLDEN and each RUN are report directories of the same command made with
--gates (e.g. `conformance nightly --backend linalg,tosa,stablehlo --tag model
--gates --no-cache`, run several times on an otherwise unchanged checkout).
The golden figures are written from GOLDEN as `conformance gates update`
writes them (in a temporary directory); the tolerances are the figures'
defaults, those of the gates files in --gates-dir, or those given. Every
passing pair of every RUN is then judged as `--gates` judges it, and the
script prints, per figure, how many (pair, figure) judgements there were,
how many tripped (beyond tolerance: a false alarm, since nothing changed)
and how many fell below, with the worst deviations seen: what a tolerance
must allow for identical runs not to trip it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.gates import judge  # noqa: E402
from conformance.gates.figures import FIGURES, RUN_STATS, Tolerance  # noqa: E402
from conformance.gates.sets import GateSet  # noqa: E402
from conformance.gates.update import update  # noqa: E402
from conformance.report_dir import latest, read_results  # noqa: E402


def tolerance_arg(text: str) -> tuple[str, Tolerance]:
    name, _, bounds = text.partition("=")
    relative, _, absolute = bounds.partition(",")
    if name not in FIGURES:
        raise argparse.ArgumentTypeError(f"unknown figure {name!r}; known: {', '.join(FIGURES)}")
    return name, Tolerance(float(relative or 0), float(absolute or 0))


def results_of(directory: Path, statistic: str) -> list:
    """A report's latest results, their run time (the figure read as the median) taken as `statistic`."""
    results = latest(read_results(directory))
    for r in results:
        stats = (r.extras or {}).get(RUN_STATS)
        if stats and statistic != "median" and f"{statistic}_seconds" in stats:
            stats["median_seconds"] = stats[f"{statistic}_seconds"]
    return results


def golden_sets(golden: list, directory: Path, gates_dir: Path | None, overrides: dict[str, Tolerance]) -> dict[str, GateSet]:
    results = golden
    sets = {}
    for backend in sorted({r.backend for r in results}):
        gates = GateSet.load(directory, backend)
        if gates_dir is not None:
            gates.tolerance = dict(GateSet.load(gates_dir, backend).tolerance)
        gates.tolerance.update(overrides)
        update(gates, results, chosen=lambda case: True, known_cases=None)
        sets[backend] = gates
    return sets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("golden", type=Path)
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--gates-dir", type=Path, help="take the tolerances of these gates files")
    parser.add_argument("--tolerance", type=tolerance_arg, action="append", default=[], metavar="FIGURE=REL,ABS")
    parser.add_argument("--trips", action="store_true", help="also list every (run, pair, figure) that tripped")
    parser.add_argument(
        "--run-statistic", choices=("median", "min"), default="median",
        help="judge run times by this statistic of the timed calls (what if the gate took the fastest call?)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        sets = golden_sets(results_of(args.golden, args.run_statistic), Path(scratch), args.gates_dir, dict(args.tolerance))
        judged: dict[str, int] = defaultdict(int)
        states: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        worst_up: dict[str, float] = defaultdict(float)
        worst_pair: dict[str, str] = {}
        worst_down: dict[str, float] = defaultdict(float)
        worst_abs: dict[str, float] = defaultdict(float)
        tripped_pairs: set = set()
        trips = []
        pairs = 0
        for number, run in enumerate(args.runs, 1):
            for result in results_of(run, args.run_statistic):
                gates = sets.get(result.backend)
                found = judge.judge(result, gates) if gates else None
                if not found:
                    continue
                pairs += 1
                for f in found["figures"]:
                    name = f["figure"]
                    judged[name] += 1
                    states[name][f["state"]] += 1
                    if f["golden"]:
                        ratio = f["measured"] / f["golden"] - 1
                        if ratio > worst_up[name]:
                            worst_up[name], worst_pair[name] = ratio, f"{result.case}[{result.backend}]"
                        worst_down[name] = min(worst_down[name], ratio)
                    worst_abs[name] = max(worst_abs[name], abs(f["measured"] - f["golden"]))
                    if f["state"] == judge.BEYOND:
                        tripped_pairs.add((number, result.key))
                        trips.append(f"run {number} {result.case}[{result.backend}]: {judge.describe(f)}")
        rows = [
            [name, FIGURES[name].unit, sets and next(iter(sets.values())).tolerance_of("", name).describe(FIGURES[name].unit),
             judged[name], states[name][judge.BEYOND], states[name][judge.BELOW],
             f"{worst_up[name]:+.1%}", worst_pair.get(name, "-"), f"{worst_down[name]:+.1%}", f"{worst_abs[name]:.4g}"]
            for name in FIGURES
        ]
    print(f"golden: {args.golden}; {len(args.runs)} identical runs judged against it: {pairs} (run, pair) judgements, "
          f"{sum(judged.values())} (run, pair, figure) judgements, {sum(s[judge.BEYOND] for s in states.values())} tripped "
          f"({len(tripped_pairs)} (run, pair)s with at least one figure beyond)")
    print(tabulate(rows, headers=["figure", "unit", "tolerance", "judged", "tripped", "below", "worst up", "(pair)", "worst down", "worst |Δ|"]))
    if args.trips:
        print("\n".join(["", "tripped:", *trips]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
