"""The verdict store (conformance/warm/): a nightly of unchanged cases answers every pair from it, without
importing torch or starting a child; a changed case file, another xfail set or another selection behaves as it must."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conformance.result import Result
from conformance.warm.store import storable
from tests.conftest import FIXTURES, PROJECT, fake

SCRIPT = {"FAKE_SCRIPT": json.dumps({"tanh": "raise", "double": "perturb"})}
# The command as a user runs it, in one process that says at its end whether torch was imported.
REPORTS_TORCH = "import sys; from conformance.cli.main import main; rc = main(sys.argv[1:]); print('torch imported:', 'torch' in sys.modules); sys.exit(rc)"


def nightly(tmp_path: Path, cases: Path, *args: str, script: dict = SCRIPT) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", REPORTS_TORCH, "nightly", "--no-default-cases", "--cases", str(cases),
               "--backend", f"eager,{fake('SCRIPTED')}", "--cache-dir", str(tmp_path / "cache"),
               "--output-dir", str(tmp_path / "out"), "-j", "1", *args]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=PROJECT, env={**os.environ, **script}, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    return proc


def latest_results(tmp_path: Path) -> dict:
    directory = sorted(p for p in (tmp_path / "out").iterdir() if p.is_dir())[-1]
    rows = [json.loads(line) for line in (directory / "results.jsonl").read_text().splitlines()]
    return {(r["case"], r["backend"]): (r["status"], r["stage"], r["code"], r["op"], r["verdict"]) for r in rows}


def run_json(tmp_path: Path) -> dict:
    directory = sorted(p for p in (tmp_path / "out").iterdir() if p.is_dir())[-1]
    return json.loads((directory / "run.json").read_text())


def copied_cases(tmp_path: Path) -> Path:
    cases = tmp_path / "cases"
    shutil.copytree(FIXTURES / "cases", cases, ignore=shutil.ignore_patterns("__pycache__"))
    return cases


def test_an_unchanged_run_is_answered_from_the_store_without_torch(tmp_path):
    cases = copied_cases(tmp_path)
    cold = nightly(tmp_path, cases, "--no-xfail")
    assert "torch imported: True" in cold.stdout
    first = latest_results(tmp_path)
    assert len(first) == 10 and first[("tanh", "scripted")][2] == "UNSUPPORTED_OP"

    warm = nightly(tmp_path, cases, "--no-xfail")
    assert "10 (case, backend) pairs answered from the verdict store" in warm.stderr, warm.stderr
    assert "torch imported: False" in warm.stdout
    assert latest_results(tmp_path) == first
    assert run_json(tmp_path)["settings"]["answered_from_verdict_store"] == 10
    directory = sorted(p for p in (tmp_path / "out").iterdir() if p.is_dir())[-1]
    rows = [json.loads(line) for line in (directory / "results.jsonl").read_text().splitlines()]
    assert all(row["extras"]["from_verdict_store"] for row in rows)  # the report can tell what ran from what did not
    assert warm.returncode == cold.returncode


def test_a_changed_case_file_runs_its_cases_again(tmp_path):
    cases = copied_cases(tmp_path)
    nightly(tmp_path, cases, "--no-xfail")
    source = cases / "small.py"
    source.write_text(source.read_text().replace('op("double", lambda x: x * 2, T(5)),',
                                                 'op("double", lambda x: x * 2, T(5)),\n    op("neg", torch.neg, T(2)),'))
    again = nightly(tmp_path, cases, "--no-xfail")
    assert "torch imported: True" in again.stdout
    results = latest_results(tmp_path)
    assert ("neg", "scripted") in results and len(results) == 12
    assert "12 (case, backend) pairs to run (0 already done)" in again.stderr  # every key names the changed tree


def test_a_backend_whose_environment_changed_runs_again(tmp_path):
    """The scripted fake declares FAKE_SCRIPT (Backend.environment): another script is another key."""
    cases = copied_cases(tmp_path)
    nightly(tmp_path, cases, "--no-xfail", "-k", "tanh")
    again = nightly(tmp_path, cases, "--no-xfail", "-k", "tanh", script={"FAKE_SCRIPT": "{}"})
    assert "1 (case, backend) pairs to run (0 already done, 1 answered from the verdict store)" in again.stderr, again.stderr
    assert latest_results(tmp_path)[("tanh", "scripted")][0] == "pass"


def test_the_xfail_sets_of_tonight_judge_a_stored_result(tmp_path):
    cases = copied_cases(tmp_path)
    nightly(tmp_path, cases, "--no-xfail")
    xfails = tmp_path / "xfail"
    xfails.mkdir()
    (xfails / "scripted.toml").write_text('["tanh"]\ncode = "UNSUPPORTED_OP"\nexplanation = "fake_op has no lowering"\n')
    judged = nightly(tmp_path, cases, "--xfail-dir", str(xfails))
    assert "torch imported: False" in judged.stdout
    results = latest_results(tmp_path)
    assert results[("tanh", "scripted")][4] == "XFAIL"
    assert results[("double", "scripted")][4] == "FAIL"


def test_another_selection_of_the_same_cases_runs_only_what_the_store_lacks(tmp_path):
    cases = copied_cases(tmp_path)
    nightly(tmp_path, cases, "--no-xfail", "-k", "tanh")
    wider = nightly(tmp_path, cases, "--no-xfail", "-k", "tanh or double")
    assert "2 (case, backend) pairs to run (0 already done, 2 answered from the verdict store)" in wider.stderr, wider.stderr
    assert len(latest_results(tmp_path)) == 4


def test_no_cache_runs_everything(tmp_path):
    cases = copied_cases(tmp_path)
    nightly(tmp_path, cases, "--no-xfail")
    again = nightly(tmp_path, cases, "--no-xfail", "--no-cache")
    assert "torch imported: True" in again.stdout
    assert "10 (case, backend) pairs to run (0 already done)" in again.stderr, again.stderr


def test_only_a_verdict_that_cannot_be_the_machines_doing_is_stored():
    def result(status, code=None, ended_by=None):
        extras = {} if ended_by is None else {"ended_by": ended_by}
        return Result(case="c", backend="b", status=status, code=code, stage=None if code is None else "run", extras=extras)

    assert storable(result("pass")) and storable(result("skip")) and storable(result("fail", "UNSUPPORTED_OP"))
    for code in ("UNKNOWN", "TOOL_MISSING"):
        assert not storable(result("fail", code))
    assert not storable(result("flaky", "NUMERIC_MISMATCH")) and not storable(result("compiled"))
    # A hang confirmed by its budget, the memory watchdog or a SIGKILL may be the machine's; a flood or a signal is not.
    assert not storable(result("fail", "TIMEOUT", "silence")) and storable(result("fail", "TIMEOUT", "flood"))
    assert not storable(result("fail", "CRASH", "memory")) and not storable(result("fail", "CRASH", "killed"))
    assert storable(result("fail", "CRASH", "died"))
    assert storable(result("fail", "CRASH", "tool died"))  # iree-compile's SIGFPE, read from its stack dump
    assert not storable(result("fail", "CRASH"))  # from before the ending was recorded


def test_the_engine_records_what_ended_a_child(tmp_path):
    """The store trusts extras["ended_by"]: a segfault says "died", a hang past its budget "silence"."""
    cases = copied_cases(tmp_path)
    command = [sys.executable, "-m", "conformance.cli.main", "nightly", "--no-default-cases", "--cases", str(cases),
               "--backend", f"{fake('SEGFAULT')},{fake('HANG')}", "-k", "tanh", "--case-timeout", "5", "--no-cache",
               "--no-xfail", "--reruns", "0", "--output-dir", str(tmp_path / "out"), "-j", "1"]
    subprocess.run(command, capture_output=True, text=True, cwd=PROJECT, timeout=600)
    directory = sorted(p for p in (tmp_path / "out").iterdir() if p.is_dir())[-1]
    rows = {r["backend"]: r for r in map(json.loads, (directory / "results.jsonl").read_text().splitlines())}
    assert (rows["segfault"]["code"], rows["segfault"]["extras"]["ended_by"]) == ("CRASH", "died")
    assert (rows["hang"]["code"], rows["hang"]["extras"]["ended_by"]) == ("TIMEOUT", "silence")
