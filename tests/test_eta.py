"""The nightly's ETA is planned from measured durations: heavy cases first do not make it say hours."""

from __future__ import annotations

import io
import json

import pytest

from conformance.nightly.eta import (
    CALIBRATE_AFTER, FAMILY_FACTORS, KIND_SECONDS, MEASURED_SECONDS, OVERHEAD, OVERHEAD_BOUNDS, PACE_BOUNDS, Eta, History, plan,
)  # fmt: skip
from conformance.nightly.progress import Progress
from conformance.report_dir import ResultsFile
from conformance.result import Result

KINDS = {"resnet": "model", "bert": "model", **{f"op{i}": "op" for i in range(100)}}


def test_a_pair_is_planned_as_measured_else_as_its_kind_on_its_backend_else_as_its_kind():
    history = History(seconds={("resnet", "tosa"): 40.0, ("op0", "tosa"): 0.4, ("op1", "tosa"): 0.2})
    planned = plan([("resnet", "tosa"), ("bert", "tosa"), ("op2", "tosa"), ("op2", "linalg"), ("pad", "onnx-tosa")],
                   KINDS, history, budgets={("pad", "onnx-tosa"): 30.0})  # fmt: skip
    assert planned == {
        ("resnet", "tosa"): 40.0,
        ("bert", "tosa"): 40.0,  # the models tosa ran last time
        ("op2", "tosa"): pytest.approx(0.3),  # the ops tosa ran last time
        ("op2", "linalg"): KIND_SECONDS["op"],  # nothing measured on linalg (a report measured something)
        ("pad", "onnx-tosa"): 30.0,  # a pinned hang waits its budget
    }


def test_with_no_report_a_pair_is_planned_as_a_fresh_clones_run_measured_its_kind_on_its_backend():
    planned = plan([("resnet", "tosa"), ("op2", "linalg"), ("op3", "my-backend")], KINDS, History())
    assert planned == {("resnet", "tosa"): MEASURED_SECONDS["model", "tosa"], ("op2", "linalg"): MEASURED_SECONDS["op", "linalg"],
                       ("op3", "my-backend"): KIND_SECONDS["op"]}
    assert History().overhead == OVERHEAD
    # ... times its family's factor from the same run: a random op costs more than a cast
    by_family = plan([("op2", "linalg"), ("op3", "linalg")], KINDS, History(), families={"op2": "random_ops", "op3": "casts"})
    assert by_family[("op2", "linalg")] == pytest.approx(MEASURED_SECONDS["op", "linalg"] * FAMILY_FACTORS["random_ops"])
    assert by_family[("op2", "linalg")] > MEASURED_SECONDS["op", "linalg"] > by_family[("op3", "linalg")]


def test_models_first_do_not_make_the_eta_say_hours():
    """Two 60 s models, then 100 ops of 0.2 s, on one lane: the rate after the first model says ~2 h; the plan ~1 min."""
    pairs = [("resnet", "tosa"), ("bert", "tosa"), *((f"op{i}", "tosa") for i in range(100))]
    history = History(seconds={**{p: 60.0 for p in pairs[:2]}, **{p: 0.2 for p in pairs[2:]}}, overhead=1.0)
    eta = Eta(plan(pairs, KINDS, history), history.overhead, lanes=1)
    assert eta.seconds_left(0.0) == pytest.approx(140.0)
    eta.finished(("resnet", "tosa"))
    assert eta.seconds_left(60.0) == pytest.approx(80.0)  # on plan: 60 s of bert and 20 s of ops left
    rate_based = (len(pairs) - 1) / (1 / 60.0)
    assert rate_based > 6000


def test_tonights_pace_corrects_the_plan_by_kind_once_a_tenth_of_it_is_done_within_bounds():
    """Models run first: how fast they went says nothing of the ops. Each kind's pace is its own."""
    pairs = {("resnet", "tosa"): 50.0, ("bert", "tosa"): 50.0, **{(f"op{i}", "tosa"): 1.0 for i in range(100)}}
    eta = Eta(pairs, overhead=1.0, lanes=2, kinds=KINDS)
    for i in range(5):
        eta.finished((f"op{i}", "tosa"), 4.0)
    assert eta.seconds_left(10.0) == pytest.approx(97.5)  # before a tenth of anything: the plan as it is
    for model in ("resnet", "bert"):
        eta.finished((model, "tosa"), 25.0)  # twice as fast as planned
    assert eta.pace("model") == 0.5 and eta.pace("op") == 1.0  # 5 of 100 planned op-seconds: not yet a tenth
    assert eta.seconds_left(35.0) == pytest.approx(47.5)  # 95 op-seconds at their plan, on 2 lanes: not halved
    for i in range(5, 15):
        eta.finished((f"op{i}", "tosa"), 2.0)
    assert eta.pace("op") == pytest.approx(40.0 / 15.0)  # 40 s measured for 15 planned
    assert eta.seconds_left(45.0) == pytest.approx(85 * 40.0 / 15.0 * 1.0 / 2)  # tonight's lanes: 2 x 45 s for 90 stage-s
    for i in range(15, 20):
        eta.finished((f"op{i}", "tosa"), 30.0)
    assert eta.pace("op") == PACE_BOUNDS[1]  # 190 s for 20 planned: 9.5, taken as at most 4 times
    assert eta.seconds_left(1e5) == pytest.approx(80 * PACE_BOUNDS[1] * OVERHEAD_BOUNDS[1] / 2)  # ... both within bounds
    assert CALIBRATE_AFTER == 0.1


