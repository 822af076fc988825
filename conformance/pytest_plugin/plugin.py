"""The pytest entry point: `pytest --backend=NAME` runs the case registry on NAME.

Without --backend pytest behaves as usual (it runs the framework's own
tests) and this module loads nothing heavy: the options come from
conformance.run_options, which imports no torch. With --backend, the named
backends are loaded while the command line is read, so their own options
join the "conformance" group, and session.py takes over collection, running
and the summary.
"""

from __future__ import annotations

import copy

import pytest

from conformance import run_options
from conformance.pytest_plugin import rootdir

GROUP = "conformance"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup(
        GROUP, "conformance: run the case registry through backends (a backend's own options join when --backend names it)"
    )
    for option in run_options.PYTEST:
        option.add_to(group)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]):
    """Before pytest reads the command line for good, and before it captures output."""
    rootdir.restart_if_misled(early_config)
    known = parser.parse_known_args(args, namespace=copy.copy(early_config.option))
    if specs := run_options.parse_backends(run_options.BACKEND.value(known)):
        from conformance.run import RunError
        from conformance.run.session import resolve_backends

        try:
            run_options.add_backend_options(parser.getgroup(GROUP), resolve_backends(specs))
        except (RunError, ValueError) as e:
            raise pytest.UsageError(str(e)) from None
    return (yield)


def pytest_configure(config: pytest.Config) -> None:
    if specs := run_options.parse_backends(run_options.BACKEND.value(config.option)):
        from conformance.pytest_plugin import session
        from conformance.process_exit import skip_last_collection

        skip_last_collection()
        session.start(config, specs)
