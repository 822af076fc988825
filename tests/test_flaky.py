"""FLAKY: a failure is run again in a fresh process; runs that disagree make the pair FLAKY.

The fake backends keep their state in files (each attempt is a fresh child):
one fails every other run, one fails every time, one changes an output's last
bit every other run. Real nondeterminism (a thread race, uninitialised
memory) is shown by the racy-sum and uninit-relu backends in
tests/fake_backends.py; that demonstration is probabilistic, so it is not a test.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import jsonschema
import pytest
import torch

from conformance.execution import determinism
from conformance.execution.engine import Engine
from conformance.execution.reruns import REPLAYED, TRANSLATION
from conformance.settings import Settings
from conformance.nightly.progress import Progress
from conformance.report.build import build_reports
from conformance.report.html.data import read_page
from conformance.report.summary import SCHEMA_PATH
from conformance.result import Result
from conformance.taxonomy import Verdict
from conformance.xfail.judge import fails_strict_run, verdict
from conformance.xfail.sets import Entry, XfailSet
from conformance.xfail.update import update
from tests.conftest import FIXTURES, PROJECT, fake
from tests.test_report_build import night


@pytest.fixture
def state(tmp_path, monkeypatch):
    """The fake backends' run counters (the supervised children inherit the environment)."""
    directory = tmp_path / "state"
    directory.mkdir()
    monkeypatch.setenv("FAKE_FLAKY_STATE", str(directory))
    monkeypatch.setenv("FAKE_FLAKY_CASES", "tanh")
    return directory


def run(backend: str, pairs: list[tuple[str, str]], **settings) -> dict[str, Result]:
    settings = Settings(backends=[fake(backend)], case_paths=[str(FIXTURES / "cases")], default_cases=False, **settings)
    engine = Engine(settings)
    try:
        return {r.case: r for r in engine.run(pairs)}
    finally:
        engine.close()


def test_a_pair_failing_every_other_run_is_flaky_and_says_what_each_run_saw(state):
    results = run("ALTERNATING", [("tanh", "alternating"), ("double", "alternating")])
    tanh = results["tanh"]
    assert tanh.status == "flaky" and tanh.code is None, tanh
    assert [(a["status"], a.get("code"), a.get("stage")) for a in tanh.extras["attempts"]] == [
        ("fail", "NUMERIC_MISMATCH", "compare"),
        ("pass", None, None),
    ]
    assert "run 1 failed at compare with NUMERIC_MISMATCH" in tanh.explanation and "run 2 passed" in tanh.explanation
    assert (state / "alternating-tanh").read_text() == "2"  # run once, re-run once
    # A pass is not re-run without --check-determinism.
    assert results["double"].passed and "attempts" not in results["double"].extras


def test_without_reruns_the_same_backend_just_fails(state):
    tanh = run("ALTERNATING", [("tanh", "alternating")], reruns=0)["tanh"]
    assert (tanh.status, tanh.code) == ("fail", "NUMERIC_MISMATCH") and "attempts" not in tanh.extras


def test_a_pair_failing_the_same_way_every_run_stays_a_failure(monkeypatch):
    monkeypatch.setenv("FAKE_SCRIPT", json.dumps({"tanh": "perturb"}))
    tanh = run("SCRIPTED", [("tanh", "scripted")], reruns=2)["tanh"]
    assert (tanh.status, tanh.code, tanh.stage) == ("fail", "NUMERIC_MISMATCH", "compare"), tanh
    assert [a["code"] for a in tanh.extras["attempts"]] == ["NUMERIC_MISMATCH"] * 3
    assert verdict(tanh, Entry(code="NUMERIC_MISMATCH", op="aten.tanh")) == Verdict.XFAIL


def test_outputs_differing_in_their_bits_are_flaky_only_under_check_determinism(state):
    pairs = [("tanh", "jitter"), ("double", "jitter")]
    quiet = run("JITTER", pairs)
    assert quiet["tanh"].passed and "attempts" not in quiet["tanh"].extras  # within tolerance: a pass

    checked = run("JITTER", pairs, check_determinism=True)
    tanh = checked["tanh"]
    assert tanh.status == "flaky", tanh
    assert "output differs bit for bit from the first run's at index [0, 0]" in tanh.explanation, tanh.explanation
    assert "(1 of 12 elements differ)" in tanh.explanation
    assert [a["status"] for a in tanh.extras["attempts"]] == ["pass", "pass"]
    double = checked["double"]
    assert double.passed and [a["status"] for a in double.extras["attempts"]] == ["pass", "pass"]


