"""`conformance gates update|check`: write the golden figures from a run, as `xfail update` writes the xfail sets."""

from __future__ import annotations

from pathlib import Path

from conformance import run_options as ro
from conformance.cli.common import add_case_arguments, fail, select_cases
from conformance.cli.updates import add_update_arguments, check_files, results_to_update_from

NAME = "gates"
HELP = "write the golden compile figures and run times of the gated cases from a run (update), or check the files (check)"


def add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    update = sub.add_parser(
        "update",
        help="read --results (a run made with --gates, for run times) or run the backends now, and rewrite their gates files",
    )
    update.set_defaults(parser=update)
    add_update_arguments(
        update,
        backend_required=False,
        backend_help="the backends whose files to rewrite (comma-separated, repeatable; default: those of --results)",
    )
    ro.GATES_DIR.add_to(update)
    check = sub.add_parser("check", help="validate every gates file and report stale entries")
    check.set_defaults(parser=check)
    ro.GATES_DIR.add_to(check)
    add_case_arguments(check)


def backend_specs(args) -> list[str]:
    return ro.parse_backends(args.backend) if args.action == "update" else []


def run(args) -> int:
    return update(args) if args.action == "update" else check(args)


def update(args) -> int:
    from conformance.cli.nightly import execution_settings
    from conformance.gates import timing
    from conformance.gates.selection import chosen_by_default
    from conformance.gates.sets import GatesError, GateSet
    from conformance.gates.update import update as apply
    from conformance.report_dir import latest, read_results
    from conformance.run.session import resolve_backends

    specs = backend_specs(args)
    if specs:
        names = [backend.name for backend in resolve_backends(specs)]
    elif args.results:
        names = sorted({r.backend for r in latest(read_results(Path(args.results)))})
    else:
        fail("gates update: name the backends (--backend) to run, or give --results to read")
    directory = ro.gates_sets_dir(args)
    try:
        sets = {name: GateSet.load(directory, name) for name in names}
    except GatesError as e:
        fail(str(e))
    settings = execution_settings(args, specs)
    settings.time_runs = timing.REPEATS  # a run made here measures what the files hold: run times too
    settings.timed_cases = sorted({case for gates in sets.values() for case in gates.entries})
    registry, cases = select_cases(args, settings, required=True)
    chosen = {c.id for c in cases if chosen_by_default(c.kind, c.all_tags)}
    alone = {c.id for c in cases if c.kind == "model"} | chosen | set(settings.timed_cases)
    results = results_to_update_from(args, names, settings, cases, alone)
    known = {c.id for c in registry}
    for name, gates in sets.items():
        report = apply(gates, results, chosen.__contains__, known, drop_stale=args.drop_stale)
        gates.save()
        print("\n".join(report.lines()))
        print(f"  {gates.path}: {len(gates.entries)} gated cases")
    return 0


def check(args) -> int:
    from conformance.gates.sets import GatesError, GateSet

    registry, _ = select_cases(args, ro.settings_from(args))
    return check_files(Path(ro.gates_sets_dir(args)), GateSet.load, GatesError, {c.id for c in registry}, "gated cases")
