"""The one command that reruns a pair (conformance/rerun.py), as reports, bundles and pytest's failure text show it."""

from __future__ import annotations

import argparse
import shlex

import pytest

from conformance.backends import loader
from conformance.rerun import option_args, pytest_command, rerun_command
from conformance.settings import Settings
from tests import fake_backends
from tests.conftest import fake


def test_the_reproduce_command_carries_the_runs_case_sources_suites_seed_and_options():
    assert pytest_command("tanh", "tosa", {}) == "pytest --backend=tosa --case=tanh"
    assert pytest_command("tanh", "tosa", {"suites": ["default"], "seed": 0, "default_cases": True, "case_paths": []}) == (
        "pytest --backend=tosa --case=tanh"
    )
    settings = {"suites": ["opinfo"], "seed": 3, "default_cases": False, "case_paths": ["my cases/dir"],
                "options": {"custom_ops": ["aten.gelu", "aten.layer_norm"]}}
    assert pytest_command("odd id[1]", "tosa-selective", settings) == (
        "pytest --backend=tosa-selective '--case=odd id[1]' --no-default-cases '--cases=my cases/dir' --suite=opinfo --seed=3 "
        "--custom-ops=aten.gelu,aten.layer_norm"
    )
    # an expected failure would pass quietly as XFAIL: the command turns the xfail sets off
    assert pytest_command("tanh", "tosa", {}, no_xfail=True) == "pytest --backend=tosa --case=tanh --no-xfail"


def test_the_case_timeout_and_the_xfail_sets_a_run_used_are_carried():
    settings = {"case_timeout": 60.0}
    assert pytest_command("tanh", "tosa", settings, xfail_dir="my sets") == (
        "pytest --backend=tosa --case=tanh --case-timeout=60 '--xfail-dir=my sets'"
    )
    # --no-xfail wins: a pair judged by no set is rerun judged by none
    assert pytest_command("tanh", "tosa", settings, no_xfail=True, xfail_dir="my sets") == (
        "pytest --backend=tosa --case=tanh --no-xfail --case-timeout=60"
    )
    assert pytest_command("tanh", "tosa", {"case_timeout": 300.0}) == "pytest --backend=tosa --case=tanh"  # the default


def test_any_backends_option_is_written_back_by_its_dest_not_by_name():
    assert pytest_command("tanh", "optioned", {"options": {"fake_flavours": ["a", "b"], "verbose_dump": True, "level": 2}}) == (
        "pytest --backend=optioned --case=tanh --fake-flavours=a,b --verbose-dump --level=2"
    )
    assert option_args("custom_ops", []) == [] and option_args("dump", False) == [] and option_args("x", None) == []


def test_a_run_in_progress_gives_a_pair_only_its_own_backends_options():
    """pytest refuses an option that no backend it was given declares: scripted's command must not carry optioned's."""
    settings = Settings(backends=[fake("SCRIPTED"), fake("OPTIONED")], options={"fake_flavours": ["a", "b"]})
    assert rerun_command("tanh", "scripted", settings) == f"pytest --backend={fake('SCRIPTED')} --case=tanh --no-xfail"
    assert rerun_command("tanh", "optioned", settings) == f"pytest --backend={fake('OPTIONED')} --case=tanh --fake-flavours=a,b --no-xfail"


def backend_options():
    shipped = [option for backend in loader.shipped().values() for option in backend.options]
    assert shipped, "no shipped backend declares an option: this test checks nothing"
    return [*shipped, fake_backends.FLAVOURS]


@pytest.mark.parametrize("option", backend_options(), ids=lambda option: option.flags[0])
def test_a_backends_option_written_back_parses_to_the_value_the_run_had(option):
    """The generic form holds for every backend option there is: its flag parses back to the value."""
    parser = argparse.ArgumentParser()
    option.add_to(parser)
    value = list(option.default) if isinstance(option.default, tuple) else option.default
    for given in (value, value[:1] if isinstance(value, list) else value):
        written = option_args(option.dest, given)
        assert getattr(parser.parse_args(written), option.dest) == given, shlex.join(written)
