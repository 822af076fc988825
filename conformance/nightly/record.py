"""run.json and cases.json: how a run was made, and the cases it covered.

`conformance nightly` writes them before any work (a run killed outright
stays resumable); `pytest --backend=... --report-dir DIR` at the end of its
run. report/build.py reads them; rerun.py turns run.json's
"settings" into the command that reruns one pair.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from conformance.report_dir import CASES, RUN, write_json
from conformance.settings import Settings


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def run_record(backends: list[str], settings: Settings, **more_settings) -> dict:
    """run.json's content as a run starts: the backends' names, the settings that shape results,
    the toolchain and the machine. `more_settings`: what the front end adds (-k, tags, lanes)."""
    from conformance.report.summary import machine, toolchain_versions

    return {
        "started": utc_now(),
        "backends": backends,
        "settings": {
            "seed": settings.seed,
            "export_mode": settings.export_mode,
            "reruns": settings.reruns,
            "check_determinism": settings.check_determinism,
            "suites": settings.suites,
            "case_paths": settings.case_paths,
            "default_cases": settings.default_cases,
            "batch_size": settings.batch_size,
            "case_timeout": settings.case_timeout,
            "options": settings.options,  # the backends' own (e.g. custom_ops)
            **more_settings,
        },
        "toolchain": toolchain_versions(),
        "machine": machine(),
        "wall_seconds": 0.0,
    }


def case_snapshot(cases) -> dict:
    """cases.json: what the reports need of each case, so they never read today's registry."""
    return {c.id: {"kind": c.kind, "family": c.family, "ops": list(c.ops), "tags": sorted(c.all_tags), "suite": c.suite} for c in cases}


def write_run(directory: Path, run: dict) -> None:
    write_json(directory, RUN, run)


def write_cases(directory: Path, cases) -> None:
    write_json(directory, CASES, case_snapshot(cases))
