"""`conformance nightly`: the whole matrix, streamed to disk, then the reports.

Every (case, backend) result is appended to <output-dir>/<timestamp>/results.jsonl
the moment it is known; an interrupted run keeps them and `--resume DIR`
finishes it. The previous report in the output directory is the baseline;
the exit status is 1 when a case that passed there fails now.
"""

from __future__ import annotations

import datetime
import json
import signal
import sys
import time
from pathlib import Path

from conformance import run_options as ro
from conformance.cli.common import add_case_arguments, add_group, fail, resolve_backends, select_cases

NAME = "nightly"
HELP = "run every shipped backend over the registry and write JSON, Markdown and HTML reports"


def add_arguments(parser) -> None:
    from conformance.nightly import resume

    ro.BACKEND.add_to(parser, help="backends to run (comma-separated, repeatable; default: every shipped backend)")
    add_case_arguments(parser)
    add_group(parser, "run", (ro.OUTPUT_DIR, ro.BASELINE, ro.RESUME, ro.SHARD, ro.DURATIONS, ro.LOCALIZE))
    where = parser.add_argument_group("where jobs run")
    # -j's default depends on the executor: this machine's CPUs, or a Ray cluster's.
    ro.WORKERS.add_to(where, default=None, help="jobs at once: lanes (supervised processes) on this machine, or Ray actors "
                                                "(default: this machine's CPU count; with --executor ray, the cluster's)")
    ro.EXECUTOR.add_to(where)
    ro.ADDRESS.add_to(where)
    add_execution_arguments(parser)
    resume.unset_defaults(parser)  # so that a resumed run can tell an option left out from one given


def add_execution_arguments(parser) -> None:
    add_group(parser, "execution", ro.EXECUTION)


def backend_specs(args) -> list[str]:
    """The backends a run covers: those named, those of the run it resumes, or every shipped one in the matrix."""
    from conformance.backends import loader
    from conformance.nightly import resume

    if not args.backend and args.resume:
        kept = resume.recorded(Path(args.resume)) or {}
        if kept.get(ro.BACKEND.dest):
            return kept[ro.BACKEND.dest]
        # A run.json from before options were recorded still names its backends: never widen
        # a resumed run to every shipped backend.
        recorded_names = resume.recorded_backends(Path(args.resume))
        if recorded_names:
            return recorded_names
    return ro.parse_backends(args.backend) or loader.matrix_names()


def execution_settings(args, backends: list[str]):
    return ro.settings_from(args, backends, args.backend_options)


def judge_with_xfails(args, backend_names: list[str]):
    """A function setting each Result's verdict from the xfail sets, or None when disabled."""
    from conformance.xfail.judge import verdict
    from conformance.xfail.sets import XfailError, XfailSet

    directory = ro.xfail_dir(args)
    if directory is None:
        return None
    try:
        sets = {name: XfailSet.load(directory, name) for name in backend_names}
    except XfailError as e:
        fail(str(e))

    def judge(result):
        result.verdict = verdict(result, sets[result.backend].get(result.case))

    return judge


def new_report_dir(output_dir: Path) -> Path:
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    directory = output_dir / stamp
    n = 1
    while directory.exists():
        directory = output_dir / f"{stamp}-{n}"
        n += 1
    directory.mkdir(parents=True)
    return directory


def pick_baseline(args, directory: Path) -> Path | None:
    """--baseline, or the latest earlier report of the whole matrix in the output directory.

    A shard's report is never the default baseline, not even for a shard:
    another shard of the same night holds other cases, and the same shard of
    an earlier night held other cases too once shards are dealt by measured
    time. A merged report (every shard) or an unsharded one is compared with
    instead; the cases of other shards then count as `removed`.
    """
    from conformance.nightly.store import report_dirs

    if args.baseline:  # checked while parsing: "none" or a report directory
        return None if args.baseline == "none" else Path(args.baseline)
    earlier = [d for d in report_dirs(directory.parent) if d.name < directory.name and whole_matrix(d)]
    return earlier[-1] if earlier else None


