"""run.json and cases.json: how a run was made, and the cases it covered (their names: report_dir.py).

`conformance nightly` writes them before any work (a run killed outright
stays resumable); `pytest --backend=... --report-dir DIR` at the end of its
run (run/writer.py). report/build.py reads them; rerun.py turns run.json's
"settings" into the command that reruns one pair.
"""

from __future__ import annotations

import datetime

from conformance.settings import Settings


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def run_record(backends: list[str], settings: Settings, **more_settings) -> dict:
    """run.json's content as a run starts: the backends' names, the settings that shape results,
    the toolchain and the machine. `more_settings`: what the front end adds (-k, tags, lanes)."""
    from conformance.report.summary import machine
    from conformance.toolchain.versions import toolchain_versions

    return {
        "started": utc_now(),
        "backends": backends,
        "settings": {
            "seed": settings.seed,
            "export_mode": settings.export_mode,
            "reruns": settings.reruns,
            "check_determinism": settings.check_determinism,
            "compile_only": settings.compile_only,
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


def case_record(case) -> dict:
    """A case as the reports know it (cases/spec.py: Case.record)."""
    return case.record()


def case_snapshot(cases) -> dict:
    """cases.json: each case by its id, so the reports never read today's registry."""
    return {c.id: case_record(c) for c in cases}
