"""Supervised execution: a case that kills or hangs its process is classified, and the run goes on.

These run real child processes: the fake backends really segfault, abort,
exit and hang in a named stage.
"""

import json
import os
from pathlib import Path

import pytest

from conformance.execution.engine import Engine
from conformance.settings import Settings
from tests.conftest import FIXTURES, fake

CRASHERS = {
    # backend: (stage, words the explanation must contain)
    "segfault": ("lower", "SIGSEGV"),
    "abort": ("compile", "SIGABRT"),
    "exit3": ("compile", "exited with status 3"),
    "hang": ("run", "no sign of progress for 4 s"),
}
SPECS = {"segfault": "SEGFAULT", "abort": "ABORT", "exit3": "EXIT3", "hang": "HANG"}


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_crashes_and_hangs_become_results_at_their_stage(run_registry, workers):
    backends = ",".join(fake(SPECS[b]) for b in CRASHERS)
    run = run_registry(f"--backend={backends}", "--case-timeout=4", "-k", "tanh or double", *workers)
    assert run.returncode == 1, run
    for backend, (stage, words) in CRASHERS.items():
        victim = run.results[f"tanh[{backend}]"]
        code = "TIMEOUT" if backend == "hang" else "CRASH"
        assert (victim["status"], victim["stage"], victim["code"]) == ("fail", stage, code), victim
        assert words in victim["explanation"], victim
        # The neighbour in the same job, run after the disaster, still passes.
        assert run.results[f"double[{backend}]"]["status"] == "pass", run
    # The summary table: one row per backend, with its failure code.
    rows = {line.split()[0]: line for line in run.output.splitlines() if line.split()[:1] in (["segfault"], ["hang"])}
    assert rows["segfault"].split()[1:4] == ["2", "1", "1"] and rows["segfault"].endswith("CRASH 1"), run
    assert rows["hang"].endswith("TIMEOUT 1"), run


def _engine_results(backend: str, cases: list[str], batch: int):
    settings = Settings(
        backends=[fake(backend)],
        case_paths=[str(FIXTURES / "cases")],
        default_cases=False,
        batch_size=batch,
        case_timeout=60,
    )
    engine = Engine(settings)
    name = {"BATCH_SEGFAULT": "batch-segfault", "BATCH_RAISE": "batch-raise"}[backend]
    try:
        return {r.case: r for r in engine.run([(c, name) for c in cases])}
    finally:
        engine.close()


CASES = ["add.broadcast", "double", "tanh", "sum.int"]


def test_a_crash_in_a_later_job_quotes_its_own_words_not_the_emptied_log_before_them():
    """The child's log is emptied between jobs: what a later job prints starts the log again (no NUL-filled
    gap where the earlier jobs' output was, which the quoted dying words then began with)."""
    settings = Settings(backends=[fake("CHATTY_ABORT")], case_paths=[str(FIXTURES / "cases")], default_cases=False)
    engine = Engine(settings)
    try:
        first = list(engine.run([("double", "chatty-abort")]))  # prints, in the child that then runs the next job
        victim = list(engine.run([("tanh", "chatty-abort")]))[0]
    finally:
        engine.close()
    assert first[0].passed, first
    assert (victim.stage, victim.code) == ("compile", "CRASH"), victim
    assert victim.explanation.endswith("(killed by signal SIGABRT (6)): LLVM ERROR: fake assertion failed"), victim.explanation
    assert "\x00" not in victim.details


def test_a_batch_that_crashes_is_bisected_until_the_guilty_case_is_alone():
    results = _engine_results("BATCH_SEGFAULT", CASES, batch=4)
    assert results["tanh"].code == "CRASH" and "SIGSEGV" in results["tanh"].explanation
    assert results["tanh"].stage == "compile"
    # faulthandler's Python stack lands in the details: it names the guilty line.
    assert "Segmentation fault" in results["tanh"].details and "in die" in results["tanh"].details
    assert all(results[c].passed for c in CASES if c != "tanh"), results


def test_a_batch_that_raises_is_split_and_the_verdicts_match_one_by_one():
    batched = _engine_results("BATCH_RAISE", CASES, batch=4)
    single = _engine_results("BATCH_RAISE", CASES, batch=1)
    summary = lambda rs: {c: (r.status, r.stage, r.code, r.explanation) for c, r in rs.items()}
    assert summary(batched) == summary(single)
    assert batched["tanh"].stage == "compile" and "failed on purpose" in batched["tanh"].explanation
    assert sum(r.passed for r in batched.values()) == 3


