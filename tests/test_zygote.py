"""Children are forked from the engine's zygote: after a crash the next child comes from the same zygote, and a
zygote that died is replaced without losing a pair."""

from __future__ import annotations

import os
import signal

import psutil

from conformance.execution.engine import Engine
from conformance.settings import Settings
from tests.conftest import FIXTURES, fake

CASES = ["tanh", "double", "add.broadcast"]


def engine_for(backend: str) -> Engine:
    return Engine(Settings(backends=[fake(backend)], case_paths=[str(FIXTURES / "cases")], default_cases=False, reruns=0))


def test_the_child_after_a_crash_is_forked_from_the_same_zygote():
    engine = engine_for("SEGFAULT")
    try:
        results = {r.case: r for r in engine.run([(c, "segfault") for c in CASES])}
        assert results["tanh"].code == "CRASH" and "SIGSEGV" in results["tanh"].explanation, results["tanh"]
        assert all(results[c].passed for c in CASES if c != "tanh")
        zygote = engine.zygote.process.pid
        child = engine.child.process.pid  # the one that ran the pairs after the crash
        assert psutil.Process(child).ppid() == zygote
        assert "conformance.execution.zygote" in " ".join(psutil.Process(zygote).cmdline())
    finally:
        engine.close()
    assert not psutil.pid_exists(zygote) or psutil.Process(zygote).status() == psutil.STATUS_ZOMBIE


def test_a_zygote_that_died_is_replaced_and_no_pair_is_lost():
    engine = engine_for("SCRIPTED")
    try:
        first = [r.case for r in engine.run([(c, "scripted") for c in CASES[:1]])]
        engine._drop_child()
        dead = engine.zygote.process.pid
        os.kill(dead, signal.SIGKILL)
        engine.zygote.process.wait()
        again = {r.case: r for r in engine.run([(c, "scripted") for c in CASES])}
        assert engine.zygote.process.pid != dead
    finally:
        engine.close()
    assert first == ["tanh"]
    assert sorted(again) == sorted(CASES) and all(r.passed for r in again.values()), again