def test_a_failure_inside_a_batch_is_rerun_alone_in_a_fresh_process(tmp_path, monkeypatch):
    log = tmp_path / "batches.log"
    monkeypatch.setenv("FAKE_BATCH_LOG", str(log))
    cases = ["add.broadcast", "double", "tanh", "sum.int"]
    results = run("BATCH_RAISE", [(c, "batch-raise") for c in cases], batch_size=4)
    assert results["tanh"].code == "COMPILER_ERROR" or results["tanh"].failed
    assert len(results["tanh"].extras["attempts"]) == 2
    compiles = [json.loads(line) for line in log.read_text().splitlines()]
    first_pids = {pid for pid, _ in compiles[:-1]}
    assert compiles[0][1] == cases  # the first run compiled them together
    assert compiles[-1][1] == ["tanh"] and compiles[-1][0] not in first_pids  # the re-run: alone, another process
    assert all(results[c].passed and "attempts" not in results[c].extras for c in cases if c != "tanh")


def test_a_timeout_is_not_rerun():
    hung = run("HANG", [("tanh", "hang")], case_timeout=3)["tanh"]
    assert hung.code == "TIMEOUT" and "attempts" not in hung.extras


def test_a_refusal_of_a_backend_without_a_compiler_is_not_rerun_but_its_wrong_answer_is(monkeypatch):
    """scripted names no cache stage: each stage before its run translates the case (as tosa-custom's convert
    does), so a failure a parser read there is the translation's, made alike in any process: it runs once."""
    monkeypatch.setenv("FAKE_SCRIPT", json.dumps({"double": "raise", "add.broadcast": "perturb"}))
    results = run("SCRIPTED", [("double", "scripted"), ("add.broadcast", "scripted")])
    refused = results["double"]
    assert (refused.stage, refused.code) == ("lower", "UNSUPPORTED_OP") and refused.extras.get(TRANSLATION), refused
    assert "attempts" not in refused.extras
    assert results["add.broadcast"].code == "NUMERIC_MISMATCH" and len(results["add.broadcast"].extras["attempts"]) == 2


def test_the_compile_cache_keeps_only_failures_a_rerun_reproduced(tmp_path, state, monkeypatch):
    """A failure after the frontend is stored once a re-run reproduced it; a refusal of the frontend (before the
    compiler: a translation keyed by the case and the frontend's versions alone) is stored at once and not re-run,
    so a frontend that flips from process to process goes unseen: re-runs are for the runtime and for crashes."""
    monkeypatch.setenv("FAKE_SCRIPT", json.dumps({"tanh": "raise-another-op-each-run", "double": "raise", "add.broadcast": "perturb"}))
    monkeypatch.setenv("FAKE_FLAKY_CASES", "tanh,double")
    pairs = [("tanh", "cached"), ("double", "cached"), ("add.broadcast", "cached")]
    cache = str(tmp_path / "cache")
    first = run("CACHED", pairs, cache_dir=cache)
    assert first["tanh"].failed and first["tanh"].op == "aten.fake_op" and "attempts" not in first["tanh"].extras
    assert first["double"].failed and "attempts" not in first["double"].extras
    assert first["add.broadcast"].code == "NUMERIC_MISMATCH" and len(first["add.broadcast"].extras["attempts"]) == 2

    again = run("CACHED", pairs, cache_dir=cache)
    # Stored at once: replayed, not lowered again.
    for case in ("tanh", "double"):
        assert again[case].extras.get(REPLAYED) and "attempts" not in again[case].extras
    assert (again["double"].code, again["double"].op) == ("UNSUPPORTED_OP", "aten.fake_op")
    assert (state / "cached-tanh").read_text() == "1"
    # A wrong answer is no failure the cache stores (the artifact is): it runs, and is re-run, again.
    assert not again["add.broadcast"].extras.get(REPLAYED) and len(again["add.broadcast"].extras["attempts"]) == 2


