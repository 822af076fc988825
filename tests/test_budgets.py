"""Budgets from history: a pinned hang is confirmed in seconds, a pair that finished in a second waits a minute, not 300 s."""

from __future__ import annotations

import time

from conformance.execution import budgets
from conformance.execution.budgets import FAST_FLOOR, PINNED_HANG, RUNAWAY_MB, key, memory_allowed, plan, plan_memory, waiting_time
from conformance.execution.engine import Engine
from conformance.settings import Settings
from tests.conftest import FIXTURES, fake

TIMEOUT = 300.0


def test_a_pinned_hang_gets_seconds_and_more_when_its_finished_stages_were_slow():
    pinned = {("pad", "onnx-tosa"): "TIMEOUT", ("slow-pad", "onnx-tosa"): "TIMEOUT"}
    history = {("slow-pad", "onnx-tosa"): {"export": 4.0, "import": 0.5}}
    planned = plan(pinned, pinned, history, TIMEOUT)
    assert planned[key("pad", "onnx-tosa")] == PINNED_HANG
    assert planned[key("slow-pad", "onnx-tosa")] == budgets.FACTOR * 4.0 > PINNED_HANG


def test_a_pair_that_finished_in_a_second_waits_a_minute_and_the_others_the_case_timeout():
    history = {
        ("tanh", "tosa"): {"export": 0.2, "compile": 0.6, "run": 0.01},
        ("bert", "tosa"): {"export": 9.0, "compile": 40.0},
        ("failed-fast", "tosa"): {"export": 0.1, "lower": 0.05},
    }
    pinned = {("bert", "tosa"): "NUMERIC_MISMATCH", ("unknown", "tosa"): "UNSUPPORTED_OP"}
    planned = plan([*history, ("unknown", "tosa"), ("new", "tosa")], pinned, history, TIMEOUT)
    assert planned == {key("tanh", "tosa"): FAST_FLOOR, key("failed-fast", "tosa"): FAST_FLOOR}


def test_a_budget_only_ever_shortens_the_wait():
    history = {("tanh", "tosa"): {"run": 0.1}}
    assert plan(history, {("tanh", "tosa"): "TIMEOUT"}, history, 10.0) == {}  # --case-timeout 10 is shorter already


def test_a_stage_shared_by_pairs_waits_for_the_largest_budget_or_the_timeout_when_one_has_none():
    planned = {key("a", "tosa"): 30.0, key("b", "tosa"): 60.0}
    assert waiting_time(planned, [("a", "tosa")], TIMEOUT) == 30.0
    assert waiting_time(planned, [("a", "tosa"), ("b", "tosa")], TIMEOUT) == 60.0
    assert waiting_time(planned, [("a", "tosa"), ("c", "tosa")], TIMEOUT) == TIMEOUT
    assert waiting_time({}, [("a", "tosa")], TIMEOUT) == TIMEOUT


def run(budgets_given: dict, cases: list[str], backend: str = "HANG", **settings_given) -> tuple[dict, float]:
    settings = Settings(backends=[fake(backend)], case_paths=[str(FIXTURES / "cases")], default_cases=False,
                        case_timeout=60.0, reruns=0, budgets=budgets_given, **settings_given)  # fmt: skip
    engine = Engine(settings)
    start = time.monotonic()
    try:
        results = {r.case: r for r in engine.run([(c, backend.lower()) for c in cases])}
    finally:
        engine.close()
    return results, time.monotonic() - start


def test_a_hang_with_a_budget_is_a_timeout_after_its_budget_and_the_others_keep_their_verdicts():
    # The `hang` backend hangs in `run` on tanh; with --case-timeout 60 and a budget of 2 s the run takes seconds.
    results, wall = run({key("tanh", "hang"): 2.0, key("double", "hang"): 2.0}, ["tanh", "double", "add.broadcast"])
    assert wall < 40, wall
    tanh = results["tanh"]
    assert (tanh.code, tanh.stage) == ("TIMEOUT", "run") and "for 2 s" in tanh.explanation, tanh
    assert results["double"].passed and results["add.broadcast"].passed


