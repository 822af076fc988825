"""`conformance reduce CASE --backend B`: a failing case shrunk while it fails the same way.

The case (a registry case, an OpInfo sample, a fuzz case, a localized
model op: an id, or a case file's path) becomes a program of its exported
graph; one-step reductions (fewer ops, smaller and fewer dims, narrower
dtypes, plainer values) run in batches through the backend, and the
smallest that still fails with the same stage, code and op is written as
a one-file case with its reproducer bundle. See docs/fuzz.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conformance import run_options as ro
from conformance.cli.common import add_group, duration, one_backend, recorded_failure

NAME = "reduce"
HELP = "shrink a failing case while it fails the same way (stage, code, op); write the smallest as a case file and bundle"
DEFAULT_OUTPUT = "reports/reduced"

EXECUTION = (ro.SEED, ro.CASE_TIMEOUT, ro.BATCH_SIZE, ro.MEMORY_LIMIT, ro.CACHE_DIR, ro.NO_CACHE, ro.EXPORT_MODE)


def add_arguments(parser) -> None:
    parser.add_argument("case", metavar="CASE", help="a case id (conformance list), or the path of a case file declaring one case")
    ro.BACKEND.add_to(parser, required=True, help="the backend it fails on (one)")
    ro.RESULTS.add_to(parser, help="take the case's failure from this report (a report directory or results.jsonl) instead of running it")
    parser.add_argument("--budget", type=duration, default=600.0, metavar="DURATION", help="time to reduce, at most (default 10m)")
    parser.add_argument("--runs", type=ro.whole_number_from(1), default=1000, metavar="N", help="reduced programs run, at most (default 1000)")
    parser.add_argument("--output-dir", type=ro.writable_dir, default=DEFAULT_OUTPUT, metavar="DIR",
                        help=f"where the reduced case, its bundle and reduced.json go: DIR/CASE/BACKEND (default {DEFAULT_OUTPUT})")
    parser.add_argument("--json", action="store_true", help="print the whole record as JSON")
    add_group(parser, "cases", (ro.CASES, ro.NO_DEFAULT_CASES, ro.SUITE))
    add_group(parser, "execution", EXECUTION)


def backend_specs(args) -> list[str]:
    return ro.parse_backends(args.backend)


def run(args) -> int:
    from conformance.reduce.reducer import ReduceError, reduce_case, resolve_case, workspace_for

    spec, backend, settings = one_backend(args, "reduce")

    def log(line: str) -> None:
        print(f"conformance reduce: {line}", file=sys.stderr)

    try:
        case_id, settings = resolve_case(args.case, settings)
        failure = recorded_failure(args.results, case_id, backend.name) if args.results else None
        record = reduce_case(case_id, spec, settings, workspace_for(Path(args.output_dir), case_id, backend.name),
                             failure=failure, seconds=args.budget, runs=args.runs, log=log)
    except ReduceError as e:
        print(f"conformance reduce: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(record, indent=1))
        return 0
    op = f" ({record['op']})" if record["op"] else ""
    print(f"{case_id} [{backend.name}] {record['code']} at {record['stage']}{op}")
    print(f"  from {record['from']}")
    print(f"  to   {record['to']}, inputs {', '.join(record['inputs']) or 'none'}")
    print(f"  {record['runs']} programs run in {record['rounds']} rounds, {record['seconds']} s"
          + (" (out of budget: it may go smaller)" if record["out_of_budget"] else ""))
    print(f"  case file: {record['case_file']} ({'confirmed' if record['confirmed'] else 'NOT confirmed: ' + str(record['confirm'])})")
    if record.get("bundle"):
        print(f"  bundle: {record['bundle']}/reproduce.sh")
    return 0 if record["confirmed"] else 1
