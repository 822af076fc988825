"""Gates: golden compile figures and run times per backend, judged against a run's (docs/gates.md).

The file format and its errors, the judging and the update are tested on
plain objects; pytest --gates, `conformance gates update` and the nightly's
report sections with the `figured` fake backend, which records the compile
figures $FAKE_FIGURES tells it to; one test compiles a real case with IREE.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conformance.gates import judge
from conformance.gates.figures import FIGURES, Tolerance
from conformance.gates.sets import GateEntry, GatesError, GateSet
from conformance.gates.update import update
from conformance.report.summary import SCHEMA_PATH
from conformance.result import Result
from tests.conftest import FIXTURES, fake

FIGURED = f"--backend={fake('FIGURED')}"
CASES = f"--cases={FIXTURES / 'gates'}"


def passed(case: str, backend: str = "figured", **figures) -> Result:
    stats = {"dispatches": 3, "vmfb_bytes": 1000, "seconds": 0.5, "module_cases": 1}
    stats.update({k: v for k, v in figures.items() if k != "run"})
    extras = {"compile_stats": stats}
    if "run" in figures:
        extras["run_stats"] = {"median_seconds": figures["run"], "repeats": 9}
    return Result(case=case, backend=backend, status="pass", extras=extras)


def gate_set(tmp_path: Path, **entries) -> GateSet:
    return GateSet("figured", tmp_path / "figured.toml", entries={case: GateEntry(figures) for case, figures in entries.items()})


# -- the file ----------------------------------------------------------------


def test_the_file_round_trips_sorted_with_every_tolerance_written_and_human_fields_kept(tmp_path):
    gates = gate_set(tmp_path, zeta={"dispatches": 4}, alpha={"dispatches": 7, "run_seconds": 0.25})
    gates.entries["alpha"].note = "a known slow lowering"
    gates.entries["alpha"].tolerance = {"run_seconds": Tolerance(relative=2.0)}
    gates.tolerance = {"vmfb_bytes": Tolerance(relative=0.1, absolute=10)}
    gates.save()
    text = gates.path.read_text()
    assert text.index("[cases.alpha]") < text.index("[cases.zeta]")
    for name in FIGURES:  # a reviewer reads every tolerance in the file itself
        assert f"\n{name} = {{ relative = " in text
    again = GateSet.load(tmp_path, "figured")
    assert again.entries["alpha"].figures == {"dispatches": 7, "run_seconds": 0.25}
    assert again.entries["alpha"].note == "a known slow lowering"
    assert again.tolerance_of("alpha", "run_seconds") == Tolerance(relative=2.0)  # the case's own
    assert again.tolerance_of("zeta", "vmfb_bytes") == Tolerance(relative=0.1, absolute=10)  # the file's
    assert again.tolerance_of("zeta", "run_seconds") == FIGURES["run_seconds"].default  # written from the default


def test_no_file_is_an_empty_set(tmp_path):
    assert GateSet.load(tmp_path, "figured").entries == {}


@pytest.mark.parametrize(
    "body, named",
    [
        ("[cases.mlp\ndispatches = 3\n", ["invalid TOML", "line 1"]),
        ("\n\n[cases.mlp]\ndispatches = 3\nspeed = 4\n", [":3:", "'mlp'", "unknown key 'speed'", "dispatches, vmfb_bytes"]),
        ('\n[cases."bert.tiny"]\ndispatches = "many"\n', [":2:", "'bert.tiny'", "dispatches must be a number"]),
        ("[cases.mlp]\ndispatches = 2.5\n", [":1:", "dispatches must be a whole number"]),
        ("[cases.mlp]\nrun_seconds = -1.0\n", [":1:", "run_seconds must be a number at least 0"]),
        ("\n[tolerance]\nrun_seconds = { relative = -1 }\n", [":2:", "[tolerance]", "run_seconds.relative must be a number at least 0"]),
        ("[tolerance]\nrun_seconds = { factor = 2 }\n", [":1:", "run_seconds must be { relative = R, absolute = A }"]),
        ("[tolerance]\nspeed = { relative = 1 }\n", ["unknown figure 'speed'"]),
        ("[cases.mlp]\ndispatches = 3\ntolerance = { dispatches = 1 }\n", [":1:", "case 'mlp': tolerance", "dispatches must be { relative"]),
        ("[mlp]\ndispatches = 3\n", ["unknown top-level key(s) ['mlp']", "[cases.<id>]"]),
    ],
)
def test_a_malformed_file_names_the_file_the_line_and_the_key(tmp_path, body, named):
    path = tmp_path / "figured.toml"
    path.write_text(body)
    with pytest.raises(GatesError) as caught:
        GateSet.load(tmp_path, "figured")
    message = str(caught.value)
    assert message.startswith(str(path)), message
    for words in named:
        assert words in message, message


def test_a_malformed_file_stops_a_pytest_run_before_anything_runs(run_registry, tmp_path):
    gates_dir = tmp_path / "gates"
    gates_dir.mkdir()
    (gates_dir / "figured.toml").write_text("[cases.double]\ndispatches = 'x'\n")
    run = run_registry(FIGURED, "--gates", f"--gates-dir={gates_dir}", "--no-xfail")
    assert run.returncode == 4, run  # pytest's usage error
    assert f"{gates_dir / 'figured.toml'}:1: case 'double': dispatches must be a number" in run.output
    assert not run.results


# -- judging -----------------------------------------------------------------


def test_a_figure_is_within_up_to_the_larger_of_relative_and_absolute_and_beyond_past_it(tmp_path):
    gates = gate_set(tmp_path, m={"dispatches": 10, "vmfb_bytes": 100_000, "run_seconds": 0.001})
    gates.tolerance = {"vmfb_bytes": Tolerance(relative=0.02, absolute=100), "run_seconds": Tolerance(relative=0.5, absolute=0.002)}
    within = judge.judge(passed("m", dispatches=10, vmfb_bytes=101_999, run=0.0029), gates)
    assert within["status"] == judge.WITHIN and {f["state"] for f in within["figures"]} == {judge.WITHIN}
    # 2% of 100,000 is 2,000 bytes; the run time's floor (2 ms) is larger than 50% of 1 ms
    beyond = judge.judge(passed("m", dispatches=11, vmfb_bytes=102_001, run=0.0031), gates)
    assert beyond["status"] == judge.BEYOND
    assert {f["figure"]: f["state"] for f in beyond["figures"]} == {"dispatches": "beyond", "vmfb_bytes": "beyond", "run_seconds": "beyond"}


def test_better_than_golden_beyond_tolerance_is_below_a_stale_golden_not_a_regression(tmp_path):
    gates = gate_set(tmp_path, m={"dispatches": 10})
    found = judge.judge(passed("m", dispatches=8), gates)
    assert found["status"] == judge.BELOW
    result = passed("m", dispatches=8)
    judge.attach(result, gates)
    assert judge.beyond(result) == []


def test_figures_not_measured_are_listed_never_judged_and_failures_are_not_judged(tmp_path):
    gates = gate_set(tmp_path, m={"dispatches": 3, "vmfb_bytes": 1000, "compile_seconds": 0.5, "run_seconds": 0.01})
    batched = judge.judge(passed("m", module_cases=16, vmfb_bytes=99_999, seconds=9.0), gates)  # a batch's module: not the case's
    assert batched["status"] == judge.WITHIN
    assert sorted(batched["unmeasured"]) == ["compile_seconds", "run_seconds", "vmfb_bytes"]
    failing = Result(case="m", backend="figured", status="fail", code="NUMERIC_MISMATCH", extras=passed("m", dispatches=99).extras)
    assert judge.judge(failing, gates) is None
    assert judge.judge(passed("not-gated", dispatches=99), gates) is None


def test_the_message_names_figure_golden_measured_and_tolerance(tmp_path):
    gates = gate_set(tmp_path, m={"run_seconds": 0.1})
    gates.tolerance = {"run_seconds": Tolerance(relative=0.5, absolute=0.002)}
    result = passed("m", run=0.4)
    judge.attach(result, gates)
    assert judge.message(result) == (
        "GATE beyond tolerance (1 figure, figured.toml): run_seconds 0.4 s, golden 0.1 s, tolerance 50% or 0.002 s (allowed up to 0.15 s)"
    )


# -- update ------------------------------------------------------------------


def test_update_writes_chosen_cases_keeps_human_fields_and_what_it_did_not_measure(tmp_path):
    gates = gate_set(tmp_path, kept={"dispatches": 5, "run_seconds": 0.3}, old={"dispatches": 1})
    gates.entries["kept"].note = "mine"
    gates.entries["kept"].tolerance = {"dispatches": Tolerance(absolute=1)}
    run = [
        passed("kept", dispatches=6, seconds=1.5),  # no run_stats: a run without --gates
        passed("model", dispatches=40, run=0.02),  # chosen
        passed("op", dispatches=2, run=0.001),  # not chosen, not in the file
        Result(case="old", backend="figured", status="fail", code="RUNTIME_ERROR"),
        passed("model", backend="other", dispatches=99),
    ]
    report = update(gates, run, chosen={"model"}.__contains__, known_cases={"kept", "model", "op"})
    assert (report.added, report.updated, report.kept, report.stale) == (["model"], ["kept"], ["old"], ["old"])
    assert gates.entries["kept"].figures == {"dispatches": 6, "vmfb_bytes": 1000, "compile_seconds": 1.5, "run_seconds": 0.3}
    assert (gates.entries["kept"].note, gates.entries["kept"].tolerance) == ("mine", {"dispatches": Tolerance(absolute=1)})
    assert gates.entries["model"].figures["run_seconds"] == 0.02
    assert gates.entries["old"].figures == {"dispatches": 1}
    assert "op" not in gates.entries
    update(gates, [], chosen=lambda case: False, known_cases={"kept", "model"}, drop_stale=True)
    assert "old" not in gates.entries


# -- as users run it: pytest --gates, gates update, the nightly's reports ----------------


def conformance(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "conformance.cli.main", *args]
    return subprocess.run(command, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=600)


def loosen_run_times(gates_dir: Path, backend: str) -> None:
    """A 40 ms floor on run times: these tests are about the framework, and the machine running them may be
    loaded enough (other jobs on its cores) for eager's microseconds to take milliseconds."""
    gates = GateSet.load(gates_dir, backend)
    gates.tolerance["run_seconds"] = Tolerance(relative=0.5, absolute=0.04)
    gates.save()


