"""`conformance nightly`: the whole matrix, streamed to disk, then the reports.

Every (case, backend) result is appended to <output-dir>/<timestamp>/results.jsonl
the moment it is known; an interrupted run keeps them and `--resume DIR`
finishes it. The previous report in the output directory is the baseline;
the exit status is 1 when a case that passed there fails now, or (--gates) a
pair is beyond its golden figures' tolerance.
"""

from __future__ import annotations

import datetime
import signal
import sys
import time
from pathlib import Path

from conformance import run_options as ro
from conformance.cli.common import add_case_arguments, add_group, fail, select_cases

NAME = "nightly"
HELP = "run every shipped backend over the registry and write JSON, Markdown and HTML reports"


def add_arguments(parser) -> None:
    from conformance.nightly import options, resume

    ro.BACKEND.add_to(parser, help="backends to run (comma-separated, repeatable; default: every shipped backend)")
    add_case_arguments(parser)
    run_group = (options.OUTPUT_DIR, ro.BASELINE, options.RESUME, options.SHARD, options.DURATIONS, ro.LOCALIZE, ro.GATES, ro.GATES_DIR)
    add_group(parser, "run", run_group)
    where = parser.add_argument_group("where jobs run")
    # -j's default depends on the executor: this machine's CPUs, or a Ray cluster's.
    ro.WORKERS.add_to(where, default=None, help="jobs at once: lanes (supervised processes) on this machine, or Ray actors "
                                                "(default: this machine's CPU count; with --executor ray, the cluster's)")
    options.EXECUTOR.add_to(where)
    options.ADDRESS.add_to(where)
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
    from conformance.report_dir import report_dirs

    if args.baseline:  # checked while parsing: "none" or a report directory
        return None if args.baseline == "none" else Path(args.baseline)
    earlier = [d for d in report_dirs(directory.parent) if d.name < directory.name and whole_matrix(d)]
    return earlier[-1] if earlier else None


def whole_matrix(directory: Path) -> bool:
    """Whether a report covers the whole matrix: unsharded, or merged from all its shards."""
    from conformance.report_dir import RUN, read_json

    shards = (read_json(directory, RUN) or {}).get("shards") or []
    if not shards:
        return True
    count = int(shards[0].split("/")[1])
    return sorted(shards) == sorted(f"{i}/{count}" for i in range(1, count + 1))


def localize_failures(writer, run, cases) -> None:
    """--localize: each failing result of several ops (run/session.needs_localizing), localized (Run.localize) and written again with its record.

    The results file then holds the pair twice; the later line, with
    extras["localized"], is the one every reader keeps (report_dir.latest).
    """
    from conformance.localize.record import summary
    from conformance.report_dir import LOCALIZED, latest, read_results
    from conformance.run.session import needs_localizing

    by_id = {c.id: c for c in cases}
    failing = [r for r in latest(read_results(writer.directory)) if needs_localizing(r, by_id.get(r.case))]
    try:
        for number, result in enumerate(failing, start=1):
            print(f"conformance nightly: localizing {result.case} on {result.backend} ({number} of {len(failing)})", file=sys.stderr)
            record = run.localize(result, by_id[result.case], writer.directory / LOCALIZED)
            print(f"  {summary(record)}", file=sys.stderr)
            writer.add(result)
    finally:
        writer.close()


def plan_time(run, pairs, cases, baseline: Path | None, lanes: int):
    """Budgets of time and memory for the pairs whose history allows one (execution/budgets.py), and the run's ETA
    plan (nightly/eta.py)."""
    from conformance.execution import budgets
    from conformance.nightly.eta import Eta, History, plan

    settings = run.settings
    history = History.of_report(baseline, settings.case_timeout)
    pinned = run.plan_budgets(pairs, history.timings, history.ran_away)
    hangs = {pair: settings.budgets[budgets.key(*pair)] for pair in pairs if pinned.get(pair) == "TIMEOUT" and budgets.key(*pair) in settings.budgets}
    kinds = {c.id: c.kind for c in cases}
    planned = plan(pairs, kinds, history, hangs, {c.id: c.family for c in cases})
    return Eta(planned, history.overhead, lanes, kinds), history.source


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


def verdict_store(settings):
    """The verdict store (conformance/warm/), or None where a run may not answer from it (warm/store.usable)."""
    from conformance.warm.store import VerdictStore, usable

    return VerdictStore(settings.cache_dir) if usable(settings) else None


def pair_keys(selection, settings, spec_of: dict[str, str]):
    """(case, backend name) -> its key in the verdict store."""
    return lambda pair: selection.pair_key(settings, spec_of[pair[1]], pair[0])