def whole_matrix(directory: Path) -> bool:
    """Whether a report covers the whole matrix: unsharded, or merged from all its shards."""
    run = directory / "run.json"
    shards = (json.loads(run.read_text()).get("shards") or []) if run.exists() else []
    if not shards:
        return True
    count = int(shards[0].split("/")[1])
    return sorted(shards) == sorted(f"{i}/{count}" for i in range(1, count + 1))


def localize_failures(directory: Path, cases, settings) -> None:
    """--localize: each failing model result of the report, localized and written again with its record.

    The results file then holds the pair twice; the later line, with
    extras["localized"], is the one every reader keeps (store.latest).
    """
    from conformance.bundles import backend_spec
    from conformance.localize.localizer import attach
    from conformance.localize.record import EXTRAS_KEY, summary
    from conformance.nightly.store import ResultsFile, latest, read_results

    models = {c.id for c in cases if c.kind == "model"}
    failing = [r for r in latest(read_results(directory)) if r.failed and r.case in models and EXTRAS_KEY not in r.extras]
    store = ResultsFile(directory)
    try:
        for number, result in enumerate(failing, start=1):
            print(f"conformance nightly: localizing {result.case} on {result.backend} ({number} of {len(failing)})", file=sys.stderr)
            record = attach(result, backend_spec(settings, result.backend), settings, directory / "localized")
            print(f"  {summary(record)}", file=sys.stderr)
            store.append(result)
    finally:
        store.close()


def plan_time(args, settings, pairs, cases, names: list[str], baseline: Path | None):
    """Budgets for the pairs whose history allows one (execution/budgets.py), and the run's ETA plan (nightly/eta.py)."""
    from conformance.execution import budgets
    from conformance.nightly.eta import Eta, History, plan
    from conformance.xfail.sets import XfailError, XfailSet

    history = History.of_report(baseline, settings.case_timeout)
    pinned = {}
    directory = ro.xfail_dir(args)
    if directory is not None:
        try:
            for name in names:
                pinned.update({(case, name): entry.code for case, entry in XfailSet.load(directory, name).entries.items()})
        except XfailError as e:
            fail(str(e))
    settings.budgets = budgets.plan(pairs, pinned, history.timings, settings.case_timeout)
    hangs = {pair: settings.budgets[budgets.key(*pair)] for pair in pairs if pinned.get(pair) == "TIMEOUT" and budgets.key(*pair) in settings.budgets}
    planned = plan(pairs, {c.id: c.kind for c in cases}, history, hangs)
    return Eta(planned, history.overhead, args.workers), history.source


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def start_executor(args):
    """The executor the options name, before anything is written: a cluster that does not answer stops here."""
    from conformance.nightly import executors

    if args.address and args.executor != "ray":
        fail("--address is the Ray cluster's: give it with --executor ray")
    try:
        executor = executors.start(args.executor, args.workers, args.address)
    except executors.ExecutorError as e:
        fail(str(e))
    args.workers = executor.workers  # what run.json records
    return executor


def load_durations(args, names: list[str]):
    """The measured times --durations names (for the run's backends), or None: shards then go by hash."""
    from conformance.nightly.matrix import Durations

    if not args.durations:
        return None
    if not args.shard:
        fail("--durations balances shards: give it with --shard I/N")
    return Durations.load(args.durations, names)


