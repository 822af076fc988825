"""`conformance custom-audit`: which ops become tosa.custom, and why the others do not.

Either reads Results (`--results`, a results.jsonl or a report directory
holding one) or runs the tosa-custom backend over the selected cases
itself, then prints one row per op (in how many cases it occurs, in how
many it converted, why not) and each kind of unconvertible op with its
explanation.
"""

from __future__ import annotations

import json
import os

from conformance import run_options as ro
from conformance.cli.common import add_case_arguments, fail, select_cases

NAME = "custom-audit"
HELP = "tabulate which ops convert to tosa.custom (contract v1) and explain each kind that does not"


def add_arguments(parser) -> None:
    ro.RESULTS.add_to(parser, help="audit these Results (a results.jsonl or a report directory) instead of running cases")
    parser.add_argument(
        "--backend",
        default="tosa-custom",
        help="the backend to run or to read (default: tosa-custom); its own options are accepted too, "
        "e.g. --custom-ops of tosa-selective",
    )
    add_case_arguments(parser)
    run = parser.add_argument_group("run")
    ro.WORKERS.add_to(run, default=min(2, os.cpu_count() or 1), help="parallel lanes (default 2)")
    ro.CASE_TIMEOUT.add_to(run)
    run.add_argument("--write-results", type=ro.writable_file, metavar="FILE", help="also write the run's Results to this results.jsonl")
    out = parser.add_argument_group("output")
    out.add_argument("--top", type=int, default=0, help="show only the N most frequent ops (default: all)")
    out.add_argument("--json", action="store_true", help="print the audit as JSON")


def backend_specs(args) -> list[str]:
    return [args.backend]


def run(args) -> int:
    from conformance.custom_ops.audit import audit, render, to_dict

    results = _read(args) if args.results else _run(args)
    table = audit(results, backend=args.backend)
    if not table.rows and not table.totals:
        fail(f"no Results of backend {args.backend} to audit")
    if args.json:
        print(json.dumps(to_dict(table), indent=1, sort_keys=True))
    else:
        print(render(table, top=args.top or None))
    return 0


def _read(args) -> list:
    from pathlib import Path

    from conformance.report_dir import latest, read_results

    path = Path(args.results)  # it exists: checked while parsing
    try:
        return latest(read_results(path))
    except (OSError, ValueError, TypeError) as e:
        fail(f"--results {path}: not a results.jsonl ({e})")


def _run(args) -> list:
    import sys

    from conformance.execution.planning import plan_jobs
    from conformance.nightly.executors.lanes import run_jobs
    from conformance.run.session import resolve_backends

    (backend,) = resolve_backends([args.backend])
    settings = ro.settings_from(args, [args.backend], args.backend_options)
    _, cases = select_cases(args, settings, required=True)
    pairs = [(c.id, backend.name) for c in cases]
    heavy = {c.id for c in cases if c.kind == "model"}
    jobs = plan_jobs(pairs, settings.batch_size, heavy)
    store = open(args.write_results, "w", encoding="utf-8") if args.write_results else None
    results = []
    done = [0]

    def sink(result) -> None:
        results.append(result)
        if store is not None:
            store.write(result.to_json() + "\n")
            store.flush()
        done[0] += 1
        if sys.stderr.isatty() or done[0] % 100 == 0 or done[0] == len(pairs):
            print(f"\r{done[0]}/{len(pairs)} cases", end="\n" if done[0] == len(pairs) else "", file=sys.stderr, flush=True)

    try:
        run_jobs(jobs, settings, args.workers, sink)
    finally:
        if store is not None:
            store.close()
    return results
