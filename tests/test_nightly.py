"""`conformance nightly` as a user runs it: files, schema, resume after a kill, shards, regressions."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema

from conformance.report.summary import SCHEMA_PATH
from tests.conftest import FIXTURES, PROJECT, fake

FILES = {"results.jsonl", "summary.json", "report.md", "report.html", "run.json", "cases.json"}


def nightly_command(*args: str) -> list[str]:
    return [
        sys.executable, "-m", "conformance.cli.main", "nightly",
        "--no-default-cases", "--cases", str(FIXTURES / "cases"), "--no-cache", "--no-xfail", *args,
    ]


def nightly(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(nightly_command(*args), capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=600)


def report_dir(output: Path) -> Path:
    dirs = sorted(p for p in output.iterdir() if p.is_dir())
    return dirs[-1]


def results_of(directory: Path) -> dict:
    rows = [json.loads(line) for line in (directory / "results.jsonl").read_text().splitlines()]
    return {(r["case"], r["backend"]): r for r in rows}


def kill_when_it_has(command: list[str], output: Path, results: int) -> Path:
    """Start a nightly run, SIGKILL it (and its children) once it has written `results` results; its report directory."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline, found = time.time() + 120, []
    while time.time() < deadline:
        found = [p for p in output.glob("*/results.jsonl") if len(p.read_text().splitlines()) >= results]
        if found:
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert found, "the run produced no results to interrupt"
    return found[0].parent


def test_a_small_run_writes_every_file_and_a_valid_summary(tmp_path):
    proc = nightly("--backend", f"eager,{fake('SCRIPTED')}", "--output-dir", str(tmp_path), "-j", "2",
                   env={"FAKE_SCRIPT": json.dumps({"tanh": "raise", "double": "perturb"})})
    assert proc.returncode == 0, proc.stderr  # no baseline: nothing can regress
    directory = report_dir(tmp_path)
    assert FILES <= {p.name for p in directory.iterdir()}
    summary = json.loads((directory / "summary.json").read_text())
    jsonschema.validate(summary, json.loads(SCHEMA_PATH.read_text()))
    assert summary["matrix"] == {"cases": 5, "backends": ["eager", "scripted"], "results": 10}
    assert summary["backends"]["eager"]["by_status"] == {"pass": 5, "fail": 0, "skip": 0, "flaky": 0, "compiled": 0}
    assert summary["backends"]["scripted"]["by_code"] == {"NUMERIC_MISMATCH": 1, "UNSUPPORTED_OP": 1}
    assert summary["backends"]["scripted"]["pass_rate"] == 0.6
    groups = {(tuple(g["backends"]), g["code"], g["op"], g["kind"]) for g in summary["root_causes"]}
    assert (("scripted",), "UNSUPPORTED_OP", "aten.fake_op", None) in groups
    assert (("scripted",), "NUMERIC_MISMATCH", "aten.double", "wrong answer") in groups  # 1% off: far beyond rounding
    markdown = (directory / "report.md").read_text()
    row = next(line for line in markdown.splitlines() if line.startswith("| scripted "))
    # backend, total, pass, fail, skip, flaky, pass rate
    assert [cell.strip() for cell in row.split("|")[1:8]] == ["scripted", "5", "3", "2", "0", "0", "60.0%"]
    assert "<!DOCTYPE html>" in (directory / "report.html").read_text()[:200]
    assert "report:" in proc.stdout and "eager" in proc.stdout


def test_a_killed_run_keeps_its_results_and_resume_finishes_it(tmp_path):
    command = nightly_command("--backend", fake("SLOW"), "--output-dir", str(tmp_path), "-j", "1", "--batch-size", "1")
    results = kill_when_it_has(command, tmp_path, 2) / "results.jsonl"  # no chance to clean up: the worst case
    kept = results.read_text().splitlines()
    assert 2 <= len(kept) < 5
    resumed = nightly("--backend", fake("SLOW"), "--resume", str(results.parent), "-j", "1")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{5 - len(kept)} (case, backend) pairs to run ({len(kept)} already done)" in resumed.stderr
    lines = results.read_text().splitlines()
    assert lines[: len(kept)] == kept  # the finished results are untouched
    assert sorted(results_of(results.parent)) == sorted((c, "slow") for c in ["tanh", "add.broadcast", "double", "mul.dynamic", "sum.int"])
    assert len(lines) == 5