def test_pytest_plans_a_pinned_hang_from_the_xfail_set_as_a_nightly_does(tmp_path):
    # pytest has no last report, but its xfail sets pin hangs: each is confirmed in PINNED_HANG seconds, not --case-timeout.
    from conformance.pytest_plugin.runner import ItemRunner
    from conformance.run.session import Run

    (tmp_path / "hang.toml").write_text('["tanh"]\nstage = "run"\ncode = "TIMEOUT"\nexplanation = "hangs"\n')
    settings = Settings(backends=[fake("HANG")], case_paths=[str(FIXTURES / "cases")], default_cases=False, case_timeout=TIMEOUT)
    run = Run(settings, [], str(tmp_path))
    runner = ItemRunner(run)
    try:
        items = [type("Item", (), {"case": type("C", (), {"id": c}), "backend": type("B", (), {"name": "hang"})}) for c in ("tanh", "double")]
        runner.plan(items)
    finally:
        runner.close()
    assert settings.budgets == {key("tanh", "hang"): PINNED_HANG}
    # It runs in a job of its own: in a batch, the batch would wait for its largest budget.
    assert runner.job_of[("tanh", "hang")] == [("tanh", "hang")] and runner.job_of[("double", "hang")] == [("double", "hang")]
    assert run.run_alone([]) == {"tanh"}


def test_a_known_runaway_gets_a_memory_budget_below_the_kill_limit_and_no_other_pair_does():
    planned = plan_memory([("copy_", "stablehlo"), ("tanh", "stablehlo")], [("copy_", "stablehlo"), ("gone", "linalg")], 8192)
    assert planned == {key("copy_", "stablehlo"): RUNAWAY_MB}
    assert plan_memory([("copy_", "stablehlo")], [("copy_", "stablehlo")], RUNAWAY_MB) == {}  # --memory-limit is lower already
    # A stage several pairs share stops at the smallest budget among them: only a pair alone is judged at it.
    planned_mb = {key("copy_", "stablehlo"): RUNAWAY_MB}
    assert memory_allowed(planned_mb, [("copy_", "stablehlo"), ("tanh", "stablehlo")], 8192) == RUNAWAY_MB
    assert memory_allowed(planned_mb, [("tanh", "stablehlo")], 8192) == 8192
    assert memory_allowed(planned_mb, [], 8192) == 8192
    assert budgets.pinned_runaway("CRASH", "the process was killed for using more memory than the 8 GB limit in stage lower")
    assert not budgets.pinned_runaway("CRASH", "the process crashed in stage lower (killed by signal SIGSEGV (11))")


def test_a_runaway_with_a_memory_budget_is_killed_at_its_budget_and_the_others_at_the_limit():
    # The hog backend's compile on tanh takes ever more memory; --memory-limit is 6 GB, tanh's budget 1 GB.
    results, _ = run({}, ["tanh", "double"], backend="HOG", memory_kill_mb=6144, memory_budgets={key("tanh", "hog"): 1024})
    tanh = results["tanh"]
    assert (tanh.code, tanh.stage) == ("CRASH", "compile"), tanh
    assert "more memory than the 1 GB limit" in tanh.explanation, tanh
    assert tanh.extras["ended_by"] == "memory"
    assert results["double"].passed


def test_a_runaway_pinned_in_the_xfail_set_or_seen_by_the_last_report_gets_a_memory_budget(tmp_path):
    from conformance.run.session import Run

    (tmp_path / "hog.toml").write_text(
        '["tanh"]\nstage = "compile"\ncode = "CRASH"\n'
        'explanation = "the process was killed for using more memory than the 8 GB limit in stage compile"\n'
        '["double"]\nstage = "compile"\ncode = "CRASH"\nexplanation = "the process crashed in stage compile (killed by signal SIGSEGV (11))"\n'
    )
    settings = Settings(backends=[fake("HOG")], case_paths=[str(FIXTURES / "cases")], default_cases=False)
    run = Run(settings, [], str(tmp_path))
    pairs = [("tanh", "hog"), ("double", "hog"), ("add.broadcast", "hog")]
    run.plan_budgets(pairs, {}, ran_away={("add.broadcast", "hog")})
    assert settings.memory_budgets == {key("tanh", "hog"): RUNAWAY_MB, key("add.broadcast", "hog"): RUNAWAY_MB}