def answer_from_store(args) -> int | None:
    """The whole run answered from the verdict store, without importing torch or starting a child; None
    (nothing written) unless the store holds the command's selection and every pair of it.

    Not for a resumed run, a shard or --localize: those read or write what a stored result lacks.
    """
    from conformance.nightly import resume
    from conformance.nightly.matrix import matrix_pairs
    from conformance.run.record import run_record
    from conformance.run.session import Run
    from conformance.run.writer import ReportWriter

    if args.resume or args.shard or args.localize:
        return None
    resume.fill_defaults(args, (*resume.RECORDED, *args.backend_options))  # not resuming: every default holds
    given = ro.parse_backends(args.backend) or None
    settings = ro.settings_from(args, given or [], args.backend_options)
    store = verdict_store(settings)
    selection = store and store.selection(store.selection_key(settings, given, args.keyword, args.tag, args.skip_tag))
    if not selection:
        return None
    started = time.monotonic()
    specs = list(selection.backends)
    settings.backends = specs  # the specs the selection resolved (the shipped matrix when none were given)
    names = list(selection.backends.values())
    key_of = pair_keys(selection, settings, {name: spec for spec, name in selection.backends.items()})
    pairs = matrix_pairs(list(selection.cases), names)
    results = [store.get(key_of(pair)) for pair in pairs]
    if None in results:
        return None
    run = Run(settings, [], ro.xfail_dir(args))  # judges by backend name: the backends are not loaded
    run.check_xfails(names)
    directory = new_report_dir(Path(args.output_dir))
    args.backend = specs  # recorded as the specs run
    record = run_record(names, settings, keyword=args.keyword, tags=args.tag, skip_tags=args.skip_tag,
                        workers=args.workers, answered_from_verdict_store=len(results))
    record["shards"] = []
    record[resume.KEY] = resume.record(args, (*resume.RECORDED, *args.backend_options))
    writer = ReportWriter(directory, record)
    writer.start_from(selection.cases)
    for result in results:
        if run.xfail_dir is not None:
            run.judge(result)
        writer.add(result)
    writer.stop(time.monotonic() - started, finished=True)
    print(f"conformance nightly: {len(results)} (case, backend) pairs answered from the verdict store "
          f"(nothing changed since they ran; --no-cache runs them) -> {directory}", file=sys.stderr)
    return report(args, writer, directory)


