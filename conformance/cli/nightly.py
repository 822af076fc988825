"""`conformance nightly`: the whole matrix, streamed to disk, then the reports.

Every (case, backend) result is appended to <output-dir>/<timestamp>/results.jsonl
the moment it is known; an interrupted run keeps them and `--resume DIR`
finishes it. The previous report in the output directory is the baseline;
the exit status is 1 when a case that passed there fails now.
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import sys
import time
from pathlib import Path

from conformance.cli.common import add_case_arguments, fail, select_cases, settings_from_args

NAME = "nightly"
HELP = "run every shipped backend over the registry and write JSON, Markdown and HTML reports"


def add_arguments(parser) -> None:
    parser.add_argument("--backend", action="append", metavar="NAME[,NAME...]", help="backends to run (default: every shipped backend)")
    add_case_arguments(parser)
    run = parser.add_argument_group("run")
    run.add_argument("-j", "--workers", type=int, default=os.cpu_count() or 1, help="parallel lanes, each a supervised process (default: CPU count)")
    run.add_argument("--output-dir", default="reports", help="where report directories are created (default: reports/)")
    run.add_argument("--baseline", metavar="DIR|none", help="report to compare with (default: the latest one in --output-dir)")
    run.add_argument("--resume", metavar="DIR", help="finish the interrupted run in DIR, skipping what it already has")
    run.add_argument("--shard", metavar="I/N", help="run only shard I of N (cases split by a hash of their id); combine with `conformance merge`")
    add_execution_arguments(parser)


def add_execution_arguments(parser) -> None:
    from conformance.execution import settings as defaults

    group = parser.add_argument_group("execution")
    group.add_argument("--seed", type=int, default=0, help="seed mixed into every case's inputs")
    group.add_argument("--case-timeout", type=float, default=defaults.DEFAULT_CASE_TIMEOUT, help="seconds of silence before TIMEOUT")
    group.add_argument("--batch-size", type=int, default=defaults.DEFAULT_BATCH, help="op cases compiled together")
    group.add_argument("--memory-limit", type=int, default=defaults.DEFAULT_MEMORY_KILL_MB, metavar="MB",
                       help="a case whose process (with its compilers) uses more is killed: CRASH")
    group.add_argument("--cache-dir", default=os.environ.get("CONFORMANCE_CACHE"), help="compile cache location (default .conformance-cache)")
    group.add_argument("--no-cache", action="store_true", help="neither read nor write the compile cache")
    group.add_argument("--artifacts", metavar="DIR", help="write a reproducer bundle for each failing case here")
    group.add_argument("--xfail-dir", help="judge results against these xfail sets (default: xfail_sets/)")
    group.add_argument("--no-xfail", action="store_true", help="do not judge results against the xfail sets")


def execution_settings(args, backends: list[str]):
    from conformance import content

    cache = None if args.no_cache else (args.cache_dir or str(content.PROJECT_ROOT / ".conformance-cache"))
    return settings_from_args(
        args,
        backends=backends,
        seed=args.seed,
        case_timeout=args.case_timeout,
        batch_size=args.batch_size,
        memory_kill_mb=args.memory_limit,
        cache_dir=cache,
        artifacts=os.path.abspath(args.artifacts) if args.artifacts else None,
    )


def resolve_backends(values: list[str] | None) -> tuple[list[str], list[str]]:
    """(specs as given, backend names); default: every shipped backend in the matrix."""
    from conformance.backends import loader

    specs = loader.parse_backend_option(values) or loader.matrix_names()
    try:
        return specs, [loader.resolve(spec).name for spec in specs]
    except loader.BackendError as e:
        fail(str(e))


def judge_with_xfails(args, backend_names: list[str]):
    """A function setting each Result's verdict from the xfail sets, or None when disabled."""
    from conformance import content
    from conformance.xfail.judge import verdict
    from conformance.xfail.sets import XfailError, XfailSet

    if args.no_xfail:
        return None
    directory = args.xfail_dir or content.DEFAULT_XFAIL_DIR
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
    from conformance.nightly.store import report_dirs

    if args.baseline:
        if args.baseline == "none":
            return None
        if not (Path(args.baseline) / "results.jsonl").exists():
            fail(f"--baseline {args.baseline}: no results.jsonl there")
        return Path(args.baseline)
    earlier = [d for d in report_dirs(directory.parent) if d.name < directory.name]
    return earlier[-1] if earlier else None