def test_a_pair_killed_without_timings_says_nothing_of_tonights_pace():
    """A pinned hang killed for flooding its log, a crash: no stage finished, so no timings. Counted as 0 s
    against its plan (a pinned hang's budget), such pairs made the op pace 0.6 two minutes into a run whose
    ops then went at their plan, and its ETA 22 % short at 5 minutes."""
    pairs = {("softmax.0d", "tosa"): 30.0, **{(f"op{i}", "tosa"): 1.0 for i in range(100)}}
    eta = Eta(pairs, overhead=1.0, lanes=1, kinds=KINDS)
    progress = Progress(len(pairs), stream=io.StringIO(), interactive=False, eta=eta)
    progress.update(Result("softmax.0d", "tosa", "fail", stage="contract", code="TIMEOUT", extras={"ended_by": "flood"}))
    for i in range(10):
        progress.update(Result(f"op{i}", "tosa", "pass", timings={"compile": 1.0}))  # as planned
    assert eta.pace("op") == 1.0
    assert eta.seconds_left(10.0) == pytest.approx(90.0)


def test_the_history_is_read_from_a_report_directory(tmp_path):
    store = ResultsFile(tmp_path)
    store.append(Result("tanh", "tosa", "pass", timings={"export": 0.5, "compile": 1.5}))
    store.append(Result("pad", "onnx-tosa", "fail", stage="contract", code="TIMEOUT", timings={"export": 0.1}))
    # a hang the engine killed after its budget says so in its timers: it cost 30 s, not the timeout
    store.append(Result("pad.2d", "onnx-tosa", "fail", stage="contract", code="TIMEOUT", timings={"export": 0.1, "contract": 30.0}))
    # killed for flooding its log (a rewrite printing in circles): stopped early, not after the timeout
    store.append(Result("softmax.0d", "tosa", "fail", stage="contract", code="TIMEOUT", extras={"ended_by": "flood"}))
    # killed by the memory watchdog: the next night confirms it at less memory (execution/budgets.py)
    store.append(Result("copy_", "stablehlo", "fail", stage="lower", code="CRASH", extras={"ended_by": "memory"}))
    store.close()
    (tmp_path / "run.json").write_text(json.dumps({"settings": {"workers": 2}, "wall_seconds": 180.0, "finished": "x"}))
    history = History.of_report(tmp_path, timeout=300.0)
    assert history.seconds == pytest.approx(
        {("tanh", "tosa"): 2.0, ("pad", "onnx-tosa"): 300.1, ("pad.2d", "onnx-tosa"): 30.1, ("softmax.0d", "tosa"): 0.0,
         ("copy_", "stablehlo"): 0.0}
    )  # fmt: skip
    assert history.ran_away == {("copy_", "stablehlo")}
    assert history.timings[("tanh", "tosa")] == {"export": 0.5, "compile": 1.5}
    assert history.overhead == pytest.approx(360.0 / 332.2)  # 2 lanes x 180 s for 332.2 stage seconds
    assert History.of_report(None, 300.0).seconds == {}


def test_the_progress_line_shows_the_planned_eta_from_the_start():
    stream = io.StringIO()
    eta = Eta({("a", "tosa"): 100.0, ("b", "tosa"): 20.0}, overhead=1.0, lanes=1)
    progress = Progress(2, stream=stream, interactive=False, eta=eta)
    progress.announce("the report X")
    assert "planned 0:02:00 (durations from the report X)" in stream.getvalue()
    progress.update(Result("a", "tosa", "pass", timings={"compile": 100.0}))  # as planned
    left = stream.getvalue().splitlines()[-1].rsplit("ETA 0:", 1)[1]
    minutes, seconds = (int(part) for part in left.split(":"))
    assert 60 * minutes + seconds == 20  # the 20 s planned, at the pace measured: not the rate's (one pair a few ms)


def test_a_fresh_clones_tables_are_written_from_its_report(tmp_path):
    """What MEASURED_SECONDS, FAMILY_FACTORS, KIND_SECONDS and OVERHEAD are made from: a fresh clone's report."""
    from conformance.nightly.eta import fresh_clone_tables

    store = ResultsFile(tmp_path)
    for case, seconds in (("cast", 0.1), ("cast.i8", 0.1), ("randn", 0.4), ("randn.f16", 0.2)):
        store.append(Result(case, "tosa", "pass", timings={"compile": seconds}))
    store.append(Result("resnet", "tosa", "pass", timings={"export": 3.0, "compile": 5.0}))
    # a pinned hang is planned at its budget, whatever it cost: left out of the means
    store.append(Result("pad", "tosa", "fail", stage="contract", code="TIMEOUT", timings={"contract": 30.0}))
    store.close()
    cases = {"cast": "casts", "cast.i8": "casts", "randn": "random_ops", "randn.f16": "random_ops", "pad": "shape_ops"}
    (tmp_path / "cases.json").write_text(json.dumps({
        **{case: {"kind": "op", "family": family} for case, family in cases.items()}, "resnet": {"kind": "model", "family": "resnet"},
    }))  # fmt: skip
    (tmp_path / "run.json").write_text(json.dumps({"settings": {"workers": 2}, "wall_seconds": 23.0, "finished": "x"}))
    tables = fresh_clone_tables(tmp_path)
    assert tables["MEASURED_SECONDS"] == {("model", "tosa"): 8.0, ("op", "tosa"): 0.2}
    assert tables["FAMILY_FACTORS"] == {"casts": 0.5, "random_ops": 1.5}  # 0.2 s against 0.4 planned; 0.6 against 0.4
    assert tables["KIND_SECONDS"] == {"model": 8.0, "op": 0.2}
    assert tables["OVERHEAD"] == pytest.approx(46.0 / 38.8, abs=0.01)  # 2 lanes x 23 s for 38.8 stage seconds, hang included
