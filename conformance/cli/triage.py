"""`conformance triage`: failures grouped into root causes (stage, code, op, the tool that failed), largest first; then the flaky pairs."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.cli.common import fail

NAME = "triage"
HELP = "group a run's failures into root causes (stage, code, op, the tool that failed, across backends), largest first"


def add_arguments(parser) -> None:
    parser.add_argument("source", nargs="?", help="a report directory or results.jsonl (default: the latest report in reports/)")
    parser.add_argument("--backend", action="append", help="only these backends")
    parser.add_argument("--limit", type=int, default=50, help="groups shown (default 50)")
    parser.add_argument("--json", action="store_true", help="the groups as JSON")


def run(args) -> int:
    from tabulate import tabulate

    from conformance.execution.reruns import ATTEMPTS, in_a_word
    from conformance.report.triage import root_causes
    from conformance.report_dir import CASES, has_results, latest, read_json, read_results, report_dirs
    from conformance.taxonomy import Status

    source = Path(args.source) if args.source else (report_dirs(Path("reports")) or [None])[-1]
    if source is None or not (source.is_file() or has_results(source)):
        fail(f"no results found at {args.source or 'reports/'}; run `conformance nightly` first or name a report directory")
    results = latest(read_results(source))
    if args.backend:
        results = [r for r in results if r.backend in set(args.backend)]
    cases = read_json(source if source.is_dir() else source.parent, CASES, {})
    groups = root_causes(results, cases)
    if args.json:
        print(json.dumps([g.to_dict() for g in groups], indent=1))
        return 0
    if groups:
        failures = sum(g.count for g in groups)
        print(f"{failures} failures in {len(groups)} root-cause groups")
        # The # counts over the whole directory, --backend or not: `conformance issue #` names the same group.
        numbers = {g.id: n for n, g in enumerate(root_causes(latest(read_results(source)), cases), 1)} if args.backend else None
        rows = [[numbers[g.id] if numbers else n, g.id, g.count, g.code_label, g.op or "-", g.tool, g.backends_label(), g.example.case,
                 g.example.explanation[:120]] for n, g in enumerate(groups[: args.limit], 1)]
        print(tabulate(rows, headers=["#", "id", "count", "code", "op", "tool", "backends", "example", "explanation"]))
        if len(groups) > args.limit:
            print(f"... and {len(groups) - args.limit} smaller groups (--limit N, or --json for all)")
        print("an issue file for a group: conformance issue ID --results DIR (docs/filing-issues.md)")
    flaky = sorted((r for r in results if r.status == Status.FLAKY), key=lambda r: (r.backend, r.case))
    if flaky:
        print(f"\nflaky: {len(flaky)} pairs whose runs disagree (not failures: no group above holds them)")
        rows = [[r.backend, r.case, " / ".join(in_a_word(a) for a in r.extras.get(ATTEMPTS) or []), r.explanation[:150]] for r in flaky]
        print(tabulate(rows, headers=["backend", "case", "runs", "explanation"]))
    if not groups and not flaky:
        print("no failures")
    return 0
