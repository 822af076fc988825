"""What `conformance xfail update|check` and `conformance gates update|check` share: their options, the
results they update from — a report's (--results), or a run of the selected cases on the named backends —
and the check of every file in a directory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

from conformance import run_options as ro
from conformance.cli.common import add_case_arguments
from conformance.xfail.update import stale_lines


def add_update_arguments(update, *, backend_required: bool, backend_help: str) -> None:
    """--backend, --results, -j, --drop-stale, case selection and execution options."""
    from conformance.cli.nightly import add_execution_arguments

    ro.BACKEND.add_to(update, required=backend_required, help=backend_help)
    ro.RESULTS.add_to(update)
    ro.WORKERS.add_to(update)
    update.add_argument("--drop-stale", action="store_true", help="also remove entries whose case no longer exists")
    add_case_arguments(update)
    add_execution_arguments(update)


def results_to_update_from(args, names: list[str], settings, cases, alone: set[str]) -> list:
    """The latest result of each (case, backend) pair of `cases` x `names`: read from --results, or run now
    (`alone`: the cases compiled in a module of their own)."""
    from conformance.nightly.executors.lanes import run_jobs
    from conformance.nightly.matrix import matrix_pairs, plan
    from conformance.nightly.progress import Progress
    from conformance.report_dir import latest, read_results

    wanted = {c.id for c in cases}
    if args.results:
        return [r for r in latest(read_results(Path(args.results))) if r.backend in names and r.case in wanted]
    pairs = matrix_pairs([c.id for c in cases], names)
    results = []
    progress = Progress(len(pairs))

    def sink(result):
        results.append(result)
        progress.update(result)

    run_jobs(plan(pairs, settings.batch_size, alone), settings, args.workers, sink)
    progress.finish()
    return results


def check_files(directory: Path, load: Callable, error: type[Exception], known: set[str], what: str) -> int:
    """Load every `<backend>.toml` in `directory` with `load(directory, backend)`, print what each holds and
    its stale entries (cases not in `known`); 1 when a file is malformed (`error`, printed) or has stale entries."""
    status = 0
    for path in sorted(Path(directory).glob("*.toml")):
        try:
            loaded = load(directory, path.stem)
        except error as e:
            print(e, file=sys.stderr)
            status = 1
            continue
        stale = sorted(c for c in loaded.entries if c not in known)
        print(f"{path}: {len(loaded.entries)} {what}, {len(stale)} stale")
        for line in stale_lines(stale):
            print(line)
        status |= bool(stale)
    return status
