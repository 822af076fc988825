"""summary.json: the machine-readable digest of a run (schema: summary.schema.json).

Everything in it is a function of the results, the run's metadata and the
case snapshot, sorted, so a merged sharded run summarises exactly as the
same run unsharded would (timings and dates aside).
"""

from __future__ import annotations

import platform
import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterable

from conformance.execution.reruns import ATTEMPTS
from conformance.gates import judge as gates
from conformance.localize.record import localization, summary
from conformance.report.diff import Changes
from conformance.report.triage import root_causes
from conformance.result import Result
from conformance.taxonomy import Code, Stage, Status
from conformance.toolchain.versions import toolchain_versions

SCHEMA_VERSION = 3  # 2: op_coverage keyed by overload packet, one op list per case for every backend; 3: root causes across backends, by tool
SCHEMA_PATH = Path(__file__).with_name("summary.schema.json")


def machine() -> dict:
    import os

    import psutil

    return {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
    }


def backend_summary(results: list[Result]) -> dict:
    status = Counter(r.status for r in results)
    codes = Counter(r.code for r in results if r.failed)
    verdicts = Counter(r.verdict for r in results if r.verdict)
    stages: dict[str, float] = defaultdict(float)
    for r in results:
        for stage, seconds in r.timings.items():
            stages[stage] += seconds
    ran = status[Status.PASS] + status[Status.FAIL] + status[Status.FLAKY]  # a flaky pair ran, and did not reliably pass
    tried = ran + status[Status.COMPILED]
    compiled = tried - sum(1 for r in results if r.failed and r.stage not in AFTER_COMPILE)
    summary = {
        "total": len(results),
        "by_status": {s.value: status[s.value] for s in Status},
        "by_code": dict(sorted(codes.items())),
        "by_verdict": dict(sorted(verdicts.items())),
        # A backend compiling for a device not here ran nothing to the end: no pass rate, its compile rate says it.
        "pass_rate": round(status[Status.PASS] / ran, 4) if ran and not status[Status.COMPILED] else None,
        "compile_rate": round(compiled / tried, 4) if tried else None,
        "unknown": codes[Code.UNKNOWN],
        "stage_seconds": {k: round(v, 3) for k, v in sorted(stages.items())},
    }
    figures = compile_figures(results)
    if figures:
        summary["compile_stats"] = figures
    return summary


AFTER_COMPILE = {Stage.RUN, Stage.COMPARE}  # a failure here got through compile


def _spread(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 3), "max": max(values)} if values else {"median": None, "max": None}


def compile_figures(results: list[Result]) -> dict:
    """Median and max of the compile figures IREE backends record per case (extras["compile_stats"]).

    Module sizes are those of cases compiled alone: a batch's module holds
    all its cases (models are compiled alone, op cases in batches).
    """
    stats = [r.extras["compile_stats"] for r in results if (r.extras or {}).get("compile_stats")]
    if not stats:
        return {}
    alone = [s["vmfb_bytes"] for s in stats if s.get("module_cases") == 1]
    return {
        "cases": len(stats),
        "dispatches": _spread([s["dispatches"] for s in stats]),
        "seconds": _spread([s["seconds"] for s in stats]),
        "vmfb_bytes_alone": {"cases": len(alone), **_spread(alone)},
    }


def family_summary(results: list[Result], cases: dict[str, dict]) -> dict:
    table: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for r in results:
        family = cases.get(r.case, {}).get("family") or "unknown"
        table[family][r.backend][r.status] += 1
    return {
        family: {
            backend: {"total": sum(c.values()), "pass": c[Status.PASS], "fail": c[Status.FAIL], "skip": c[Status.SKIP],
                      "flaky": c[Status.FLAKY], "compiled": c[Status.COMPILED]}
            for backend, c in sorted(per_backend.items())
        }
        for family, per_backend in sorted(table.items())
    }


def op_packet(op: str) -> str:
    """An op's overload packet: `aten.softmax.int` and `aten.softmax.default` are both `aten.softmax`."""
    parts = op.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else op


def case_ops(results: list[Result], cases: dict[str, dict]) -> dict[str, list[str]]:
    """Per case, the op packets it uses: from its exported graph when any backend exported it, else as declared.

    One list per case, whatever the backend: a backend that never exports
    (eager) counts the same ops as one that does, so backends compare.
    """
    exported: dict[str, set[str]] = defaultdict(set)
    for r in results:
        exported[r.case].update(r.extras.get("aten_ops") or [])
    out = {}
    for case in {r.case for r in results}:
        ops = exported.get(case) or cases.get(case, {}).get("ops") or []
        out[case] = sorted({op_packet(op) for op in ops})
    return out


def op_coverage(results: list[Result], cases: dict[str, dict]) -> dict:
    """Per op packet: on each backend, how many cases using it pass, of how many that ran."""
    ops_of = case_ops(results, cases)
    cover: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for r in results:
        if r.status in (Status.SKIP, Status.COMPILED):  # not judged: not run, or not applicable
            continue
        for op in ops_of[r.case]:
            cover[op][r.backend]["cases"] += 1
            cover[op][r.backend]["pass"] += r.status == Status.PASS
    return {op: {b: dict(c) for b, c in sorted(per.items())} for op, per in sorted(cover.items())}