def case_snapshot(cases) -> dict:
    return {c.id: {"kind": c.kind, "family": c.family, "ops": list(c.ops), "tags": sorted(c.all_tags), "suite": c.suite} for c in cases}


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def run(args) -> int:
    from conformance.nightly.matrix import Shard, matrix_pairs, plan
    from conformance.nightly.progress import Progress
    from conformance.nightly.runner import run_jobs
    from conformance.nightly.store import ResultsFile, read_results
    from conformance.report.build import build_reports
    from conformance.report.summary import machine, toolchain_versions
    from conformance.report.tables import backend_table

    backends, names = resolve_backends(args.backend)
    settings = execution_settings(args, backends)
    registry, cases = select_cases(args, settings)
    try:
        shard = Shard.parse(args.shard) if args.shard else None
    except ValueError as e:
        fail(str(e))

    if args.resume:
        directory = Path(args.resume)
        if not (directory / "run.json").exists():
            fail(f"--resume {directory}: not a report directory (no run.json)")
        run_info = json.loads((directory / "run.json").read_text())
        done = {r.key for r in read_results(directory)} if (directory / "results.jsonl").exists() else set()
    else:
        directory = new_report_dir(Path(args.output_dir))
        run_info = {
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "backends": names,
            "shards": [str(shard)] if shard else [],
            "settings": {"seed": settings.seed, "suites": settings.suites, "case_paths": settings.case_paths, "default_cases": settings.default_cases, "keyword": args.keyword, "tags": args.tag, "skip_tags": args.skip_tag,
                         "batch_size": settings.batch_size, "case_timeout": settings.case_timeout, "workers": args.workers},
            "toolchain": toolchain_versions(),
            "machine": machine(),
            "wall_seconds": 0.0,
        }
        done = set()
    (directory / "cases.json").write_text(json.dumps(case_snapshot(cases), indent=0, sort_keys=True))
    # Written before any work: a run killed outright must still be resumable.
    (directory / "run.json").write_text(json.dumps(run_info, indent=1, sort_keys=True))

    pairs = matrix_pairs([c.id for c in cases], names, shard, done)
    heavy = {c.id for c in cases if c.kind == "model"}
    jobs = plan(pairs, settings.batch_size, heavy)
    judge = judge_with_xfails(args, names)
    print(f"conformance nightly: {len(pairs)} (case, backend) pairs to run ({len(done)} already done) "
          f"on {args.workers} lanes -> {directory}", file=sys.stderr)

    store = ResultsFile(directory)
    progress = Progress(len(pairs))
    started = time.monotonic()

    def sink(result) -> None:
        if judge:
            judge(result)
        store.append(result)
        progress.update(result)

    interrupted = False
    signal.signal(signal.SIGTERM, _interrupt)  # a cancelled CI job: stop as for Ctrl-C, keep the results
    try:
        stats = run_jobs(jobs, settings, args.workers, sink)
    except KeyboardInterrupt:
        interrupted = True
        stats = {}
    finally:
        store.close()
        progress.finish()
        run_info["wall_seconds"] = round(run_info.get("wall_seconds", 0.0) + time.monotonic() - started, 1)
        run_info["peak_rss_mb"] = max(run_info.get("peak_rss_mb", 0.0), stats.get("peak_rss_mb", 0.0) if stats else 0.0)
        if not interrupted:
            run_info["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        (directory / "run.json").write_text(json.dumps(run_info, indent=1, sort_keys=True))
    if interrupted:
        print(f"interrupted: the finished results are kept in {directory}; finish with --resume {directory}", file=sys.stderr)
        return 130

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
