"""--export-mode and a case's export_mode: which torch.export mode runs, recorded in results and commands."""

from __future__ import annotations

import argparse

import pytest

from conformance import run_options
from conformance.execution.engine import Engine
from conformance.settings import Settings
from conformance.rerun import pytest_command
from tests.conftest import FIXTURES, fake

CASES = ["size.any_mode", "size.strict"]


def run(**settings):
    engine = Engine(Settings(backends=[fake("EXPORT_ONLY")], case_paths=[str(FIXTURES / "export_modes")], default_cases=False, **settings))
    try:
        return {r.case: r for r in engine.run([(c, "export-only") for c in CASES])}
    finally:
        engine.close()


def test_the_run_exports_non_strict_unless_told_and_a_case_may_require_its_mode():
    default = run()
    assert default["size.any_mode"].passed, default["size.any_mode"]
    assert default["size.any_mode"].extras["export_mode"] == "non-strict"
    strict = default["size.strict"]  # the case asks for strict whatever the run says
    assert (strict.stage, strict.extras["export_mode"]) == ("export", "strict"), strict
    told = run(export_mode="strict")["size.any_mode"]
    assert (told.stage, told.code, told.extras["export_mode"]) == ("export", strict.code, "strict"), told


def test_the_option_takes_the_two_modes_only():
    parser = argparse.ArgumentParser()
    run_options.EXPORT_MODE.add_to(parser)
    assert parser.parse_args([]).export_mode == "non-strict"
    assert run_options.settings_from(parser.parse_args(["--export-mode=strict"])).export_mode == "strict"
    with pytest.raises(argparse.ArgumentTypeError, match="expected non-strict or strict, got 'lenient'"):
        run_options.export_mode("lenient")


def test_the_reproduce_command_names_a_mode_other_than_the_default():
    assert pytest_command("tanh", "tosa", {"export_mode": "non-strict"}) == "pytest --backend=tosa --case=tanh"
    assert pytest_command("tanh", "tosa", {"export_mode": "strict"}) == "pytest --backend=tosa --case=tanh --export-mode=strict"