NO_INPUTS = "no inputs"
UNKNOWN_DTYPES = "-"  # exact inputs (their dtypes are known once loaded), or a report from before cases.json held dtypes


def dtype_label(record: dict) -> str:
    """The dtype axis of a case: its input dtypes, each once, in input order (`float32`, `float32+int64`)."""
    names = record.get("dtypes")
    if names is None:
        return UNKNOWN_DTYPES
    return "+".join(names) or NO_INPUTS


def op_dtype_coverage(results: list[Result], cases: dict[str, dict]) -> dict:
    """op_coverage with a dtype axis: per op packet, per dtype label (dtype_label), per backend: cases run, passing."""
    ops_of = case_ops(results, cases)
    cover: dict[str, dict[str, dict[str, Counter]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(Counter)))
    for r in results:
        if r.status in (Status.SKIP, Status.COMPILED):  # not judged, as in op_coverage
            continue
        dtype = dtype_label(cases.get(r.case, {}))
        for op in ops_of[r.case]:
            cell = cover[op][dtype][r.backend]
            cell["cases"] += 1
            cell["pass"] += r.status == Status.PASS
    return {
        op: {dtype: {b: dict(c) for b, c in sorted(per.items())} for dtype, per in sorted(by_dtype.items())}
        for op, by_dtype in sorted(cover.items())
    }


def op_dtype_rows(summary: dict) -> list[tuple[str, str, dict]]:
    """(op, dtype label, per backend {cases, pass}) for the reports; a summary without the dtype axis gives one row per op."""
    if "op_dtype_coverage" in summary:
        return [(op, dtype, per) for op, by_dtype in summary["op_dtype_coverage"].items() for dtype, per in by_dtype.items()]
    return [(op, UNKNOWN_DTYPES, per) for op, per in (summary.get("op_coverage") or {}).items()]


def flaky_pairs(results: list[Result]) -> list[dict]:
    """The pairs whose runs disagreed, with what each run saw: reported apart from failures."""
    return [
        {"case": r.case, "backend": r.backend, "verdict": r.verdict, "explanation": r.explanation, "attempts": r.extras.get(ATTEMPTS) or []}
        for r in results
        if r.status == Status.FLAKY
    ]


def localized_failures(results: list[Result]) -> list[dict]:
    """The failures --localize traced to one op: case, backend, code, the op, and the short form of the record."""
    found = []
    for r in results:
        record = localization(r)
        if record:
            found.append({"case": r.case, "backend": r.backend, "code": r.code, "op": record.get("op"),
                          "source": record.get("source"), "summary": summary(record), "case_file": record.get("case_file")})
    return found


def gate_summary(results: list[Result]) -> dict | None:
    """The gate outcomes of a run made with --gates (gates/judge.py): how many pairs were judged, which are
    beyond tolerance (regressions of their own kind: their verdicts stay PASS) and which are below it (their
    golden figures are stale). None when no pair was judged."""
    judged = [(r, found) for r in results if (found := gates.outcome(r))]
    if not judged:
        return None

    def pairs(state: str) -> list[dict]:
        return [
            {"case": r.case, "backend": r.backend, "file": found["file"], "figures": [f for f in found["figures"] if f["state"] == state]}
            for r, found in judged
            if any(f["state"] == state for f in found["figures"])
        ]

    return {
        "judged": len(judged),
        "figures": sum(len(found["figures"]) for _, found in judged),
        "beyond": pairs(gates.BEYOND),
        "below": pairs(gates.BELOW),
        "unmeasured": sum(len(found["unmeasured"]) for _, found in judged),
    }


def build_summary(
    results: Iterable[Result], run: dict, cases: dict[str, dict], changes: Changes, history: list[dict]
) -> dict:
    results = sorted(results, key=lambda r: r.key)
    by_backend: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_backend[r.backend].append(r)
    groups = root_causes(results, cases)
    gated = gate_summary(results)
    return {
        "schema_version": SCHEMA_VERSION,
        "run": run,
        "toolchain": run.get("toolchain") or toolchain_versions(),
        "machine": run.get("machine") or machine(),
        "matrix": {
            "cases": len({r.case for r in results}),
            "backends": sorted(by_backend),
            "results": len(results),
        },
        "backends": {b: backend_summary(rs) for b, rs in sorted(by_backend.items())},
        "unknown": sum(1 for r in results if r.code == Code.UNKNOWN),
        "families": family_summary(results, cases),
        "op_coverage": op_coverage(results, cases),
        "op_dtype_coverage": op_dtype_coverage(results, cases),
        "root_causes": [g.to_dict() for g in groups],
        "flaky": flaky_pairs(results),
        "localized": localized_failures(results),
        "changes": changes.to_dict(),
        "history": history,
        **({"gates": gated} if gated else {}),
    }
