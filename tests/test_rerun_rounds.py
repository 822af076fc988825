"""Re-runs gathered over jobs: a lane re-runs the failures of many jobs in one fresh child, with the same verdicts."""

from __future__ import annotations

import json

import pytest

from conformance.execution import engine as engine_module
from conformance.settings import Settings
from conformance.nightly.executors.lanes import LanesExecutor
from tests.conftest import FIXTURES, fake

JOBS = [[("tanh", "scripted"), ("double", "scripted")], [("add.broadcast", "scripted"), ("sum.int", "scripted")]]


@pytest.fixture
def children(monkeypatch):
    """How many supervised children the engines start."""
    started = []
    real = engine_module.ChildProcess

    def counted(settings, **kwargs):
        started.append(1)
        return real(settings, **kwargs)

    monkeypatch.setattr(engine_module, "ChildProcess", counted)
    return started


def lane_run(monkeypatch, failing: list[str], **settings) -> dict:
    # A wrong answer: re-run (a refusal of scripted's lowering is its translation's, and runs once).
    monkeypatch.setenv("FAKE_SCRIPT", json.dumps(dict.fromkeys(failing, "perturb")))
    settings = Settings(backends=[fake("SCRIPTED")], case_paths=[str(FIXTURES / "cases")], default_cases=False, **settings)
    results = []
    LanesExecutor(1).run(JOBS, settings, results.append)
    return {r.case: r for r in results}


def test_the_failures_of_two_jobs_are_rerun_in_one_fresh_child(monkeypatch, children):
    results = lane_run(monkeypatch, ["tanh", "add.broadcast"])
    assert len(results) == 4
    for case in ("tanh", "add.broadcast"):  # each failed twice alike: a failure, with both attempts
        assert (results[case].status, results[case].code) == ("fail", "NUMERIC_MISMATCH"), results[case]
        assert [a["code"] for a in results[case].extras["attempts"]] == ["NUMERIC_MISMATCH"] * 2
    assert results["double"].passed and results["sum.int"].passed
    # One child for both jobs, one for the round of re-runs (one round per job would start three).
    assert len(children) == 2


def test_a_full_batch_of_failures_is_rerun_before_the_next_job(monkeypatch, children):
    results = lane_run(monkeypatch, ["tanh", "double", "add.broadcast"], batch_size=2)
    # Job 1's two failures fill a batch: re-run at once (a fresh child, which then runs job 2),
    # job 2's one failure waits for the lane's end (another fresh child).
    assert len(children) == 3
    assert all(len(results[c].extras["attempts"]) == 2 for c in ("tanh", "double", "add.broadcast"))
    assert results["sum.int"].passed


def test_without_reruns_nothing_waits(monkeypatch, children):
    results = lane_run(monkeypatch, ["tanh", "add.broadcast"], reruns=0)
    assert results["tanh"].failed and "attempts" not in results["tanh"].extras
    assert len(children) == 1