def test_resume_restores_the_runs_options_and_refuses_conflicting_ones_by_name(tmp_path):
    slow = fake("SLOW")
    started = nightly_command("--backend", slow, "-k", "not mul", "--seed", "3", "--output-dir", str(tmp_path), "-j", "1", "--batch-size", "1")
    directory = kill_when_it_has(started, tmp_path, 2)
    kept = len(results_of(directory))
    assert 2 <= kept < 4
    # Options that change results, given otherwise: refused by name, before anything is touched.
    before = (directory / "results.jsonl").read_text()
    refused = nightly("--resume", str(directory), "--backend", "eager", "-k", "tanh", "--seed", "0")
    assert refused.returncode == 2, refused.stderr
    assert (f"--resume {directory}: the run used --backend {slow}; you gave --backend eager; "
            "the run used -k 'not mul'; you gave -k tanh; the run used --seed 3; you gave --seed 0") in refused.stderr
    assert (directory / "results.jsonl").read_text() == before
    # Left out, they come back from run.json; -j may differ (it changes nothing in the results).
    resumed = nightly("--resume", str(directory), "-j", "2")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{4 - kept} (case, backend) pairs to run ({kept} already done) on 2 lanes" in resumed.stderr
    assert sorted(results_of(directory)) == sorted((c, "slow") for c in ["tanh", "add.broadcast", "double", "sum.int"])
    assert json.loads((directory / "run.json").read_text())["settings"]["seed"] == 3
    # Given the same, they are accepted.
    again = nightly("--resume", str(directory), "--backend", slow, "-k", "not mul", "--seed", "3")
    assert again.returncode == 0 and "0 (case, backend) pairs to run (4 already done)" in again.stderr, again.stderr


def test_the_docs_and_the_resume_help_list_exactly_the_options_resume_checks():
    """The options --resume must agree on are one list (nightly/options.py); the prose copies are made or checked from it."""
    from conformance.nightly.options import HOW_OPTIONS, RESULT_OPTIONS, RESUME, flags

    doc = " ".join((PROJECT / "docs" / "cluster.md").read_text().split())
    said = re.search(r"An option that changes results \((.*?), and the backends' own options\)(.*?) may differ", doc)
    assert said, "docs/cluster.md no longer lists the options --resume checks (the paragraph on --resume)"
    assert re.findall(r"`([^`]+)`", said.group(1)) == flags(RESULT_OPTIONS)
    assert re.findall(r"`([^`]+)`", said.group(2)) == flags(HOW_OPTIONS)
    assert set(flags(RESULT_OPTIONS + HOW_OPTIONS)) <= set(re.findall(r"(?<![\w-])-{1,2}[a-z][\w-]*", RESUME.help)), RESUME.help


def test_resuming_a_run_json_without_recorded_options_keeps_its_backends(tmp_path):
    """A run.json written before options were recorded still names its backends: a resume without
    --backend runs those, never every shipped backend."""
    first = nightly("--backend", "eager", "-k", "tanh or double", "--output-dir", str(tmp_path))
    assert first.returncode == 0, first.stderr
    directory = report_dir(tmp_path)
    run = json.loads((directory / "run.json").read_text())
    del run["run_options"]
    (directory / "run.json").write_text(json.dumps(run))
    lines = (directory / "results.jsonl").read_text().splitlines()
    (directory / "results.jsonl").write_text(lines[0] + "\n")  # one pair left to run
    resumed = nightly("--resume", str(directory), "-k", "tanh or double")
    assert resumed.returncode == 0, resumed.stderr
    assert "1 (case, backend) pairs to run (1 already done)" in resumed.stderr
    assert {backend for _, backend in results_of(directory)} == {"eager"}