def test_a_hang_in_a_shared_stage_costs_one_timeout_for_every_backend_sharing_it(tmp_path, monkeypatch):
    hangs = tmp_path / "hangs.log"
    monkeypatch.setenv("FAKE_HANG_LOG", str(hangs))  # the child inherits it
    settings = Settings(
        backends=[fake("SHARED_HANG_A"), fake("SHARED_HANG_B")],
        case_paths=[str(FIXTURES / "cases")],
        default_cases=False,
        case_timeout=3,
    )
    engine = Engine(settings)
    try:
        results = {r.key: r for r in engine.run([(c, b) for c in ["tanh", "double"] for b in ["shared-a", "shared-b"]])}
    finally:
        engine.close()
    # One timeout waited out, not one per backend: the hanging stage was entered once.
    assert hangs.read_text().splitlines() == ["shared-a"]
    for backend in ("shared-a", "shared-b"):
        hung = results[("tanh", backend)]
        assert (hung.code, hung.stage) == ("TIMEOUT", "prepare"), hung
        assert results[("double", backend)].passed


@pytest.mark.parametrize("how", [None, "raise", "segfault"])
def test_a_batched_shared_stage_runs_once_per_case_and_every_sharer_gets_its_verdict(tmp_path, monkeypatch, how):
    """The ONNX contract's shape: a stage both batched and shared. It runs once for a batch of cases, the
    backends sharing it take its outcome; a member that raises or crashes the process fails on every sharer,
    and the others pass on every sharer (a crash's retries carry the sharers along)."""
    log = tmp_path / "batches.log"
    monkeypatch.setenv("FAKE_BATCH_LOG", str(log))
    prefix = {None: "SHARED_BATCH", "raise": "SHARED_BATCH_RAISE", "segfault": "SHARED_BATCH_SEGFAULT"}[how]
    names = {None: ("shared-batch-a", "shared-batch-b"), "raise": ("raise-a", "raise-b"), "segfault": ("segfault-a", "segfault-b")}[how]
    settings = Settings(
        backends=[fake(f"{prefix}_A"), fake(f"{prefix}_B")],
        case_paths=[str(FIXTURES / "cases")],
        default_cases=False,
        batch_size=4,
        case_timeout=60,
    )
    engine = Engine(settings)
    try:
        results = {r.key: r for r in engine.run([(c, b) for c in CASES for b in names])}
    finally:
        engine.close()
    assert len(results) == 2 * len(CASES), sorted(results)
    for backend in names:
        for case in CASES:
            result = results[(case, backend)]
            if how and case == "tanh":
                assert (result.stage, result.code) == ("prepare", "CRASH" if how == "segfault" else "UNKNOWN"), result
            else:
                assert result.passed, result
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert {backend for backend, _ in calls} == {names[0]}, calls  # the second backend only took the outcomes
    assert calls[0][1] == CASES  # the first call held the whole batch
    if how is None:
        assert len(calls) == 1


@pytest.mark.parametrize("with_maker", [True, False])
def test_a_stage_given_another_chains_value_starts_from_it_when_the_job_made_it(tmp_path, monkeypatch, with_maker):
    """The ONNX exporter's shape: its first stage builds on torch.export's program (`shared`'s `given`). It is
    handed the value, with the extras said with it, where a backend of the job made it; None where none did,
    or where making it failed (the stage then makes it itself, and fails as it failed)."""
    log = tmp_path / "given.log"
    monkeypatch.setenv("FAKE_GIVEN_LOG", str(log))
    names = ["maker", "builder"] if with_maker else ["builder"]
    settings = Settings(
        backends=[fake(name.upper()) for name in names], case_paths=[str(FIXTURES / "cases")], default_cases=False, case_timeout=60
    )
    engine = Engine(settings)
    try:
        results = {r.key: r for r in engine.run([(c, b) for c in CASES for b in names])}
    finally:
        engine.close()
    assert all(results[(case, "builder")].passed for case in CASES)
    given = {case: (made, by) for case, made, by in (json.loads(line) for line in log.read_text().splitlines())}
    assert set(given) == set(CASES)
    for case in CASES:
        made = with_maker and case != "tanh"
        assert given[case] == ((f"made {case}", "maker") if made else (None, None)), given


