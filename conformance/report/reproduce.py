"""How to rerun one (case, backend) pair as the run ran it: the pytest command a report shows."""

from __future__ import annotations

import shlex

from conformance.export_modes import DEFAULT_EXPORT_MODE


def pytest_command(case: str, backend: str, settings: dict, xfailed: bool = False) -> str:
    """`pytest --backend=B --case=C` with the run's case sources, suites, seed, export mode and backend options.

    `settings` is run.json's "settings": what it does not record, the
    command leaves at pytest's defaults. A pair its xfail set expects to
    fail (xfailed) gets --no-xfail, or pytest would pass it quietly as XFAIL.
    """
    args = ["pytest", f"--backend={backend}", f"--case={case}"]
    if settings.get("default_cases") is False:
        args.append("--no-default-cases")
    args += [f"--cases={path}" for path in settings.get("case_paths") or []]
    suites = settings.get("suites") or ["default"]
    if suites != ["default"]:
        args += [f"--suite={suite}" for suite in suites]
    if settings.get("seed"):
        args.append(f"--seed={settings['seed']}")
    if settings.get("export_mode", DEFAULT_EXPORT_MODE) != DEFAULT_EXPORT_MODE:
        args.append(f"--export-mode={settings['export_mode']}")
    custom_ops = (settings.get("options") or {}).get("custom_ops")
    if custom_ops:
        args.append(f"--custom-ops={','.join(custom_ops)}")
    if settings.get("check_determinism"):
        args.append("--check-determinism")
    if xfailed:
        args.append("--no-xfail")
    return shlex.join(args)