def comparable(directory: Path) -> tuple:
    """What a sharded-and-merged run must share with the unsharded one (timings aside)."""
    results = {k: (r["status"], r["stage"], r["code"], r["op"], r["explanation"]) for k, r in results_of(directory).items()}
    summary = json.loads((directory / "summary.json").read_text())
    backends = {b: {k: v for k, v in s.items() if k != "stage_seconds"} for b, s in summary["backends"].items()}
    return results, backends, summary["root_causes"], summary["families"], summary["op_coverage"], summary["matrix"]


def test_shards_merged_equal_the_unsharded_run(tmp_path):
    env = {"FAKE_SCRIPT": json.dumps({"tanh": "raise", "sum.int": "shape"})}
    backends = f"eager,{fake('SCRIPTED')}"
    whole = nightly("--backend", backends, "--output-dir", str(tmp_path / "whole"), env=env)
    assert whole.returncode == 0, whole.stderr
    shard_dirs = []
    for shard in ("1/2", "2/2"):
        out = tmp_path / f"shard{shard[0]}"
        proc = nightly("--backend", backends, "--shard", shard, "--output-dir", str(out), env=env)
        assert proc.returncode == 0, proc.stderr
        shard_dirs.append(report_dir(out))
    sizes = [len(results_of(d)) for d in shard_dirs]
    assert sum(sizes) == 10 and all(sizes)  # both shards hold work, nothing twice
    merged = tmp_path / "merged"
    proc = subprocess.run([sys.executable, "-m", "conformance.cli.main", "merge", *map(str, shard_dirs), "-o", str(merged)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert comparable(merged) == comparable(report_dir(tmp_path / "whole"))
    assert json.loads((merged / "run.json").read_text())["shards"] == ["1/2", "2/2"]


def test_a_case_that_passed_in_the_baseline_and_fails_now_is_a_nonzero_exit(tmp_path):
    backend = fake("SCRIPTED")
    first = nightly("--backend", backend, "--output-dir", str(tmp_path))
    assert first.returncode == 0, first.stderr
    time.sleep(1.1)  # report directories are named by the second
    second = nightly("--backend", backend, "--output-dir", str(tmp_path), env={"FAKE_SCRIPT": json.dumps({"double": "perturb"})})
    assert second.returncode == 1, second.stderr
    assert "1 newly failing" in second.stdout
    summary = json.loads((report_dir(tmp_path) / "summary.json").read_text())
    assert [(c["case"], c["code"]) for c in summary["changes"]["newly_failing"]] == [("double", "NUMERIC_MISMATCH")]
    assert [h["pass_rate"]["scripted"] for h in summary["history"]] == [1.0, 0.8]


def test_a_backends_own_option_reaches_it_from_the_command_line(tmp_path):
    proc = nightly("--backend", fake("OPTIONED"), "--fake-flavours", "sour", "-k", "tanh", "--output-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert results_of(report_dir(tmp_path))[("tanh", "optioned")]["extras"]["flavours"] == ["sour"]
    refused = nightly("--backend", "eager", "--fake-flavours", "sour", "--output-dir", str(tmp_path / "other"))
    assert refused.returncode == 2 and "unrecognized arguments: --fake-flavours sour" in refused.stderr
    # A resumed run keeps it, and refuses another.
    directory = report_dir(tmp_path)
    other = nightly("--resume", str(directory), "--fake-flavours", "sweet")
    assert other.returncode == 2, other.stderr
    assert f"--resume {directory}: the run used --fake-flavours sour; you gave --fake-flavours sweet" in other.stderr
    assert json.loads((directory / "run.json").read_text())["settings"]["options"] == {"fake_flavours": ["sour"]}
