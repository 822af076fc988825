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


def test_children_run_this_conformance_whatever_folder_the_run_starts_in(tmp_path):
    """A `conformance` folder in the working directory (another checkout) must not stand in for the parent's code
    in the processes it starts: they run with -P and the parent's package first on PYTHONPATH."""
    import subprocess
    import sys

    from tests.conftest import PROJECT

    impostor = tmp_path / "conformance"
    (impostor / "execution").mkdir(parents=True)
    (impostor / "__init__.py").write_text("raise ImportError('the conformance of the working directory was imported')\n")
    (impostor / "execution" / "__init__.py").write_text("")
    proc = subprocess.run(
        # -P: the parent as a console script starts, its own folder (not the working directory) on sys.path
        [sys.executable, "-P", "-c", "import sys; from conformance.cli.main import main; sys.exit(main())", "nightly",
         "--backend", fake("SCRIPTED"), "--no-default-cases", "--cases", str(FIXTURES / "cases"), "-k", "tanh",
         "--no-cache", "--no-xfail", "-j", "1", "--output-dir", str(tmp_path / "out")],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "the conformance of the working directory" not in proc.stderr


def test_a_spare_zygote_started_ahead_is_taken_by_the_first_engine_with_its_settings():
    """`conformance nightly` starts one as the run starts, before it has the run's settings, so its start-up
    overlaps the parent's own; it is taken only once loaded with the engine's settings, an engine with other
    settings starts its own, and an unused spare is closed, not left running."""
    from conformance.execution import zygote
    from conformance.execution.supervisor import STARTUP_TIMEOUT

    engine = engine_for("SCRIPTED")
    zygote.start_spare(STARTUP_TIMEOUT)
    spare = zygote._SPARE[0]
    assert not spare.ready  # the caller went on at once
    try:
        assert zygote.take_spare(engine.settings) is None  # no settings yet: not this engine's
        zygote.load_spare(engine.settings)
        results = list(engine.run([(c, "scripted") for c in CASES]))
        assert engine.zygote is spare and not zygote._SPARE
        assert all(r.passed for r in results), results
    finally:
        engine.close()
    other = engine_for("SEGFAULT")
    zygote.start_spare(STARTUP_TIMEOUT)
    zygote.load_spare(engine.settings)
    unused = zygote._SPARE[0]
    try:
        assert zygote.take_spare(other.settings) is None
    finally:
        zygote.close_spare()
        other.close()
    assert not zygote._SPARE and not unused.alive and unused.process.poll() is not None


def test_a_spare_zygote_never_given_settings_is_closed_with_the_run():
    """A run that stops before it has settings (a usage error) leaves no zygote waiting for them."""
    from conformance.execution import zygote
    from conformance.execution.supervisor import STARTUP_TIMEOUT

    zygote.start_spare(STARTUP_TIMEOUT)
    waiting = zygote._SPARE[0]
    zygote.close_spare()
    assert not waiting.alive and waiting.process.poll() is not None


BIG_BMM_CASES = '''
import torch

from conformance import T, op

# A large op while the registry loads, as OpInfo's samples run one: in the zygote, torch's intra-op pool would start.
torch.bmm(torch.ones(64, 128, 128), torch.ones(64, 128, 128))

CASES = [op("bmm.big", torch.bmm, T(64, 128, 128), T(64, 128, 128), rtol=1e-4, atol=1e-3)]
'''


def test_a_parallel_op_while_the_registry_loads_leaves_no_forked_child_hanging(tmp_path):
    """A thread pool started in the zygote is missing in its forked children, and their first parallel op waited
    for it forever (OpInfo's bmm samples hung in eager): the zygote keeps torch at one thread, a child gets its own."""
    import torch

    (tmp_path / "big.py").write_text(BIG_BMM_CASES)
    engine = Engine(Settings(backends=["eager"], case_paths=[str(tmp_path)], default_cases=False, reruns=0, case_timeout=60))
    try:
        [result] = list(engine.run([("bmm.big", "eager")]))
        threads = [p.num_threads() for p in (psutil.Process(engine.zygote.process.pid),)]
    finally:
        engine.close()
    assert result.passed, result
    if torch.get_num_threads() > 1:  # the zygote started no worker thread of its own
        assert threads == [1], threads