def run(args) -> int:
    from conformance.nightly import resume
    from conformance.nightly.executors import Unfinished
    from conformance.nightly.matrix import HASH, matrix_pairs, plan
    from conformance.nightly.progress import Progress
    from conformance.nightly.record import run_record, utc_now, write_cases, write_run
    from conformance.nightly.store import ResultsFile, read_results
    from conformance.report.build import build_reports
    from conformance.report.tables import backend_table

    backends = backend_specs(args)
    resolved = resolve_backends(backends)
    names = [backend.name for backend in resolved]
    try:
        backend_options = ro.backend_options(resolved)
    except ValueError as e:
        fail(str(e))
    options = (*resume.RECORDED, *backend_options)
    run_info = json.loads((Path(args.resume) / "run.json").read_text()) if args.resume else None
    if run_info and resume.KEY in run_info:
        try:
            resume.restore(args, run_info[resume.KEY], options, (*resume.RESULT_OPTIONS, *backend_options), args.resume)
        except resume.ResumeError as e:
            fail(str(e))
    elif run_info:
        print(f"conformance nightly: {args.resume}/run.json does not record the run's options (an older run): "
              "resuming with the options given now", file=sys.stderr)
    resume.fill_defaults(args, options)
    args.backend = backends  # recorded as the specs run, the default included
    settings = ro.settings_from(args, backends, backend_options)
    registry, cases = select_cases(args, settings, required=True)  # before any directory is made
    shard = args.shard
    durations = load_durations(args, names)
    executor = start_executor(args)

    if args.resume:
        directory = Path(args.resume)
        done = {r.key for r in read_results(directory)} if (directory / "results.jsonl").exists() else set()
    else:
        directory = new_report_dir(Path(args.output_dir))
        run_info = run_record(names, settings, keyword=args.keyword, tags=args.tag, skip_tags=args.skip_tag, workers=args.workers)
        run_info["shards"] = [str(shard)] if shard else []
        run_info[resume.KEY] = resume.record(args, options)
        done = set()
    if shard:  # how the cases were dealt: a resumed shard must deal them alike, and merge takes only alike shards
        dealt = str(durations or HASH)
        if run_info.setdefault("sharding", dealt) != dealt:
            fail(f"--durations: {directory} was dealt by {run_info['sharding']}, not by {dealt}; give the run's own --durations")
    write_cases(directory, cases)
    # Written before any work: a run killed outright must still be resumable.
    write_run(directory, run_info)

    pairs = matrix_pairs([c.id for c in cases], names, shard, done, durations)
    heavy = {c.id for c in cases if c.kind == "model"}
    jobs = plan(pairs, settings.batch_size, heavy)
    judge = judge_with_xfails(args, names)
    eta, measured_by = plan_time(args, settings, pairs, cases, names, pick_baseline(args, directory))
    print(f"conformance nightly: {len(pairs)} (case, backend) pairs to run ({len(done)} already done) "
          f"on {executor.describe()} -> {directory}", file=sys.stderr)

    store = ResultsFile(directory)
    progress = Progress(len(pairs), eta=eta)
    progress.announce(measured_by)
    started = time.monotonic()

    def sink(result) -> None:
        if judge:
            judge(result)
        store.append(result)
        progress.update(result)

    interrupted = False
    signal.signal(signal.SIGTERM, _interrupt)  # a cancelled CI job: stop as for Ctrl-C, keep the results
    try:
        stats = executor.run(jobs, settings, sink)
    except KeyboardInterrupt:
        interrupted = True
        stats = {}
    except Unfinished as e:
        print(f"conformance: {e}", file=sys.stderr)
        interrupted = True
        stats = {}
    finally:
        executor.close()
        store.close()
        progress.finish()
        run_info["wall_seconds"] = round(run_info.get("wall_seconds", 0.0) + time.monotonic() - started, 1)
        run_info["peak_rss_mb"] = max(run_info.get("peak_rss_mb", 0.0), stats.get("peak_rss_mb", 0.0) if stats else 0.0)
        if not interrupted:
            run_info["finished"] = utc_now()
        write_run(directory, run_info)
    if interrupted:
        print(f"interrupted: the finished results are kept in {directory}; finish with --resume {directory}", file=sys.stderr)
        return 130

    if args.localize:
        localize_failures(directory, cases, settings)
    baseline = pick_baseline(args, directory)
    summary = build_reports(directory, baseline)
    from conformance.nightly.store import latest

    print(backend_table(latest(read_results(directory))))
    changes = summary["changes"]
    print(f"\nreport: {directory}/report.html (and report.md, summary.json)")
    if changes["baseline"]:
        print(f"since {changes['baseline']}: {len(changes['newly_failing'])} newly failing, "
              f"{len(changes['newly_passing'])} newly passing, {len(changes['changed'])} failing differently")
    return 1 if changes["newly_failing"] else 0