def test_a_refusal_of_the_compiler_is_stored_at_once_and_its_crash_is_rerun(tmp_path, state, monkeypatch):
    """The compiler's diagnostic of IR it compiled alone depends on the IR, the flags and its version: not re-run,
    stored at once; a crash of the same compiler may be the process's doing: re-run (here it refuses the second
    time, so the pair is FLAKY)."""
    monkeypatch.setenv("FAKE_SCRIPT", json.dumps({"tanh": "refuse", "double": "crash-then-refuse"}))
    monkeypatch.setenv("FAKE_FLAKY_CASES", "tanh,double")
    pairs = [("tanh", "cached"), ("double", "cached")]
    cache = str(tmp_path / "cache")
    first = run("CACHED", pairs, cache_dir=cache)
    refused = first["tanh"]
    assert (refused.stage, refused.code, refused.op) == ("compile", "COMPILER_ERROR", "fake.op"), refused
    assert refused.extras.get("refused_by_compiler") and "attempts" not in refused.extras
    crashed = first["double"]
    assert crashed.status == "flaky", crashed
    assert [(a["status"], a.get("code")) for a in crashed.extras["attempts"]] == [("fail", "CRASH"), ("fail", "COMPILER_ERROR")]

    again = run("CACHED", [("tanh", "cached")], cache_dir=cache)["tanh"]
    assert again.extras.get(REPLAYED) and (again.code, again.op) == ("COMPILER_ERROR", "fake.op"), again


# -- judged against xfail sets, in pytest and in updates --------------------------


def flaky_result(*codes: str | None) -> Result:
    attempts = [{"status": "fail", "stage": "compare", "code": c, "op": None, "explanation": "off"} if c else {"status": "pass"} for c in codes]
    return Result("tanh", "alternating", "flaky", explanation="the runs disagree", extras={"attempts": attempts})


def test_flaky_fails_a_strict_run_unless_its_entry_expects_a_failure_it_showed():
    result = flaky_result("NUMERIC_MISMATCH", None)
    assert verdict(result, None) == verdict(result, Entry(code="CRASH")) == Verdict.FLAKY
    assert fails_strict_run(result, Verdict.FLAKY, None)
    assert fails_strict_run(result, Verdict.FLAKY, Entry(code="CRASH"))
    assert not fails_strict_run(result, Verdict.FLAKY, Entry(code="NUMERIC_MISMATCH"))


def test_an_update_never_writes_a_flaky_pair_and_keeps_its_entry_as_it_was(tmp_path):
    xfails = XfailSet.load(tmp_path, "alternating")
    kept = Entry(code="CRASH", explanation="crashed once", stage="run", note="races in the runtime, see #12")
    xfails.entries["kept"] = kept
    results = [flaky_result("NUMERIC_MISMATCH", None), Result("kept", "alternating", "flaky", extras={"attempts": []})]
    report = update(xfails, results, known_cases={"tanh", "kept"})
    assert "tanh" not in xfails.entries and xfails.entries["kept"] == kept
    assert report.flaky == ["kept", "tanh"] and not report.added and not report.removed and not report.changed
    assert "2 flaky (left as they were)" in report.lines()[0]


