"""`conformance fuzz --backend B --budget 30m --seed N`: generated multi-op programs against eager.

Hypothesis draws valid programs from the op table (conformance/fuzz/),
they run on the backends through the usual engine, failures are grouped
by root cause, each group's smallest program is shrunk and written as a
case file with its reproducer bundle. See docs/fuzz.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conformance import run_options as ro
from conformance.cli.common import add_group, duration, fail

NAME = "fuzz"
HELP = "generate valid multi-op programs, run them on backends against eager, shrink each new failure to a case file"
DEFAULT_OUTPUT = "reports/fuzz"

EXECUTION = (ro.CASE_TIMEOUT, ro.BATCH_SIZE, ro.MEMORY_LIMIT, ro.CACHE_DIR, ro.NO_CACHE, ro.EXPORT_MODE, ro.RERUNS)


def add_arguments(parser) -> None:
    ro.BACKEND.add_to(parser, required=True, help="the backends to fuzz (comma-separated, repeatable); `eager` checks the generator")
    parser.add_argument("--budget", type=duration, default=None, metavar="DURATION",
                        help="time to generate and run programs, e.g. 90s, 30m, 1h (default 5m; none with --programs)")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="the search's seed: the same seed draws the same programs (default 0)")
    parser.add_argument("--programs", type=ro.whole_number_from(1), default=None, metavar="N",
                        help="stop after N programs: with the seed, reproduces a run exactly (its record says how many it ran)")
    parser.add_argument("--output-dir", type=ro.writable_dir, default=DEFAULT_OUTPUT, metavar="DIR",
                        help=f"where the run goes: DIR/<backends>-seed<N>/ holds fuzz.json, cases/ and bundles/ (default {DEFAULT_OUTPUT})")
    parser.add_argument("--json", action="store_true", help="print the whole record as JSON")
    programs = parser.add_argument_group("programs")
    programs.add_argument("--ops", type=ro.comma_list, default=None, metavar="OP,OP", help="only these ops of the table (default all)")
    programs.add_argument("--skip-ops", type=ro.comma_list, default=None, metavar="OP,OP", help="leave these ops of the table out")
    programs.add_argument("--dtypes", type=ro.comma_list, default=None, metavar="DTYPE,DTYPE",
                          help="the dtypes inputs and results may have (default float32,int32,int64,bool)")
    programs.add_argument("--min-ops", type=ro.whole_number_from(1), default=2, metavar="N", help="ops per program, at least (default 2)")
    programs.add_argument("--max-ops", type=ro.whole_number_from(1), default=20, metavar="N", help="ops per program, at most (default 20)")
    programs.add_argument("--no-dynamic", action="store_true", help="static shapes only (by default about a fifth of the programs have a dynamic dim)")
    programs.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance against eager (default 1e-4)")
    programs.add_argument("--atol", type=float, default=1e-4, help="absolute tolerance against eager (default 1e-4)")
    programs.add_argument("--batch", type=ro.whole_number_from(1), default=32, metavar="N", help="programs run per job (default 32)")
    shrinking = parser.add_argument_group("shrinking")
    shrinking.add_argument("--shrink-budget", type=duration, default=120.0, metavar="DURATION",
                           help="time to shrink each root-cause group's smallest program (default 2m)")
    shrinking.add_argument("--shrink", choices=("all", "new"), default="all",
                           help="shrink every group, or only those no shipped case shows (new, or naming no op yet)")
    shrinking.add_argument("--shrink-runs", type=ro.whole_number_from(0), default=150, metavar="N",
                           help="programs run to shrink each group, at most (default 150; 0: do not shrink)")
    ro.XFAIL_DIR.add_to(parser, help="the xfail sets a group is compared with: a (code, op) pair in its backend's set is known (default the project's)")
    add_group(parser, "execution", EXECUTION)


def backend_specs(args) -> list[str]:
    return ro.parse_backends(args.backend)


def run(args) -> int:
    from tabulate import tabulate

    from conformance.fuzz import ops
    from conformance.fuzz.campaign import Campaign, Plan
    from conformance.fuzz.strategies import Config
    from conformance.paths import safe_name
    from conformance.run.session import resolve_backends

    specs = backend_specs(args)
    backends = resolve_backends(specs)
    names = [b.name for b in backends]
    try:
        config = Config(
            ops=ops.select(args.ops, args.skip_ops),
            dtypes=tuple(args.dtypes) if args.dtypes else Config.dtypes,
            min_ops=args.min_ops, max_ops=args.max_ops, dynamic=not args.no_dynamic, rtol=args.rtol, atol=args.atol,
        )
    except ValueError as e:
        fail(str(e))
    budget = args.budget if args.budget is not None else (float("inf") if args.programs else 300.0)
    output = Path(args.output_dir) / f"{safe_name('-'.join(names))}-seed{args.seed}"
    settings = ro.settings_from(args, specs, args.backend_options)
    plan = Plan(specs, names, config, args.seed, output, settings, budget=budget, max_programs=args.programs,
                batch=args.batch, shrink_seconds=args.shrink_budget, shrink_runs=args.shrink_runs, shrink_known=args.shrink == "all",
                xfail_dir=Path(ro.xfail_sets_dir(args)))

    def log(line: str) -> None:
        print(f"conformance fuzz: {line}", file=sys.stderr)

    record = Campaign(plan, log=log).run()
    if args.json:
        print(json.dumps(record, indent=1))
        return 0
    counts = record["programs"]
    print(f"{counts['run']} programs run ({counts['drawn']} drawn, {sum(counts['rejected'].values())} rejected by the generator) "
          f"in {record['explored_s']} s; {record['seconds']} s in all, shrinking included")
    rows = [[name, b["run"], f"{(b['run'] - b['invalid']) / b['run']:.0%}" if b["run"] else "-", b["passed"], b["failed"], b["groups"], b["new_groups"]]
            for name, b in record["per_backend"].items()]
    print(tabulate(rows, headers=["backend", "programs", "valid", "passed", "failed", "groups", "new"]))
    if record["groups"]:
        print()
        rows = [[g["backend"], g["code"], g["op"] or "-", g["count"], {True: "known", False: "NEW", None: "?"}[g["known"]],
                 g["program"], "yes" if g["confirmed"] else "NO", g["case_file"]] for g in record["groups"]]
        print(tabulate(rows, headers=["backend", "code", "op", "programs", "", "smallest", "confirmed", "case file"]))
    for refused in record["refused"][:5]:
        print(f"refused before the backend: {refused['count']} x {refused['code']} at {refused['stage']} ({refused['op'] or '-'})")
    print(f"record: {output / 'fuzz.json'}; reproduce: {record['reproduce']}")
    return 0
