"""`conformance list`: the registered cases, their suite and tags, counts per family, and what a source could not import."""

from __future__ import annotations

import json
from collections import Counter

from conformance import run_options
from conformance.cli.common import add_case_arguments, select_cases

NAME = "list"
HELP = "list the registered cases with their tags, and counts per family"


def add_arguments(parser) -> None:
    add_case_arguments(parser)
    parser.add_argument("--json", action="store_true", help="one JSON list: id, kind, family, tags, ops, inputs")


def run(args) -> int:
    from tabulate import tabulate

    from conformance.cases.registry import sources_of

    settings = run_options.settings_from(args)
    _, cases = select_cases(args, settings)
    if args.json:
        print(json.dumps([describe(c) for c in cases], indent=1, sort_keys=True))
        return 0
    rows = [[c.id, c.suite, c.kind, c.family, c.describe_inputs(), " ".join(sorted(c.all_tags - {c.kind, c.family}))] for c in cases]
    print(tabulate(rows, headers=["id", "suite", "kind", "family", "inputs", "tags"]))
    families = Counter((c.suite, c.kind, c.family) for c in cases)
    print()
    print(tabulate([[s, k, f, n] for (s, k, f), n in sorted(families.items())], headers=["suite", "kind", "family", "cases"]))
    kinds = Counter(c.kind for c in cases)
    print(f"\n{len(cases)} cases: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
    for source in sources_of(settings):
        if source.report is not None:  # a suite from elsewhere: what it could not import, and why
            print()
            print("\n".join(source.report()))
    return 0


def describe(case) -> dict:
    """A case as cases.json holds it (run/record.case_record), with its id, inputs and where it is defined."""
    from conformance.run.record import case_record

    return {"id": case.id, **case_record(case), "inputs": case.describe_inputs(), "dynamic": case.is_dynamic, "defined_at": case.defined_at}