def test_pytest_fails_on_a_flaky_pair_and_an_entry_for_one_of_its_failures_turns_it_green(run_registry, state, tmp_path):
    xfails = tmp_path / "xfails"
    xfails.mkdir()
    args = (f"--backend={fake('ALTERNATING')}", f"--xfail-dir={xfails}", "-k", "tanh or double", "--update-xfails")
    env = {"FAKE_FLAKY_STATE": str(state), "FAKE_FLAKY_CASES": "tanh"}
    red = run_registry(*args, env=env)
    assert red.returncode == 1, red
    assert red.results["tanh[alternating]"]["status"] == "flaky" and red.results["tanh[alternating]"]["verdict"] == "FLAKY"
    assert "tanh[alternating] - FLAKY: " in red.output and "run 1 failed at compare with NUMERIC_MISMATCH" in red.output
    assert "flaky pairs (1)" in red.output and "tanh[alternating] (fails the run)" in red.output
    assert "flaky, left as it was (its runs disagree): tanh" in red.output
    assert "tanh" not in XfailSet.load(xfails, "alternating").entries  # the update wrote nothing for it

    entry = '["tanh"]\ncode = "NUMERIC_MISMATCH"\nop = "aten.tanh"\nexplanation = "sometimes off by 1%"\nnote = "known race"\n'
    (xfails / "alternating.toml").write_text(entry)
    green = run_registry(*args, env=env)
    assert green.returncode == 0, green
    assert "tanh[alternating] (xfail entry expects a failure seen)" in green.output
    kept = XfailSet.load(xfails, "alternating").entries
    assert kept == {"tanh": Entry(code="NUMERIC_MISMATCH", explanation="sometimes off by 1%", op="aten.tanh", note="known race")}  # as it was


# -- reported apart: progress, summary.json, report.md, report.html, triage --------


def test_the_nightly_progress_line_counts_flaky_pairs_apart():
    stream = io.StringIO()
    progress = Progress(2, stream=stream, interactive=False)
    progress.update(Result("a", "b", "flaky", verdict="FLAKY"))
    progress.update(Result("c", "b", "fail", verdict="FAIL"))
    assert "  fail 1 flaky 1  " in stream.getvalue().splitlines()[-1]


def test_reports_give_flaky_pairs_their_own_count_and_section(tmp_path):
    flaky = Result("math.add", "tosa", "flaky", explanation="the runs disagree: run 1 failed; run 2 passed",
                   extras={"attempts": [{"status": "fail", "stage": "run", "code": "RUNTIME_ERROR", "op": None, "explanation": "x"},
                                        {"status": "pass"}]})
    directory = night(tmp_path, "2026-10-01", [flaky, Result("math.softmax", "tosa", "pass"), Result("math.add", "eager", "pass")])
    summary = build_reports(directory, None)
    jsonschema.validate(summary, json.loads(SCHEMA_PATH.read_text()))
    tosa = summary["backends"]["tosa"]
    assert tosa["by_status"]["flaky"] == 1 and tosa["by_code"] == {} and tosa["pass_rate"] == 0.5
    assert summary["flaky"] == [{"case": "math.add", "backend": "tosa", "verdict": None, "explanation": flaky.explanation,
                                 "attempts": flaky.extras["attempts"]}]
    assert summary["root_causes"] == []
    markdown = (directory / "report.md").read_text()
    assert "## Flaky pairs (1)" in markdown and re.search(r"\| math\.add +\| tosa +\| RUNTIME_ERROR / pass +\|", markdown)
    page = (directory / "report.html").read_text()
    assert 'id="flaky"' in page and 'id="flaky-table"' in page and "RUNTIME_ERROR / pass" in page
    assert read_page(page)[1][("math.add", "tosa")]["look"] == ("y", "FLK")  # its matrix cell

    triage = subprocess.run([sys.executable, "-m", "conformance.cli.main", "triage", str(directory)],
                            capture_output=True, text=True, cwd=PROJECT)
    assert triage.returncode == 0, triage.stderr
    assert "flaky: 1 pairs whose runs disagree" in triage.stdout and "RUNTIME_ERROR / pass" in triage.stdout
    assert "no failures" not in triage.stdout


# -- bit-for-bit comparison ------------------------------------------------------------


def test_bits_decide_not_values():
    nan = torch.tensor([float("nan"), 1.0])
    assert determinism.first_difference([nan], [nan.clone()]) is None  # NaN == NaN when the bits are the same
    said = determinism.first_difference((torch.zeros(2, 2), torch.tensor([0.0, 1.0])), (torch.zeros(2, 2), torch.tensor([-0.0, 1.0])))
    assert said.startswith("output[1] differs bit for bit from the first run's at index [0]: 0.0 then -0.0"), said
    assert "is torch.float32[2] in the first run and torch.float64[2]" in determinism.first_difference(
        torch.zeros(2), torch.zeros(2, dtype=torch.float64)
    )