def figures(per_case: dict) -> dict:
    """The environment telling the `figured` backend what to record, per case id."""
    return {"FAKE_FIGURES": json.dumps(per_case)}


def test_pytest_gates_fails_a_passing_case_beyond_tolerance_naming_the_figure(run_registry, tmp_path):
    gates_dir, report = tmp_path / "gates", tmp_path / "report"
    gates_dir.mkdir()
    first = run_registry(FIGURED, "--gates", f"--gates-dir={gates_dir}", f"--report-dir={report}", "--no-xfail", cases="gates")
    assert first.returncode == 0, first  # no golden figures yet: nothing to judge
    assert first.results["tanh.gated[figured]"]["extras"]["run_stats"]["repeats"] == 9
    assert "run_stats" not in first.results["double[figured]"]["extras"]  # not gated: its run is not timed

    written = conformance("gates", "update", f"--results={report}", f"--gates-dir={gates_dir}", "--no-default-cases", CASES)
    assert written.returncode == 0, written.stderr
    assert "figured: 2 added" in written.stdout
    assert sorted(GateSet.load(gates_dir, "figured").entries) == ["tanh.gated", "tiny_mlp"]  # the tagged op and the model
    loosen_run_times(gates_dir, "figured")

    same = run_registry(FIGURED, "--gates", f"--gates-dir={gates_dir}", "--no-xfail", cases="gates")
    assert same.returncode == 0, same
    assert same.results["tiny_mlp[figured]"]["extras"]["gates"]["status"] == "within"

    worse = run_registry(FIGURED, "--gates", f"--gates-dir={gates_dir}", "--no-xfail", cases="gates", env=figures({"tiny_mlp": {"dispatches": 4}}))
    assert worse.returncode == 1, worse
    assert worse.results["tiny_mlp[figured]"]["verdict"] == "PASS"  # correct, and slower: not a failure of correctness
    assert "FAILED tiny_mlp[figured] - GATE beyond tolerance" in worse.output  # the short summary
    assert "GATE beyond tolerance (1 figure, figured.toml): dispatches 4, golden 3, tolerance exact (allowed up to 3)\n" in worse.output
    assert worse.results["tanh.gated[figured]"]["extras"]["gates"]["status"] == "within"

    without = run_registry(FIGURED, f"--gates-dir={gates_dir}", "--no-xfail", cases="gates", env=figures({"tiny_mlp": {"dispatches": 4}}))
    assert without.returncode == 0, without  # gates only when asked for
    assert "gates" not in without.results["tiny_mlp[figured]"]["extras"]


