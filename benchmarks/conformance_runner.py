"""One conformance run over a list of cases, as nightly runs them, in a process of its own: benchmarks/peer.py's side.

    PYTHONPATH=TREE .venv/bin/python benchmarks/conformance_runner.py --cases SPEC --ids IDS.txt --backend tosa
        --cache-dir DIR [--batch-size 16] --json OUT.json

The conformance imported is whichever PYTHONPATH names first, so peer.py
can run two versions of it (before and after a change) on the same cases.
As `conformance nightly -j 1` does: the registry loaded in this process
(to plan jobs), the jobs planned, then nightly's executor with one lane
(one supervised child, started here). The JSON holds the executor's wall
time, its peak child RSS, each result's stage timings and verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def main() -> int:
    started = time.monotonic()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", action="append", required=True, help="case sources, as --cases takes them")
    parser.add_argument("--ids", type=Path, required=True, help="the case ids to run, one a line")
    parser.add_argument("--backend", required=True)
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--reruns", type=int, required=True)
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args()

    from conformance.cases.registry import Registry, discover, sources_of
    from conformance.settings import Settings
    from conformance.nightly import executors
    from conformance.nightly.matrix import matrix_pairs, plan

    ids = [line.strip() for line in args.ids.read_text().splitlines() if line.strip()]
    settings = Settings(
        backends=[args.backend], case_paths=args.cases, default_cases=False, cache_dir=args.cache_dir, batch_size=args.batch_size,
        reruns=args.reruns,
    )
    registry = Registry.load(sources_of(settings), settings.suites)
    missing = [i for i in ids if i not in {c.id for c in registry}]
    if missing:
        parser.error(f"{args.ids}: not among the cases of {args.cases}: {', '.join(missing[:5])}")
    heavy = {registry[i].id for i in ids if registry[i].kind == "model"}
    jobs = plan(matrix_pairs(ids, [args.backend]), settings.batch_size, heavy)
    results = []
    executor = executors.start("lanes", 1)
    run_start = time.monotonic()
    stats = executor.run(jobs, settings, results.append)
    executor.close()
    now = time.monotonic()
    args.json.write_text(json.dumps({
        "process_wall": now - started, "executor_wall": now - run_start, "peak_rss_mb": stats["peak_rss_mb"],
        "results": [
            {"case": r.case, "status": r.status, "stage": r.stage, "code": r.code, "op": r.op, "timings": r.timings,
             "compile_stats": r.extras.get("compile_stats")}
            for r in results
        ],
    }))  # fmt: skip
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
