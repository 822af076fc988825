"""Throughput of conformance runs: cases per minute cold and warm, where the time goes, memory.

    .venv/bin/python benchmarks/throughput.py [--backend tosa ...] [--sample 240] [--repeat 3] [-j 2] [--executor lanes,ray]

For each backend: a cold run (empty compile cache) and a warm re-run of the
same cases, `--repeat` times; the medians are printed. Then the matrix: all
the backends in one run (sharing each case's export), cold, against the sum
of the backends run one by one. Figures:

  cases/min   (case, backend) results per minute of wall time
  stage %     each stage's share of lane time (wall x lanes), from the Results' own timers
  overhead    lane time outside every stage timer: child start-up, registry
              loading, messaging, scheduling, lanes idle at the end
  per pair    that overhead per result, in milliseconds of lane time
  peak RSS    the largest peak resident set of any supervised child

With `--executor lanes,ray` every measurement is made with each executor on
the same cases, in turns (the first one alternates between repeats), so the
overhead per pair of Ray's actors (actor start-up, a result streamed back
through Ray) compares with the lanes' in one run. Starting Ray itself
(ray.init) is not in it: it is printed apart. The machine may be shared: the
load average is printed before and after, read the medians with it.

The cases are the default registry's op cases (`--kind model` for models),
`--sample N` of them taken evenly so every family is represented.
The last line is the summary: cold cases/min, warm/cold ratio, overhead share.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tabulate import tabulate  # noqa: E402

from conformance import run_options  # noqa: E402
from conformance.nightly import options as nightly_options  # noqa: E402
from conformance.backends import loader  # noqa: E402
from conformance.cases.registry import Registry, discover  # noqa: E402
from conformance.settings import Settings  # noqa: E402
from conformance.nightly import executors  # noqa: E402
from conformance.nightly.matrix import matrix_pairs, plan  # noqa: E402

STAGES = ["eager", "export", "import", "contract", "lower", "compile", "run", "compare", "cache"]


def measure(cases, backends, cache_dir, executor, batch):
    """One run: wall seconds, results, peak child RSS (MB)."""
    settings = Settings(backends=backends, cache_dir=cache_dir, batch_size=batch)
    pairs = matrix_pairs([c.id for c in cases], backends)
    results = []
    start = time.monotonic()
    stats = executor.run(plan(pairs, batch, {c.id for c in cases if c.kind == "model"}), settings, results.append)
    return time.monotonic() - start, results, stats["peak_rss_mb"]


def figures(wall, results, workers):
    lane_time = wall * workers
    stages = defaultdict(float)
    for r in results:
        for stage, seconds in r.timings.items():
            stages[stage] += seconds
    timed = sum(stages.values())
    return {
        "cases_per_min": len(results) / wall * 60,
        "stages": {s: stages.get(s, 0.0) / lane_time for s in STAGES},
        "overhead": max(0.0, 1 - timed / lane_time),
        "overhead_per_pair_ms": max(0.0, lane_time - timed) / max(1, len(results)) * 1000,
        "pass": sum(r.passed for r in results),
        "n": len(results),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", action="append", help="default: every shipped backend in the matrix")
    parser.add_argument("--kind", default="op", choices=["op", "model", "all"])
    parser.add_argument("--sample", type=int, default=240, help="cases taken evenly from the registry (0: all)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("-j", "--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--skip-matrix", action="store_true")
    parser.add_argument("--executor", default="lanes", type=run_options.comma_list, help="lanes, ray or lanes,ray (default lanes)")
    args = parser.parse_args()
    print(f"load average {load()} (2 cores shared: read the medians with it)", file=sys.stderr)
    names = args.executor
    started = {}
    for name in names:
        nightly_options.executor(name)
        begin = time.monotonic()
        started[name] = executors.start(name, args.workers)
        print(f"{name}: {started[name].describe()}, started in {time.monotonic() - begin:.1f} s", file=sys.stderr)

    backends = run_options.parse_backends(args.backend) or loader.matrix_names()
    cases = [c for c in Registry.load(discover()) if args.kind == "all" or c.kind == args.kind]
    if args.sample and len(cases) > args.sample:
        step = len(cases) / args.sample
        cases = [cases[int(i * step)] for i in range(args.sample)]
    print(f"{len(cases)} {args.kind} cases x {len(backends)} backends, {args.workers} lanes, repeat {args.repeat}", file=sys.stderr)

    per_backend = {}  # (backend, executor) -> cold runs, warm runs, peak RSS
    for backend in backends:
        for attempt in range(args.repeat):
            for name in in_turn(names, attempt):
                cold_runs, warm_runs, rss = per_backend.setdefault((backend, name), ([], [], []))
                with tempfile.TemporaryDirectory(prefix="conformance-bench-cache-") as cache:
                    wall, results, peak = measure(cases, [backend], cache, started[name], args.batch_size)
                    cold_runs.append((wall, figures(wall, results, args.workers)))
                    wall_w, results_w, peak_w = measure(cases, [backend], cache, started[name], args.batch_size)
                    warm_runs.append((wall_w, figures(wall_w, results_w, args.workers)))
                    rss.append(max(peak, peak_w))
                print(f"  {backend} {name} #{attempt + 1}: cold {cold_runs[-1][1]['cases_per_min']:.0f}/min, "
                      f"warm {warm_runs[-1][1]['cases_per_min']:.0f}/min, load {load()}", file=sys.stderr)  # fmt: skip

    rows = []
    for (backend, name), (cold_runs, warm_runs, rss) in per_backend.items():
        cold = statistics.median(f["cases_per_min"] for _, f in cold_runs)
        warm = statistics.median(f["cases_per_min"] for _, f in warm_runs)
        stage_share = {s: statistics.median(f["stages"][s] for _, f in cold_runs) for s in STAGES}
        overhead = statistics.median(f["overhead"] for _, f in cold_runs)
        per_pair = [statistics.median(f["overhead_per_pair_ms"] for _, f in runs) for runs in (cold_runs, warm_runs)]
        last = cold_runs[-1][1]
        rows.append([
            backend, name, f"{cold:.0f}", f"{warm:.0f}", f"{warm / cold:.1f}x",
            *(f"{100 * stage_share[s]:.0f}" for s in STAGES),
            f"{100 * overhead:.1f}%", *(f"{ms:.0f}" for ms in per_pair), f"{max(rss):.0f}", f"{last['pass']}/{last['n']}",
        ])
    print()
    print(tabulate(rows, headers=["backend", "executor", "cold/min", "warm/min", "warm/cold", *(f"{s}%" for s in STAGES), "overhead",
                                  "per pair ms cold", "warm", "peak RSS MB", "pass"]))  # fmt: skip

    if not args.skip_matrix and len(backends) > 1:
        for name in names:
            matrix_walls = []
            for _ in range(args.repeat):
                with tempfile.TemporaryDirectory(prefix="conformance-bench-cache-") as cache:
                    wall, results, _ = measure(cases, backends, cache, started[name], args.batch_size)
                    matrix_walls.append(wall)
            matrix = statistics.median(matrix_walls)
            separate = sum(statistics.median(w for w, _ in per_backend[b, name][0]) for b in backends)
            print(f"\nmatrix of {len(backends)} backends in one run ({name}): {matrix:.0f} s cold; one backend at a time: {separate:.0f} s; "
                  f"{separate / matrix:.1f}x faster together")

    for executor in started.values():
        executor.close()
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"this process peaked at {own:.0f} MB; load average {load()}")
    lead = "tosa" if "tosa" in backends else backends[0]
    for name in names:
        cold_runs, warm_runs, _ = per_backend[lead, name]
        cold = statistics.median(f["cases_per_min"] for _, f in cold_runs)
        warm = statistics.median(f["cases_per_min"] for _, f in warm_runs)
        overhead = statistics.median(f["overhead"] for _, f in cold_runs)
        per_pair = statistics.median(f["overhead_per_pair_ms"] for _, f in warm_runs)
        print(f"summary ({lead}, {name}): cold {cold:.0f} cases/min, warm/cold {warm / cold:.1f}x, overhead {100 * overhead:.1f}% of wall, "
              f"{per_pair:.0f} ms per pair warm")  # fmt: skip
    return 0


def in_turn(names: list[str], attempt: int) -> list[str]:
    """The executors in the order of this attempt: the first one alternates, so neither always meets the machine fresh."""
    shift = attempt % len(names)
    return names[shift:] + names[:shift]


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
