"""Median time of each stage, per backend, for a few representative cases.

    .venv/bin/python benchmarks/stages.py [--repeat 3] [--backend tosa ...] [--case tanh ...]

Timings come from the Results (the runner's own stage timers), not from a
stopwatch around the run. Each (case, backend) runs alone in a fresh job, so
every backend pays its own export and its own unbatched compile: these are
per-case costs, not a matrix run's amortised ones (see throughput.py).
The compile cache is off.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tabulate import tabulate  # noqa: E402

from conformance.execution.engine import Engine  # noqa: E402
from conformance.settings import Settings  # noqa: E402

BACKENDS = ["torch", "linalg", "tosa", "stablehlo", "tosa-ref"]
CASES = ["tanh", "matmul", "mlp", "resnet18"]
STAGES = ["eager", "export", "import", "contract", "lower", "compile", "run", "compare"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backend", action="append")
    parser.add_argument("--case", action="append")
    args = parser.parse_args()
    backends, cases = args.backend or BACKENDS, args.case or CASES

    timings: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    outcome: dict[tuple[str, str], str] = {}
    engine = Engine(Settings(backends=backends, batch_size=1, cache_dir=None))
    try:
        for _ in range(args.repeat):
            for case in cases:
                for backend in backends:
                    for result in engine.run([(case, backend)], max_batch=1):
                        outcome[result.key] = result.status if result.passed else f"{result.code} at {result.stage}"
                        for stage, seconds in result.timings.items():
                            timings[result.key][stage].append(seconds)
                        print(f"  {case}[{backend}]: {outcome[result.key]}", file=sys.stderr)
    finally:
        engine.close()

    for case in cases:
        rows = []
        for backend in backends:
            per_stage = timings[(case, backend)]
            medians = [statistics.median(per_stage[s]) if per_stage.get(s) else None for s in STAGES]
            total = sum(m for m in medians if m)
            rows.append([backend, *(f"{m:.3f}" if m is not None else "-" for m in medians), f"{total:.3f}", outcome.get((case, backend), "-")])
        print(f"\n{case} (median of {args.repeat}, seconds)")
        print(tabulate(rows, headers=["backend", *STAGES, "total", "outcome"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
