"""`conformance localize CASE --backend X`: the op that breaks a model case on a backend.

It runs the case (or reads its failure from --results), then cuts the
exported graph into op prefixes and binary-searches the first that fails
the same way, each through the backend's own stages in a supervised child;
then it checks the op there (and, for numerics, the ops feeding it) alone
on eager's activations against fp64. It prints the op, its source line and
the errors, and leaves a one-op case file and its reproducer bundle.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conformance import run_options as ro
from conformance.cli.common import add_group, one_backend, recorded_failure

NAME = "localize"
HELP = "find the op that makes a case (a model, or an op case of several ops) fail on a backend (binary search over its exported graph)"
DEFAULT_OUTPUT = "reports/localized"


# What a localization uses of the run options (its runs are never re-run nor judged by xfail sets).
EXECUTION = (ro.SEED, ro.CASE_TIMEOUT, ro.BATCH_SIZE, ro.MEMORY_LIMIT, ro.CACHE_DIR, ro.NO_CACHE, ro.ARTIFACTS, ro.EXPORT_MODE)


def add_arguments(parser) -> None:
    parser.add_argument("case", metavar="CASE", help="a case id: a model (conformance list --tag model), or an op case of several ops")
    ro.BACKEND.add_to(parser, required=True, help="the backend it fails on (one)")
    ro.RESULTS.add_to(parser, help="take the case's failure from this report (a report directory or results.jsonl) instead of running it")
    parser.add_argument("--output-dir", type=ro.writable_dir, default=DEFAULT_OUTPUT, metavar="DIR",
                        help=f"where the workspace (cuts, one-op case, bundle, localized.json) goes: DIR/CASE/BACKEND (default {DEFAULT_OUTPUT})")
    parser.add_argument("--json", action="store_true", help="print the whole record as JSON")
    add_group(parser, "cases", (ro.CASES, ro.NO_DEFAULT_CASES, ro.SUITE))
    add_group(parser, "execution", EXECUTION)


def backend_specs(args) -> list[str]:
    return ro.parse_backends(args.backend)


def run(args) -> int:
    from conformance.localize.localizer import LocalizeError, localize, workspace_for
    from conformance.localize.record import summary

    spec, backend, settings = one_backend(args, "localize")
    failure = recorded_failure(args.results, args.case, backend.name) if args.results else None

    def log(line: str) -> None:
        print(f"conformance localize: {line}", file=sys.stderr)

    workspace = workspace_for(Path(args.output_dir), args.case, backend.name)
    try:
        record = localize(args.case, spec, settings, workspace, failure=failure, log=log)
    except LocalizeError as e:
        print(f"conformance localize: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(record, indent=1))
    else:
        print(f"{args.case} [{backend.name}] {record['code']}: {summary(record)}")
        print(f"  first failing cut: op {record['first_failing_cut']['index']} ({record['first_failing_cut']['node']}); "
              f"{record['cuts_run']} cuts run, {record['seconds']} s")
        print(f"  one-op case: {record['case_file']}")
        if record.get("context"):
            print(f"  fails in its context ({record['context']['kind']}): {record['context']['case_file']}")
        if record.get("bundle"):
            print(f"  bundle: {record['bundle']}/reproduce.sh")
        print(f"  record: {record['workspace']}/localized.json")
    return 0
