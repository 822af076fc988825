"""Xfail sets: verdicts, strictness, the update command, notes kept, stale and malformed entries.

The `scripted` fake backend fails exactly the cases named in $FAKE_SCRIPT,
so each test sets up the world it needs and runs pytest as a user would.
"""

import json

import pytest

from conformance.result import Result
from conformance.xfail.judge import verdict
from conformance.xfail.sets import Entry, XfailError, XfailSet
from conformance.xfail.update import update
from tests.conftest import fake

SCRIPTED = f"--backend={fake('SCRIPTED')}"


def script(**behaviour) -> dict:
    return {"FAKE_SCRIPT": json.dumps({k.replace("_", "."): v for k, v in behaviour.items()})}


@pytest.fixture
def xfail_dir(tmp_path):
    directory = tmp_path / "xfails"
    directory.mkdir()
    return directory


def test_update_then_rerun_is_green_and_the_set_pins_code_and_op(run_registry, xfail_dir):
    env = script(tanh="raise", double="perturb")
    first = run_registry(SCRIPTED, f"--xfail-dir={xfail_dir}", "--update-xfails", env=env)
    assert first.returncode == 1  # two unlisted failures
    assert "xfail sets updated:" in first.output and "scripted: 2 added" in first.output
    entries = XfailSet.load(xfail_dir, "scripted").entries
    assert sorted(entries) == ["double", "tanh"]
    assert (entries["tanh"].code, entries["tanh"].op, entries["tanh"].stage) == ("UNSUPPORTED_OP", "aten.fake_op", "lower")
    assert entries["double"].code == "NUMERIC_MISMATCH"
    second = run_registry(SCRIPTED, f"--xfail-dir={xfail_dir}", env=env)
    assert second.returncode == 0, second
    assert second.results["tanh[scripted]"]["verdict"] == "XFAIL"
    assert second.results["add.broadcast[scripted]"]["verdict"] == "PASS"


def test_a_passing_case_made_to_fail_turns_the_run_red(run_registry, xfail_dir):
    run = run_registry(SCRIPTED, f"--xfail-dir={xfail_dir}", env=script(add_broadcast="perturb"))
    assert run.returncode == 1
    assert run.results["add.broadcast[scripted]"]["verdict"] == "FAIL"
    assert "NUMERIC_MISMATCH" in run.output


def test_a_listed_case_that_passes_is_xpass_and_the_update_drops_it(run_registry, xfail_dir):
    XfailSet("scripted", xfail_dir / "scripted.toml", {"tanh": Entry("UNSUPPORTED_OP", "old", "lower", "aten.fake_op")}).save()
    run = run_registry(SCRIPTED, f"--xfail-dir={xfail_dir}", "--update-xfails")
    assert run.returncode == 1
    assert run.results["tanh[scripted]"]["verdict"] == "XPASS"
    assert "passed, but the xfail set expects UNSUPPORTED_OP" in run.output
    assert "removed: tanh" in run.output
    assert XfailSet.load(xfail_dir, "scripted").entries == {}


def test_an_entry_marked_flaky_lets_a_pass_through_and_the_update_keeps_it(run_registry, xfail_dir):
    """A pair that fails only sometimes (an uninitialised read): its entry, marked by hand, keeps both outcomes green."""
    flaky = Entry("NUMERIC_MISMATCH", "garbage where 0 is expected", "compare", "aten.double", note="nondeterministic", flaky=True)
    XfailSet("scripted", xfail_dir / "scripted.toml", {"double": flaky}).save()
    assert "flaky = true" in (xfail_dir / "scripted.toml").read_text()
    passed = run_registry(SCRIPTED, f"--xfail-dir={xfail_dir}", "--update-xfails", "-k", "double")
    assert passed.returncode == 0, passed
    assert passed.results["double[scripted]"]["verdict"] == "PASS"
    failed = run_registry(SCRIPTED, f"--xfail-dir={xfail_dir}", "--update-xfails", "-k", "double", env=script(double="perturb"))
    assert failed.returncode == 0, failed
    assert failed.results["double[scripted]"]["verdict"] == "XFAIL"
    assert XfailSet.load(xfail_dir, "scripted").entries["double"].flaky  # kept through a pass and a rewrite
    (xfail_dir / "scripted.toml").write_text('["double"]\ncode = "NUMERIC_MISMATCH"\nflaky = "yes"\n')
    with pytest.raises(XfailError, match=r"scripted.toml:1: entry 'double': flaky must be true or false"):
        XfailSet.load(xfail_dir, "scripted")


