"""`conformance merge`: combine sharded report directories into one report."""

from __future__ import annotations

import json
from pathlib import Path

from conformance import run_options
from conformance.cli.common import fail

NAME = "merge"
HELP = "combine the report directories of shards (--shard I/N) into one report, as an unsharded run would give"


def add_arguments(parser) -> None:
    parser.add_argument("directories", nargs="+", metavar="DIR", help="report directories of the shards")
    parser.add_argument("-o", "--output", help="the merged report directory (default: <output-dir>/<first>-merged)")
    run_options.BASELINE.add_to(parser, help="report to compare with (default: none)")


def merge_runs(runs: list[dict]) -> dict:
    merged = dict(runs[0])
    merged["started"] = min(r["started"] for r in runs)
    finished = [r.get("finished") for r in runs]
    merged["finished"] = max(finished) if all(finished) else None
    # Shards run side by side on separate machines: the night took as long as the slowest.
    merged["wall_seconds"] = max(r.get("wall_seconds") or 0.0 for r in runs)
    merged["shards"] = sorted(s for r in runs for s in r.get("shards", []))
    merged["backends"] = sorted({b for r in runs for b in r["backends"]})
    return merged


def run(args) -> int:
    from conformance.nightly.store import ResultsFile, latest, read_results
    from conformance.report.build import build_reports

    dirs = [Path(d) for d in args.directories]
    for d in dirs:
        if not (d / "results.jsonl").exists() or not (d / "run.json").exists():
            fail(f"{d} is not a report directory (needs results.jsonl and run.json)")
    output = Path(args.output) if args.output else dirs[0].parent / f"{dirs[0].name}-merged"
    if (output / "results.jsonl").exists():
        fail(f"{output} already holds results; choose another --output")
    output.mkdir(parents=True, exist_ok=True)
    results = latest(r for d in dirs for r in read_results(d))
    store = ResultsFile(output)
    for r in sorted(results, key=lambda r: r.key):
        store.append(r)
    store.close()
    cases: dict = {}
    for d in dirs:
        if (d / "cases.json").exists():
            cases.update(json.loads((d / "cases.json").read_text()))
    (output / "cases.json").write_text(json.dumps(cases, indent=0, sort_keys=True))
    (output / "run.json").write_text(json.dumps(merge_runs([json.loads((d / "run.json").read_text()) for d in dirs]), indent=1, sort_keys=True))
    baseline = None if args.baseline in (None, "none") else Path(args.baseline)
    build_reports(output, baseline)
    print(f"merged {len(dirs)} report directories ({len(results)} results) into {output}")
    return 0
