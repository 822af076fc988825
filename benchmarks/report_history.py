"""Time to read a pair history and to render report.html, on a full-size synthetic output directory.

    .venv/bin/python benchmarks/report_history.py [--pairs 10294] [--reports 30] [--fail-rate 0.3] [--details 4000]

Writes that many report directories (results.jsonl only, like a full
nightly's: a failure carries `--details` characters of diagnostics) into a
temporary directory, then times report.history.pair_histories for the last
one and the page's rendering with it, and prints the page's size.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.report_dir import ResultsFile  # noqa: E402
from conformance.report.diff import changes  # noqa: E402
from conformance.report.history import pair_histories  # noqa: E402
from conformance.report.html import render  # noqa: E402
from conformance.report.summary import build_summary  # noqa: E402
from conformance.result import Result  # noqa: E402

BACKENDS = ["eager", "tosa", "linalg", "stablehlo", "tosa-ref", "torch"]


def night(pairs: int, fail_rate: float, details: int, rng: random.Random) -> list[Result]:
    out = []
    for i in range(pairs):
        case, backend = f"family{i % 40}.case{i // len(BACKENDS)}", BACKENDS[i % len(BACKENDS)]
        if rng.random() < fail_rate:
            out.append(Result(case, backend, "fail", stage="lower", code="UNSUPPORTED_OP", op=f"aten.op{i % 300}",
                              explanation=f"failed to legalize aten.op{i % 300}", details=f"pair {i}: " + "x" * details,
                              timings={"export": 0.1, "lower": 0.2}))
        else:
            out.append(Result(case, backend, "pass", timings={"export": 0.1, "lower": 0.2, "run": 0.05}))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10294)
    parser.add_argument("--reports", type=int, default=30)
    parser.add_argument("--fail-rate", type=float, default=0.3)
    parser.add_argument("--details", type=int, default=4000)
    args = parser.parse_args()
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        size = 0
        for n in range(args.reports):
            store = ResultsFile(Path(tmp) / f"2026{n:04d}")
            results = night(args.pairs, args.fail_rate, args.details, rng)
            for r in results:
                store.append(r)
            store.close()
            size += store.path.stat().st_size
        last = Path(tmp) / f"2026{args.reports - 1:04d}"
        started, cpu = time.perf_counter(), time.process_time()
        history = pair_histories(last, results)
        read, read_cpu = time.perf_counter() - started, time.process_time() - cpu
        summary = build_summary(results, {"started": "now", "backends": BACKENDS}, {}, changes(results, None, None), [])
        started, cpu = time.perf_counter(), time.process_time()
        page = render(summary, results, {}, history)
        rendered, render_cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"{args.reports} reports x {args.pairs:,} pairs, {size / 2**20:,.0f} MB of results.jsonl")
    # CPU seconds too: on a shared machine the wall time says more about the neighbours than about the code.
    print(f"pair history read in {read:.2f} s ({read_cpu:.2f} s CPU); "
          f"report.html rendered in {rendered:.2f} s ({render_cpu:.2f} s CPU), {len(page) / 2**20:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