def test_a_different_failure_is_changed_and_the_update_keeps_the_note(run_registry, xfail_dir):
    XfailSet(
        "scripted",
        xfail_dir / "scripted.toml",
        {"tanh": Entry("UNSUPPORTED_OP", "was unsupported", "lower", "aten.fake_op", note="https://example.org/issue/7")},
    ).save()
    run = run_registry(SCRIPTED, f"--xfail-dir={xfail_dir}", "--update-xfails", env=script(tanh="perturb"))
    assert run.returncode == 1
    assert run.results["tanh[scripted]"]["verdict"] == "CHANGED"
    assert "the xfail set expected UNSUPPORTED_OP (aten.fake_op) at lower" in run.output
    entry = XfailSet.load(xfail_dir, "scripted").entries["tanh"]
    assert entry.code == "NUMERIC_MISMATCH" and entry.op == "aten.tanh"  # a compare-stage failure names its op
    assert entry.note == "https://example.org/issue/7"


def test_a_subset_run_keeps_the_other_entries_and_stale_ones_are_reported(run_registry, xfail_dir):
    XfailSet(
        "scripted",
        xfail_dir / "scripted.toml",
        {
            "double": Entry("NUMERIC_MISMATCH", "listed, not run in this subset"),
            "gone.case": Entry("UNSUPPORTED_OP", "its case was deleted", "lower", "aten.gone"),
        },
    ).save()
    run = run_registry(SCRIPTED, f"--xfail-dir={xfail_dir}", "--update-xfails", "-n", "2", "-k", "tanh", env=script(tanh="raise"))
    assert "scripted: 1 added, 0 changed, 0 removed, 1 stale" in run.output, run
    assert "stale (no such case in the registry): gone.case" in run.output
    assert sorted(XfailSet.load(xfail_dir, "scripted").entries) == ["double", "gone.case", "tanh"]


def test_a_malformed_xfail_file_names_file_line_and_problem(run_registry, xfail_dir):
    (xfail_dir / "scripted.toml").write_text('# header\n\n["tanh"]\ncode = "UNSUPPORTED_OP"\n\n["double"]\ncode = "NOT_A_CODE"\n')
    run = run_registry(SCRIPTED, f"--xfail-dir={xfail_dir}")
    assert run.returncode == 4
    assert f"{xfail_dir / 'scripted.toml'}:6: entry 'double': unknown code 'NOT_A_CODE'" in run.output
    (xfail_dir / "scripted.toml").write_text('["tanh"\ncode = 1\n')
    with pytest.raises(XfailError, match=r"scripted.toml: invalid TOML: .*line 1"):
        XfailSet.load(xfail_dir, "scripted")


def test_verdicts_match_on_code_and_op_not_the_wording():
    failed = Result("c", "b", "fail", stage="lower", code="UNSUPPORTED_OP", op="aten.cumsum", explanation="new words")
    assert verdict(failed, Entry("UNSUPPORTED_OP", "old words", "lower", "aten.cumsum")) == "XFAIL"
    assert verdict(failed, Entry("UNSUPPORTED_OP", "old words", "lower", "aten.cummax")) == "CHANGED"
    assert verdict(failed, Entry("NUMERIC_MISMATCH", "")) == "CHANGED"
    assert verdict(failed, None) == "FAIL"
    # An entry written before failures named their op (or by hand) holds when the run names one;
    # one without an op does not excuse another code.
    assert verdict(failed, Entry("UNSUPPORTED_OP", "pinned without an op", "lower")) == "XFAIL"
    unnamed = Result("c", "b", "fail", stage="lower", code="UNSUPPORTED_OP", explanation="no op named")
    assert verdict(unnamed, Entry("UNSUPPORTED_OP", "old words", "lower", "aten.cumsum")) == "CHANGED"
    assert verdict(Result("c", "b", "pass"), Entry("UNSUPPORTED_OP", "")) == "XPASS"
    assert verdict(Result("c", "b", "skip"), None) == "SKIP"


def test_the_file_is_sorted_and_round_trips(tmp_path):
    xfails = XfailSet("b", tmp_path / "b.toml", {"z.case": Entry("CRASH", "z"), "a.case": Entry("TIMEOUT", 'quote " and \\ backslash', note="n")})
    xfails.save()
    text = (tmp_path / "b.toml").read_text()
    assert text.index('["a.case"]') < text.index('["z.case"]')
    loaded = XfailSet.load(tmp_path, "b")
    assert loaded.entries == xfails.entries
    report = update(loaded, [Result("a.case", "b", "pass")], known_cases={"a.case"})
    assert report.removed == ["a.case"] and report.stale == ["z.case"]


