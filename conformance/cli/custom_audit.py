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

from conformance.cli.common import add_case_arguments, fail, select_cases, settings_from_args

NAME = "custom-audit"
HELP = "tabulate which ops convert to tosa.custom (contract v1) and explain each kind that does not"


def add_arguments(parser) -> None:
    parser.add_argument("--results", metavar="FILE|DIR", help="audit these Results (results.jsonl) instead of running cases")
    parser.add_argument("--backend", default="tosa-custom", help="the backend to run or to read (default: tosa-custom)")
    parser.add_argument(
        "--custom-ops", metavar="OP[,OP...]", help="ops for the selective backend (tosa-selective), as pytest's --custom-ops"
    )
    add_case_arguments(parser)
    run = parser.add_argument_group("run")
    run.add_argument("-j", "--workers", type=int, default=min(2, os.cpu_count() or 1), help="parallel lanes (default 2)")
    run.add_argument("--case-timeout", type=float, default=300.0, help="seconds of silence before TIMEOUT")
    run.add_argument("--write-results", metavar="FILE", help="also write the run's Results to this results.jsonl")
    out = parser.add_argument_group("output")
    out.add_argument("--top", type=int, default=0, help="show only the N most frequent ops (default: all)")
    out.add_argument("--json", action="store_true", help="print the audit as JSON")


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

    from conformance.nightly.store import latest, read_results

    path = Path(args.results)
    if not path.exists():
        fail(f"--results {path}: no such file or directory")
    try:
        return latest(read_results(path))
    except (OSError, ValueError, TypeError) as e:
        fail(f"--results {path}: not a results.jsonl ({e})")


def _run(args) -> list:
    import sys

    from conformance.backends import loader
    from conformance.execution.planning import plan_jobs
    from conformance.nightly.runner import run_jobs

    try:
        backend = loader.resolve(args.backend)
    except loader.BackendError as e:
        fail(str(e))
    options = {"custom_ops": [o.strip() for o in args.custom_ops.split(",") if o.strip()]} if args.custom_ops else {}
    settings = settings_from_args(args, backends=[args.backend], case_timeout=args.case_timeout, options=options)
    _, cases = select_cases(args, settings)
    if not cases:
        fail("no case selected")
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
