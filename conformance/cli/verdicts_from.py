"""`conformance verdicts-from DIR`: COMPILED pairs run elsewhere (DIR/run-compiled.sh), judged here.

DIR is an --artifacts directory whose COMPILED pairs' bundles went to a
machine with the device and came back with their outputs (docs/remote-run.md).
Each pair that ran there gets its verdict as a run here would give it
(execution/remote_verdicts.py), judged against its backend's xfail set, in
a report directory of its own; `conformance merge RUN_REPORT VERDICTS`
then puts each verdict in place of the pair's COMPILED.
"""

from __future__ import annotations

from pathlib import Path

from conformance import run_options as ro
from conformance.cli.common import fail

NAME = "verdicts-from"
HELP = "judge the COMPILED pairs of an --artifacts directory after its run-compiled.sh ran them elsewhere; write a report directory to merge"
VERDICTS = "verdicts"  # run.json's key saying a report holds verdicts of pairs run elsewhere (merge prefers them to COMPILED)


def add_arguments(parser) -> None:
    parser.add_argument("directory", metavar="DIR", type=ro.existing_dir, help="the --artifacts directory, with the outputs written there")
    parser.add_argument("-o", "--output", type=ro.writable_dir, metavar="REPORT", help="the report directory to write (default: DIR/verdicts)")
    ro.XFAIL_DIR.add_to(parser)
    ro.NO_XFAIL.add_to(parser)


def run(args) -> int:
    from conformance.execution.remote_verdicts import judge_directory
    from conformance.remote import layout
    from conformance.report_dir import CASES, has_results, write_json
    from conformance.run.record import run_record, utc_now
    from conformance.run.writer import ReportWriter
    from conformance.settings import Settings
    from conformance.xfail.judge import verdict
    from conformance.xfail.sets import XfailError, XfailSet

    directory = Path(args.directory)
    bundles = layout.bundles_in(directory)
    if not bundles:
        fail(f"{directory} holds no bundle of a COMPILED pair (<case>/<backend>/{layout.MANIFEST}): run with --artifacts DIR "
             "on a backend compiling for a device not here, or with --compile-only")
    output = Path(args.output) if args.output else directory / VERDICTS
    if has_results(output):
        fail(f"{output} already holds results; choose another --output")
    try:
        judged = judge_directory(directory)
    except ValueError as e:
        fail(str(e))
    if not judged.results:
        fail(f"none of the {len(bundles)} compiled pairs in {directory} ran: run {directory / layout.DIRECTORY_SCRIPT} "
             "on the machine with the device first (docs/remote-run.md)")
    xfail_dir = ro.xfail_dir(args)
    sets: dict[str, XfailSet] = {}
    for result in judged.results:
        if xfail_dir is not None:
            try:
                entries = sets.setdefault(result.backend, XfailSet.load(xfail_dir, result.backend))
            except XfailError as e:
                fail(str(e))
            result.verdict = verdict(result, entries.get(result.case))
    backends = sorted({r.backend for r in judged.results})
    record = run_record(backends, Settings(backends=backends))
    record[VERDICTS] = {"bundles": str(directory.resolve()), "not_run": len(judged.not_run), "cut_short": len(judged.cut_short)}
    record["finished"] = utc_now()
    writer = ReportWriter(output, record)
    cases = {}
    for bundle in bundles:
        manifest = layout.read_manifest(bundle)
        cases[manifest["case"]] = manifest["case_record"]
    write_json(output, CASES, cases)
    for result in sorted(judged.results, key=lambda r: r.key):
        writer.add(result)
    writer.stop(0.0, finished=True)
    writer.build(None)
    counts: dict[str, int] = {}
    for result in judged.results:
        counts[result.verdict or result.status] = counts.get(result.verdict or result.status, 0) + 1
    said = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    print(f"{len(judged.results)} pairs judged ({said}) into {output}")
    if judged.not_run:
        print(f"{len(judged.not_run)} compiled pairs did not run there (no outputs): they stay COMPILED")
    if judged.cut_short:
        print(f"{len(judged.cut_short)} compiled pairs began there but were cut short (a set with no exit code): "
              "they stay COMPILED; run their remote.sh again")
    print(f"merge them with the run's report: conformance merge RUN_REPORT {output}")
    return 0