def test_the_nightly_reports_a_gate_regression_in_its_own_sections(tmp_path):
    gates_dir, output = tmp_path / "gates", tmp_path / "reports"
    gates_dir.mkdir()
    base = ["nightly", FIGURED, "--no-default-cases", CASES, "--no-cache", "--no-xfail", "--gates", f"--gates-dir={gates_dir}",
            f"--output-dir={output}", "-j", "1"]
    first = conformance(*base)
    assert first.returncode == 0, first.stderr
    [baseline] = list(output.iterdir())
    assert conformance("gates", "update", f"--results={baseline}", f"--gates-dir={gates_dir}", "--no-default-cases", CASES).returncode == 0
    loosen_run_times(gates_dir, "figured")

    slower = conformance(*base, env=figures({"tiny_mlp": {"vmfb_bytes": 5000}, "tanh.gated": {"run_sleep": 0.2}}))
    assert slower.returncode == 1, slower.stderr  # a gate regression fails the night
    assert "gates: 2 pairs judged, 2 beyond tolerance" in slower.stdout
    directory = max(output.iterdir())
    summary = json.loads((directory / "summary.json").read_text())
    jsonschema.validate(summary, json.loads(SCHEMA_PATH.read_text()))
    assert summary["backends"]["figured"]["by_status"]["pass"] == 3  # verdicts untouched
    beyond = {p["case"]: [f["figure"] for f in p["figures"]] for p in summary["gates"]["beyond"]}
    assert beyond == {"tiny_mlp": ["vmfb_bytes"], "tanh.gated": ["run_seconds"]}
    newly = {p["case"] for p in summary["changes"]["newly_beyond_gates"]}
    assert newly == {"tiny_mlp", "tanh.gated"}
    markdown = (directory / "report.md").read_text()
    assert "## Gates (golden figures)" in markdown and "### Newly beyond gate tolerance (still passing)" in markdown
    rows = [line.split("|")[1:-1] for line in markdown.splitlines() if line.startswith("| tiny_mlp ")]
    assert [[cell.strip() for cell in row][:5] for row in rows] == [["tiny_mlp", "figured", "vmfb_bytes", "1000", "5000"]] * 2
    html = (directory / "report.html").read_text()
    assert 'id="gates"' in html and 'id="gates-beyond"' in html and 'id="newly-beyond-gates"' in html


