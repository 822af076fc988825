"""How to rerun one (case, backend) pair as a run ran it: the one pytest command that
report.html, a bundle's reproduce.sh and pytest's failure text show.

It is built from the run's settings in the form run.json keeps them
(Settings.to_dict() gives the same): case sources, suites, seed, export
mode, the determinism check, the case timeout, and the backends' own
options. A backend's option is written back generically, as `--DEST=VALUE`
(its dest with dashes: a dest is named after its flag, see
run_options.Option), a list comma-separated, True as the bare flag; no
backend's option is known here by name. A run in progress gives a pair's
command only its own backend's options (pytest refuses an option no backend
it was given declares); a report, which knows the run from run.json alone,
gives every backend option the run was given, as run.json does not say
whose each one is.
"""

from __future__ import annotations

import shlex
from typing import Any

from conformance.export_modes import DEFAULT_EXPORT_MODE
from conformance.settings import DEFAULT_CASE_TIMEOUT, Settings


def pytest_command(case: str, backend: str, settings: dict, *, no_xfail: bool = False, xfail_dir: str | None = None) -> str:
    """`pytest --backend=B --case=C` with what `settings` (run.json's "settings") records; what it
    does not record stays at pytest's defaults.

    A pair judged against no xfail set, or one its set expects to fail,
    gets --no-xfail (else pytest would pass it quietly as XFAIL); `xfail_dir`
    names the sets of a run that judged by other than the project's own.
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
    for dest, value in (settings.get("options") or {}).items():
        args += option_args(dest, value)
    if settings.get("check_determinism"):
        args.append("--check-determinism")
    if no_xfail:
        args.append("--no-xfail")
    if settings.get("case_timeout", DEFAULT_CASE_TIMEOUT) != DEFAULT_CASE_TIMEOUT:
        args.append(f"--case-timeout={settings['case_timeout']:g}")
    if xfail_dir and not no_xfail:
        args.append(f"--xfail-dir={xfail_dir}")
    return shlex.join(args)


def option_args(dest: str, value: Any) -> list[str]:
    """A backend's option as a command line gives it: `--DEST=VALUE`; nothing for None, False or an empty list."""
    flag = "--" + dest.replace("_", "-")
    if value is None or value is False or value in ([], ()):
        return []
    if value is True:
        return [flag]
    if isinstance(value, (list, tuple)):
        value = ",".join(str(item) for item in value)
    return [f"{flag}={value}"]


def rerun_command(case: str, backend: str, settings: Settings, *, no_xfail: bool = True, xfail_dir: str | None = None) -> str:
    """The pytest command for a pair of a run in progress: its backend as the run named it, with
    that backend's own options, judged by `xfail_dir`'s sets, or by none (--no-xfail)."""
    spec, resolved = _named(settings, backend)
    data = settings.to_dict()
    if resolved is not None:
        own = {option.dest for option in resolved.options}
        data["options"] = {dest: value for dest, value in settings.options.items() if dest in own}
    return pytest_command(case, spec, data, no_xfail=no_xfail, xfail_dir=xfail_dir)


def backend_spec(settings: Settings, name: str) -> str:
    """The --backend value the run gave for the backend named `name` (a user's may be module:ATTR)."""
    return _named(settings, name)[0]


def _named(settings: Settings, name: str):
    """(the run's spec for the backend named `name`, that Backend); (name, None) when no spec names it."""
    from conformance.backends import loader

    for spec in settings.backends:
        try:
            backend = loader.resolve(spec)
        except loader.BackendError:
            continue
        if backend.name == name:
            return spec, backend
    return name, None
