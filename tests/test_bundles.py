"""Reproducer bundles (--artifacts): each holds its own case's diagnostics, replays with public tools
from a warm compile cache exactly as from a cold one, and never hangs or passes quietly."""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conformance.execution.engine import Engine
from conformance.execution.settings import Settings
from tests.conftest import FIXTURES, fake

SMALL = ["add.broadcast", "double", "tanh", "sum.int"]


def engine_run(backends: list[str], pairs: list[tuple[str, str]], cases=FIXTURES / "cases", **settings) -> dict:
    engine = Engine(Settings(backends=backends, case_paths=[str(cases)], default_cases=False, **settings))
    try:
        return {r.key: r for r in engine.run(pairs)}
    finally:
        engine.close()


@pytest.mark.parametrize("spec,name", [("BATCH_BLAMING", "batch-blaming"), ("BATCH_BISECTED", "batch-bisected")])
def test_a_failing_batch_members_details_are_its_own(tmp_path, spec, name):
    results = engine_run([fake(spec)], [(c, name) for c in SMALL], batch_size=4, artifacts=str(tmp_path))
    tanh = results[("tanh", name)]
    assert (tanh.stage, tanh.status) == ("compile", "fail"), tanh
    assert "cannot compile the batch of tanh\n" in tanh.details + "\n", tanh.details
    # Neither the batch's error nor another member's output is the victim's.
    others = [c for c in SMALL if c != "tanh"]
    assert not [c for c in others if c in tanh.details], tanh.details
    assert (tmp_path / "tanh" / name / "details.txt").read_text() == tanh.details
    assert all(results[(c, name)].passed for c in others)