# -- a real case compiled by IREE ------------------------------------------------------


def test_iree_records_the_figures_of_a_real_model_and_gates_them(run_registry, tmp_path):
    gates_dir, report, cache = tmp_path / "gates", tmp_path / "report", tmp_path / "cache"
    gates_dir.mkdir()
    common = ("--backend=linalg", "--case=tiny_mlp", "--gates", f"--gates-dir={gates_dir}", f"--cache-dir={cache}", "--no-xfail")
    first = run_registry(*common, f"--report-dir={report}", cases="gates")
    assert first.returncode == 0, first
    extras = first.results["tiny_mlp[linalg]"]["extras"]
    assert extras["compile_stats"]["module_cases"] == 1 and extras["compile_stats"]["dispatches"] >= 1
    assert extras["run_stats"]["repeats"] == 9 and 0 < extras["run_stats"]["median_seconds"] <= extras["run_stats"]["max_seconds"]

    assert conformance("gates", "update", f"--results={report}", f"--gates-dir={gates_dir}", "--no-default-cases", CASES).returncode == 0
    gates = GateSet.load(gates_dir, "linalg")
    dispatches = extras["compile_stats"]["dispatches"]
    assert gates.entries["tiny_mlp"].figures["dispatches"] == dispatches and gates.entries["tiny_mlp"].figures["vmfb_bytes"] > 0
    assert set(gates.entries["tiny_mlp"].figures) == set(FIGURES)
    assert conformance("gates", "check", f"--gates-dir={gates_dir}", "--no-default-cases", CASES).returncode == 0

    gates.entries["tiny_mlp"].figures["dispatches"] = dispatches - 1  # as if a change had added a dispatch since
    gates.tolerance["run_seconds"] = Tolerance(relative=0.5, absolute=0.04)  # see loosen_run_times
    gates.save()
    again = run_registry(*common, cases="gates")  # compiled from the cache: its figures as measured when compiled
    assert again.returncode == 1, again
    assert f"GATE beyond tolerance (1 figure, linalg.toml): dispatches {dispatches}, golden {dispatches - 1}, tolerance exact" in again.output