def test_a_cpu_dependent_entry_fails_as_pinned_on_its_cpu_passes_on_another_and_survives_updates(tmp_path):
    """to.f32_to_u8 on linalg: 127 for 253 compiled for x86-64-v3, right for x86-64-v4. Neither run is red,
    and the evidence written by hand survives a rewrite from either."""
    from conformance.result import Result
    from conformance.taxonomy import Verdict
    from conformance.xfail.judge import verdict
    from conformance.xfail.update import update

    evidence = "x86-64-v4 (AVX-512) gives 253, x86-64-v3 127: fptosi to i8 of a u8 value is poison"
    entry = Entry("NUMERIC_MISMATCH", "expected 253, got 127", "compare", "aten.to.dtype", cpu_dependent=evidence)
    xfails = XfailSet("linalg", tmp_path / "linalg.toml", {"to.f32_to_u8": entry})
    xfails.save()
    assert f'cpu_dependent = "{evidence}"' in (tmp_path / "linalg.toml").read_text()
    loaded = XfailSet.load(tmp_path, "linalg")
    failing = Result("to.f32_to_u8", "linalg", "fail", stage="compare", code="NUMERIC_MISMATCH", op="aten.to.dtype", explanation="got 127")
    passing = Result("to.f32_to_u8", "linalg", "pass")
    assert verdict(failing, loaded.get("to.f32_to_u8")) == Verdict.XFAIL
    assert verdict(passing, loaded.get("to.f32_to_u8")) == Verdict.PASS  # not XPASS: another CPU's right answer
    assert verdict(passing, Entry("NUMERIC_MISMATCH")) == Verdict.XPASS  # a plain entry still goes stale
    for run in ([passing], [failing]):
        update(loaded, run, {"to.f32_to_u8"})
        assert loaded.get("to.f32_to_u8").cpu_dependent == evidence


def test_a_garbage_output_entry_takes_either_wrong_values_code_and_survives_updates(tmp_path):
    """grid_sampler_2d on onnx-linalg returns whatever memory held where eager has 0: some nights some of it
    is NaN (NAN_MISMATCH), other nights none is (NUMERIC_MISMATCH). One bug, so one entry holds for both;
    a failure of another kind is still CHANGED, and a plain entry still tells the two codes apart."""
    from conformance.taxonomy import Verdict

    evidence = "where eager has 0 it returns 1e26..1e36 or -42, different each run"
    xfails = XfailSet("onnx-linalg", tmp_path / "onnx-linalg.toml",
                      {"g": Entry("NUMERIC_MISMATCH", "got 1e36", "compare", garbage_output=evidence)})
    xfails.save()
    loaded = XfailSet.load(tmp_path, "onnx-linalg")
    nan = Result("g", "onnx-linalg", "fail", stage="compare", code="NAN_MISMATCH", explanation="NaN where eager has 0")
    numeric = Result("g", "onnx-linalg", "fail", stage="compare", code="NUMERIC_MISMATCH", explanation="got -42")
    crash = Result("g", "onnx-linalg", "fail", stage="run", code="CRASH", explanation="SIGSEGV")
    assert verdict(nan, loaded.get("g")) == verdict(numeric, loaded.get("g")) == Verdict.XFAIL
    assert verdict(crash, loaded.get("g")) == Verdict.CHANGED
    assert verdict(nan, Entry("NUMERIC_MISMATCH", "got 1e36", "compare")) == Verdict.CHANGED
    update(loaded, [nan], {"g"})
    assert loaded.get("g").code == "NAN_MISMATCH" and loaded.get("g").garbage_output == evidence
    update(loaded, [crash], {"g"})  # no longer a wrong answer: the evidence no longer applies
    assert loaded.get("g").garbage_output is None


def test_garbage_output_on_an_entry_that_is_no_wrong_answer_is_refused(tmp_path):
    (tmp_path / "b.toml").write_text('["c"]\ncode = "CRASH"\ngarbage_output = "it reads memory"\n')
    with pytest.raises(XfailError, match=r"b.toml:1: entry 'c': garbage_output is for a wrong answer \(NUMERIC_MISMATCH or NAN_MISMATCH\), not CRASH"):
        XfailSet.load(tmp_path, "b")


def test_many_stale_entries_are_counted_by_suite_after_the_first_ten():
    from conformance.xfail.update import stale_lines

    stale = [f"opinfo.add.{i}" for i in range(12)] + ["onnx-node.test_abs", "gone.case"]
    lines = stale_lines(stale)
    assert lines[:10] == [f"  stale (no such case in the registry): {case}" for case in stale[:10]]
    assert len(lines) == 11
    assert "4 more stale (opinfo.*: 2, onnx-node.*: 1, gone.*: 1)" in lines[10] and "--suite NAME" in lines[10]
    assert stale_lines(["gone.case"]) == ["  stale (no such case in the registry): gone.case"]