def run(args) -> int:
    from conformance.execution import zygote
    from conformance.execution.supervisor import STARTUP_TIMEOUT
    from conformance.nightly import resume
    from conformance.nightly.executors import Unfinished
    from conformance.nightly.matrix import HASH, matrix_pairs, plan
    from conformance.nightly.options import RESULT_OPTIONS
    from conformance.nightly.progress import Progress
    from conformance.report_dir import RUN, has_results, read_json, read_results
    from conformance.run.record import run_record
    from conformance.run.session import Run, resolve_backends
    from conformance.run.writer import ReportWriter

    answered = answer_from_store(args)
    if answered is not None:
        return answered
    if args.executor == "lanes":  # the first lane's zygote imports torch while this process does (execution/zygote.py)
        zygote.start_spare(STARTUP_TIMEOUT)
    given = ro.parse_backends(args.backend) or None  # None: the shipped matrix
    specs = backend_specs(args)
    backends = resolve_backends(specs)
    try:
        backend_options = ro.backend_options(backends)
    except ValueError as e:
        fail(str(e))
    options = (*resume.RECORDED, *backend_options)
    record = read_json(Path(args.resume), RUN) if args.resume else None
    if record and resume.KEY in record:
        try:
            resume.restore(args, record[resume.KEY], options, (*RESULT_OPTIONS, *backend_options), args.resume)
        except resume.ResumeError as e:
            fail(str(e))
    elif record:
        print(f"conformance nightly: {args.resume}/{RUN} does not record the run's options (an older run): "
              "resuming with the options given now", file=sys.stderr)
    resume.fill_defaults(args, options)
    args.backend = specs  # recorded as the specs run, the default included
    run = Run(ro.settings_from(args, specs, backend_options), backends, ro.xfail_dir(args), ro.gates_dir(args))
    run.check_gates()  # a broken gates file stops the run here (a RunError, shown as a usage error)
    zygote.load_spare(run.settings)  # it loads the registry while this process does
    registry, cases = select_cases(args, run.settings, required=True)  # before any directory is made
    store = verdict_store(run.settings)
    selection = store and store.remember(store.selection_key(run.settings, given, args.keyword, args.tag, args.skip_tag),
                                         registry, cases, dict(zip(specs, backends)))
    shard = args.shard
    durations = load_durations(args, run.names)
    executor = start_executor(args)

    if args.resume:
        directory = Path(args.resume)
        done = {r.key for r in read_results(directory)} if has_results(directory) else set()
    else:
        directory = new_report_dir(Path(args.output_dir))
        record = run_record(run.names, run.settings, keyword=args.keyword, tags=args.tag, skip_tags=args.skip_tag, workers=args.workers)
        record["shards"] = [str(shard)] if shard else []
        record[resume.KEY] = resume.record(args, options)
        done = set()
    if shard:  # how the cases were dealt: a resumed shard must deal them alike, and merge takes only alike shards
        dealt = str(durations or HASH)
        if record.setdefault("sharding", dealt) != dealt:
            fail(f"--durations: {directory} was dealt by {record['sharding']}, not by {dealt}; give the run's own --durations")
    writer = ReportWriter(directory, record)
    writer.start(cases)  # before any work: a run killed outright must still be resumable

    pairs = matrix_pairs([c.id for c in cases], run.names, shard, done, durations)
    key_of = pair_keys(selection, run.settings, dict(zip(run.names, specs)))
    stored = {pair: result for pair in pairs if (result := store.get(key_of(pair))) is not None} if selection else {}
    to_run = [pair for pair in pairs if pair not in stored]
    run.check_xfails()
    eta, measured_by = plan_time(run, to_run, cases, pick_baseline(args, directory), args.workers)
    jobs = plan(to_run, run.settings.batch_size, run.run_alone(cases))  # after the budgets: pinned hangs and known runaways go alone
    answered = f", {len(stored)} answered from the verdict store" if stored else ""
    print(f"conformance nightly: {len(to_run)} (case, backend) pairs to run ({len(done)} already done{answered}) "
          f"on {executor.describe()} -> {directory}", file=sys.stderr)

    progress = Progress(len(pairs), eta=eta)
    progress.announce(measured_by)
    started = time.monotonic()

    def sink(result) -> None:
        if selection and result.key not in stored:
            store.put(key_of(result.key), result)  # before it is judged: the judging is tonight's
        if run.xfail_dir is not None:  # with --no-xfail a result keeps no verdict: its status is the outcome
            run.judge(result)
        run.gate(result)
        writer.add(result)
        progress.update(result)

    interrupted = False
    stats: dict = {}
    signal.signal(signal.SIGTERM, _interrupt)  # a cancelled CI job: stop as for Ctrl-C, keep the results
    try:
        for result in stored.values():
            sink(result)
        stats = executor.run(jobs, run.settings, sink)
    except KeyboardInterrupt:
        interrupted = True
    except Unfinished as e:
        print(f"conformance: {e}", file=sys.stderr)
        interrupted = True
    finally:
        executor.close()
        progress.finish()
        writer.stop(time.monotonic() - started, finished=not interrupted, peak_rss_mb=(stats or {}).get("peak_rss_mb", 0.0))
    if interrupted:
        print(f"interrupted: the finished results are kept in {directory}; finish with --resume {directory}", file=sys.stderr)
        return 130

    if args.localize:
        localize_failures(writer, run, cases)
    return report(args, writer, directory)


def report(args, writer, directory: Path) -> int:
    """The reports built, the backend table and the changes printed; 1 when a pair newly fails (or --gates: is beyond)."""
    from conformance.report.tables import backend_table
    from conformance.report_dir import REPORT_HTML, latest, read_results

    summary = writer.build(pick_baseline(args, directory))
    print(backend_table(latest(read_results(directory))))
    changes = summary["changes"]
    print(f"\nreport: {directory / REPORT_HTML} (and report.md, summary.json)")
    if changes["baseline"]:
        print(f"since {changes['baseline']}: {len(changes['newly_failing'])} newly failing, "
              f"{len(changes['newly_passing'])} newly passing, {len(changes['changed'])} failing differently")
    gated = summary.get("gates")
    if gated:
        print(f"gates: {gated['judged']} pairs judged, {len(gated['beyond'])} beyond tolerance (still passing), "
              f"{len(gated['below'])} better than golden beyond tolerance"
              + (f"; {len(changes['newly_beyond_gates'])} newly beyond since {changes['baseline']}" if changes["baseline"] else ""))
    # A pair beyond its golden figures fails the night as a correctness regression does (the golden file is its
    # baseline, as the xfail sets are for failures); the reports tell the two kinds apart.
    return 1 if changes["newly_failing"] or (gated and gated["beyond"]) else 0