def test_a_runaway_process_is_killed_by_the_memory_watchdog():
    settings = Settings(
        backends=[fake("HOG")], case_paths=[str(FIXTURES / "cases")], default_cases=False, memory_kill_mb=1024
    )
    engine = Engine(settings)
    try:
        results = {r.case: r for r in engine.run([("tanh", "hog"), ("double", "hog")])}
    finally:
        engine.close()
    hog = results["tanh"]
    assert (hog.code, hog.stage) == ("CRASH", "compile"), hog
    assert "more memory than the 1 GB limit" in hog.explanation, hog
    # How much it had taken differs from run to run: the details say it, the pinned explanation does not.
    assert " GB when it was killed" in hog.details and " GB when" not in hog.explanation
    assert results["double"].passed


def test_a_stage_that_prints_without_end_is_a_timeout_long_before_the_case_timeout():
    # The explanation tells the flood watch's kill from the case timeout's (600 s here).
    settings = Settings(backends=[fake("CHATTER")], case_paths=[str(FIXTURES / "cases")], default_cases=False, case_timeout=600)
    engine = Engine(settings)
    try:
        results = {r.case: r for r in engine.run([("tanh", "chatter"), ("double", "chatter")])}
    finally:
        engine.close()
    looping = results["tanh"]
    assert (looping.code, looping.stage) == ("TIMEOUT", "lower"), looping
    assert "kept printing without finishing" in looping.explanation, looping
    assert looping.explanation.endswith("kept printing: failed to rewrite the same op again"), looping
    # How many MB it printed before the kill depends on the machine's speed: details only.
    assert "MB" not in looping.explanation and " MB of output before it was killed" in looping.details
    # The flood is folded: a few copies and a count, not megabytes.
    assert len(looping.details) < 10_000 and "more times]" in looping.details, looping.details[:500]
    assert results["double"].passed


def test_a_wrong_value_for_an_input_updated_in_place_is_a_mismatch(monkeypatch):
    from tests.test_isolation import FIXTURES as fixtures

    for bad, expect in ((False, "pass"), (True, "fail")):
        if bad:
            monkeypatch.setenv("FAKE_BAD_MUTATION", "1")
        engine = Engine(Settings(backends=[fake("MUTATION_LEADING")], case_paths=[str(fixtures / "inplace")], default_cases=False))
        try:
            result = next(engine.run([("add_.inplace", "mutation-leading")]))
        finally:
            engine.close()
        assert result.status == expect, result
    assert result.code == "NUMERIC_MISMATCH"
    assert result.explanation.startswith("input 0 (updated in place): 12 of 12 elements differ")


def test_a_child_killed_mid_job_leaves_nothing_in_the_temp_directory(tmp_path, monkeypatch):
    """Its job's scratch (where a model's IR is printed: hundreds of MB) lives in the child's own directory,
    which the parent removes, however the child ended: a nightly a week long must not fill the disk."""
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the zygote's and so the children's temp directory
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # this process's: the parent's side of the child
    settings = Settings(backends=[fake("SEGFAULT"), fake("HANG")], case_paths=[str(FIXTURES / "cases")],
                        default_cases=False, case_timeout=3)  # fmt: skip
    engine = Engine(settings)
    try:
        results = {r.backend: r for r in engine.run([("tanh", "segfault"), ("tanh", "hang"), ("double", "segfault")])}
        assert results["segfault"].code == "CRASH" and results["hang"].code == "TIMEOUT", results
    finally:
        engine.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "left behind"


def test_the_directories_of_a_run_killed_outright_are_swept_by_the_next(tmp_path, monkeypatch):
    """A SIGKILLed run cannot remove its children's directories; the next run's first child does, once their
    process is gone and nothing in them changed for a while (a live one in another PID namespace is kept)."""
    import subprocess
    import tempfile
    import time

    from conformance.execution import child_scratch

    gone = subprocess.Popen(["true"])
    gone.wait()
    old = time.time() - 2 * child_scratch.STALE_SECONDS

    def made_by(pid: int, name: str, touched: float) -> Path:
        path = tmp_path / f"{child_scratch.PREFIX}{pid}-{name}"
        (path / "conformance-job-x").mkdir(parents=True)
        (path / "child.log").write_text("")
        for each in (path / "conformance-job-x", path / "child.log", path):
            os.utime(each, (touched, touched))
        return path

    abandoned = made_by(gone.pid, "abandoned", old)
    recent = made_by(gone.pid, "recent", time.time())
    running = made_by(1, "running", old)  # pid 1 always runs
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    engine = Engine(Settings(backends=[fake("SEGFAULT")], case_paths=[str(FIXTURES / "cases")], default_cases=False))
    try:
        assert [r.code for r in engine.run([("tanh", "segfault")])] == ["CRASH"]
    finally:
        engine.close()
    assert not abandoned.exists()
    assert recent.exists() and running.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([recent.name, running.name])  # the run's own removed too
