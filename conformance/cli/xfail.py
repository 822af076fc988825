"""`conformance xfail update|check`: keep the per-backend xfail sets true without hand work."""

from __future__ import annotations

import sys
from pathlib import Path

from conformance import run_options as ro
from conformance.cli.common import add_case_arguments, fail, select_cases

NAME = "xfail"
HELP = "rewrite the xfail sets from a run (update) or check them against the registry (check)"


def add_arguments(parser) -> None:
    from conformance.cli.nightly import add_execution_arguments

    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    update = sub.add_parser("update", help="run the backends (or read --results) and rewrite their xfail sets")
    update.set_defaults(parser=update)
    ro.BACKEND.add_to(update, required=True, help="the backends whose sets to rewrite (comma-separated, repeatable)")
    ro.RESULTS.add_to(update)
    ro.WORKERS.add_to(update)
    update.add_argument("--drop-stale", action="store_true", help="also remove entries whose case no longer exists")
    add_case_arguments(update)
    add_execution_arguments(update)
    check = sub.add_parser("check", help="validate every xfail set and report stale entries")
    check.set_defaults(parser=check)
    ro.XFAIL_DIR.add_to(check)
    add_case_arguments(check)


def backend_specs(args) -> list[str]:
    return ro.parse_backends(args.backend) if args.action == "update" else []


def run(args) -> int:
    return update(args) if args.action == "update" else check(args)


def update(args) -> int:
    from conformance.cli.nightly import execution_settings
    from conformance.nightly.matrix import matrix_pairs, plan
    from conformance.nightly.progress import Progress
    from conformance.nightly.executors.lanes import run_jobs
    from conformance.report_dir import latest, read_results
    from conformance.xfail.sets import XfailError, XfailSet
    from conformance.run.session import resolve_backends
    from conformance.xfail.update import update as apply

    specs = backend_specs(args)
    names = [backend.name for backend in resolve_backends(specs)]
    settings = execution_settings(args, specs)
    registry, cases = select_cases(args, settings, required=True)
    if args.results:
        results = [r for r in latest(read_results(Path(args.results))) if r.backend in names and r.case in {c.id for c in cases}]
    else:
        pairs = matrix_pairs([c.id for c in cases], names)
        results = []
        progress = Progress(len(pairs))

        def sink(result):
            results.append(result)
            progress.update(result)

        run_jobs(plan(pairs, settings.batch_size, {c.id for c in cases if c.kind == "model"}), settings, args.workers, sink)
        progress.finish()
    directory = ro.xfail_sets_dir(args)
    known = {c.id for c in registry}
    for name in names:
        try:
            xfails = XfailSet.load(directory, name)
        except XfailError as e:
            fail(str(e))
        report = apply(xfails, results, known, drop_stale=args.drop_stale)
        xfails.save()
        print("\n".join(report.lines()))
        print(f"  {xfails.path}: {len(xfails.entries)} entries")
    return 0


def check(args) -> int:
    from conformance.xfail.sets import XfailError, XfailSet

    directory = Path(ro.xfail_sets_dir(args))
    registry, _ = select_cases(args, ro.settings_from(args))
    known = {c.id for c in registry}
    status = 0
    for path in sorted(directory.glob("*.toml")):
        try:
            xfails = XfailSet.load(directory, path.stem)
        except XfailError as e:
            print(e, file=sys.stderr)
            status = 1
            continue
        stale = sorted(c for c in xfails.entries if c not in known)
        print(f"{path}: {len(xfails.entries)} entries, {len(stale)} stale")
        for case in stale:
            print(f"  stale (no such case in the registry): {case}")
        status |= bool(stale)
    return status
