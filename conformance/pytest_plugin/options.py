"""The plugin's command-line options, all under one "conformance" heading."""

from __future__ import annotations

import os

import pytest

from conformance import content
from conformance.backends.loader import parse_backend_option
from conformance.execution import settings as defaults
from conformance.execution.settings import Settings


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "conformance: run the case registry through backends")
    group.addoption(
        "--backend",
        action="append",
        metavar="NAME[,NAME...]",
        help="run the registered cases on these backends (comma-separated, repeatable): a shipped "
        "name, an entry point of group conformance.backends, or module:ATTR. Without it pytest "
        "runs the framework's own tests.",
    )
    group.addoption(
        "--cases",
        action="append",
        default=[],
        metavar="DIR|MODULE",
        help="add cases from a directory or an importable module (repeatable)",
    )
    group.addoption(
        "--case",
        action="append",
        default=[],
        metavar="ID",
        help="run only these case ids, exactly (repeatable); -k matches substrings",
    )
    group.addoption(
        "--no-default-cases",
        action="store_true",
        help="leave out the project's own cases/ directory (run only --cases and entry points)",
    )
    group.addoption(
        "--suite",
        action="append",
        metavar="NAME",
        help="case suites to run (repeatable; default: default). 'opinfo' adds PyTorch's OpInfo samples.",
    )
    group.addoption("--seed", type=int, default=0, help="seed mixed into every case's inputs (default 0)")
    group.addoption(
        "--case-timeout",
        type=float,
        default=defaults.DEFAULT_CASE_TIMEOUT,
        metavar="SECONDS",
        help=f"a stage silent for this long is killed and reported as TIMEOUT (default {defaults.DEFAULT_CASE_TIMEOUT:g})",
    )
    group.addoption(
        "--memory-limit",
        type=int,
        default=defaults.DEFAULT_MEMORY_KILL_MB,
        metavar="MB",
        help=f"a case whose process (with the compilers it runs) uses more is killed: CRASH (default {defaults.DEFAULT_MEMORY_KILL_MB})",
    )
    group.addoption(
        "--batch-size",
        type=int,
        default=defaults.DEFAULT_BATCH,
        help=f"op cases compiled together in one module by batching backends (default {defaults.DEFAULT_BATCH})",
    )
    group.addoption("--artifacts", metavar="DIR", help="write a reproducer bundle for each failing case here")
    group.addoption(
        "--cache-dir",
        metavar="DIR",
        default=os.environ.get("CONFORMANCE_CACHE", str(content.PROJECT_ROOT / ".conformance-cache")),
        help="compile cache location (default .conformance-cache, or $CONFORMANCE_CACHE)",
    )
    group.addoption("--no-cache", action="store_true", help="neither read nor write the compile cache")
    group.addoption(
        "--custom-ops",
        metavar="OP[,OP...]",
        help="ops the tosa-selective backend keeps from decomposition and turns into tosa.custom (default there: aten.layer_norm,aten.gelu)",
    )
    group.addoption(
        "--xfail-dir",
        metavar="DIR",
        default=str(content.DEFAULT_XFAIL_DIR),
        help="where the per-backend xfail sets live (default xfail_sets/)",
    )
    group.addoption("--no-xfail", action="store_true", help="ignore the xfail sets: every failure is FAIL")
    group.addoption(
        "--update-xfails",
        action="store_true",
        help="rewrite the xfail sets of the run's backends from this run's results (keeps human notes)",
    )


def backend_specs(config: pytest.Config) -> list[str]:
    return parse_backend_option(config.getoption("backend"))


def settings_from(config: pytest.Config) -> Settings:
    custom_ops = config.getoption("custom_ops")
    return Settings(
        backends=backend_specs(config),
        case_paths=list(config.getoption("cases")),
        default_cases=not config.getoption("no_default_cases"),
        suites=config.getoption("suite") or ["default"],
        seed=config.getoption("seed"),
        case_timeout=config.getoption("case_timeout"),
        batch_size=config.getoption("batch_size"),
        memory_kill_mb=config.getoption("memory_limit"),
        artifacts=os.path.abspath(config.getoption("artifacts")) if config.getoption("artifacts") else None,
        cache_dir=None if config.getoption("no_cache") else os.path.abspath(config.getoption("cache_dir")),
        options={"custom_ops": [o.strip() for o in custom_ops.split(",") if o.strip()]} if custom_ops else {},
    )
