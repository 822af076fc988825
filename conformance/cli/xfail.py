"""`conformance xfail update|check`: keep the per-backend xfail sets true without hand work."""

from __future__ import annotations

from pathlib import Path

from conformance import run_options as ro
from conformance.cli.common import add_case_arguments, fail, select_cases
from conformance.cli.updates import add_update_arguments, check_files, results_to_update_from

NAME = "xfail"
HELP = "rewrite the xfail sets from a run (update) or check them against the registry (check)"


def add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    update = sub.add_parser("update", help="run the backends (or read --results) and rewrite their xfail sets")
    update.set_defaults(parser=update)
    add_update_arguments(update, backend_required=True, backend_help="the backends whose sets to rewrite (comma-separated, repeatable)")
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
    from conformance.xfail.sets import XfailError, XfailSet
    from conformance.run.session import resolve_backends
    from conformance.xfail.update import update as apply

    specs = backend_specs(args)
    names = [backend.name for backend in resolve_backends(specs)]
    settings = execution_settings(args, specs)
    registry, cases = select_cases(args, settings, required=True)
    results = results_to_update_from(args, names, settings, cases, {c.id for c in cases if c.kind == "model"})
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

    registry, _ = select_cases(args, ro.settings_from(args))
    return check_files(Path(ro.xfail_sets_dir(args)), XfailSet.load, XfailError, {c.id for c in registry}, "entries")
