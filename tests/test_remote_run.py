"""Compile here, run there (docs/remote-run.md): COMPILED pairs' bundles run by iree-run-module alone, judged back here.

The round trip a user makes, with CPU targets standing in for the remote
device: a run with --compile-only and --artifacts, the directory's
run-compiled.sh under a PATH holding only iree-run-module and coreutils (no
Python), `conformance verdicts-from`, `conformance merge`; the merged
verdicts must be those of a normal run of the same pairs. Real IREE for a
pass, a numeric mismatch and a runtime error; a tiny fake backend and
runtime for a crash at run time, which no shipped case has.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.report_dir import RUN, has_results, latest, read_json, read_results
from conformance.result import Result
from conformance.taxonomy import Stage, Status
from tests.conftest import FIXTURES, PROJECT, fake

# The native runtime the iree-base-runtime wheel ships (bin/iree-run-module is a Python wrapper around it).
IREE_RUN_MODULE = Path(__import__("iree._runtime_libs", fromlist=["_"]).__path__[0]) / "iree-run-module"
# tanh passes; gelu.tanh is a numeric mismatch on linalg@vmvx; atan.dynamic fails at run on tosa (IREE's runtime);
# tanh.bf16's output comes back as bytes (iree-run-module writes no bfloat16 .npy); sum.int.bool returns a
# signless i64 that eager's .npy calls si64, and add_ leads its outputs with its first input's new value.
CASES = ("tanh", "gelu.tanh", "atan.dynamic", "tanh.bf16", "sum.int.bool", "add_")
BACKENDS = "tosa,linalg@vmvx"
SAME = ("status", "stage", "code", "op", "verdict", "explanation")


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=600, cwd=PROJECT, env={**os.environ, **(env or {})})


def conformance(*args: str) -> subprocess.CompletedProcess:
    return run(sys.executable, "-m", "conformance.cli.main", *args)


def pytest_run(report: Path, *more: str) -> Path:
    """The registry's CASES on BACKENDS through pytest, its report written to `report`."""
    cases = [f"--case={case}" for case in CASES]
    proc = run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--backend={BACKENDS}", *cases,
               "--no-cache", "--reruns=0", f"--report-dir={report}", *more)
    assert has_results(report), proc.stdout[-3000:] + proc.stderr[-3000:]
    return report


def only_the_runtime(tmp_path: Path) -> str:
    """A PATH with iree-run-module and the coreutils the scripts call, nothing else (no Python)."""
    tools = tmp_path / "only-the-runtime"
    tools.mkdir()
    (tools / "iree-run-module").symlink_to(IREE_RUN_MODULE)
    for tool in ("mkdir", "rm", "timeout", "dirname"):
        (tools / tool).symlink_to(shutil.which(tool))
    return str(tools)


def elsewhere(artifacts: Path, path: str, **env: str) -> subprocess.CompletedProcess:
    """artifacts/run-compiled.sh as the other machine runs it: /bin/sh, `path` its only PATH."""
    return subprocess.run(["/bin/sh", str(artifacts / "run-compiled.sh")], capture_output=True, text=True, timeout=600,
                          env={"PATH": path, **env})


def results(report: Path) -> dict[tuple[str, str], Result]:
    return {r.key: r for r in latest(read_results(report))}


def test_compiled_pairs_run_elsewhere_get_the_verdicts_of_a_local_run(tmp_path):
    artifacts = tmp_path / "bundles"
    compiled = pytest_run(tmp_path / "compiled", "--compile-only", f"--artifacts={artifacts}")
    before = results(compiled).values()
    # every pair that compiled stops there (tanh.bf16 fails to compile for vmvx: a failure, as in any run)
    assert all(r.status == Status.COMPILED or r.stage in (Stage.LOWER, Stage.COMPILE) for r in before)
    bundles = sorted(p.parent for p in artifacts.glob("*/*/remote.sh"))
    assert len(bundles) == sum(r.status == Status.COMPILED for r in before) >= 2 * len(CASES) - 1
    # a batch's module is kept once: each bundle's module.vmfb is a link to it
    modules = list((artifacts / ".modules").iterdir())
    assert len(modules) < len(bundles)
    assert all((b / "module.vmfb").stat().st_ino in {m.stat().st_ino for m in modules} for b in bundles)

    ran = elsewhere(artifacts, only_the_runtime(tmp_path), JOBS="3")  # three pairs at a time: the same verdicts
    assert ran.returncode == 0, ran.stderr
    assert f"ran {len(bundles)} of {len(bundles)} pairs" in ran.stdout
    assert list(artifacts.glob("tanh.bf16/*/outputs/set0/0.bin"))
    assert (artifacts / "atan.dynamic" / "tosa" / "outputs" / "set0" / "exit_code").read_text().strip() != "0"

    verdicts = tmp_path / "verdicts"
    judged = conformance("verdicts-from", str(artifacts), "-o", str(verdicts))
    assert judged.returncode == 0, judged.stderr
    merged = tmp_path / "merged"
    proc = conformance("merge", str(compiled), str(verdicts), "-o", str(merged))
    assert proc.returncode == 0, proc.stderr

    local = results(pytest_run(tmp_path / "local"))
    after = results(merged)
    assert after.keys() == local.keys()
    differ = {k: ([getattr(after[k], f) for f in SAME], [getattr(local[k], f) for f in SAME]) for k in local
              if any(getattr(after[k], f) != getattr(local[k], f) for f in SAME)}
    assert not differ, differ
    # the three outcomes are all there: a pass, a numeric mismatch, a failure at run
    outcomes = {(r.status, r.stage, r.code) for r in after.values()}
    assert (Status.PASS, None, None) in outcomes
    assert (Status.FAIL, Stage.COMPARE, "NUMERIC_MISMATCH") in outcomes
    assert (Status.FAIL, Stage.RUN, "RUNTIME_ERROR") in outcomes
    assert read_json(merged, RUN)["ran_elsewhere"][0]["bundles"] == str(artifacts.resolve())

    # each bundle also replays its case alone with IREE's own tools, as a failure is reported upstream:
    # iree-compile on the case's IR, then iree-run-module checking eager's outputs itself
    replayed = {}
    for bundle in bundles:
        manifest = json.loads((bundle / "remote.json").read_text())
        assert (bundle / "input.mlir").exists() and "alone.vmfb" in (bundle / "reproduce.sh").read_text()
        proc = subprocess.run(["/bin/sh", str(bundle / "reproduce.sh")], capture_output=True, text=True, timeout=600)
        replayed[(manifest["case"], manifest["backend"])] = proc.returncode
    assert replayed.keys() <= after.keys()
    assert {key: code == 0 for key, code in replayed.items()} == {key: after[key].status == Status.PASS for key in replayed}


FAKE_RUNTIME = """#!/bin/sh
# A stand-in for iree-run-module (CrashesWhereItRuns): dies of SIGSEGV on a "crash" module, else gives eager's outputs.
for arg in "$@"; do
    case "$arg" in
        --module=*) module="${arg#--module=}" ;;
        --output=@*) out="${arg#--output=@}"; cp "expected/${out#outputs/}" "$out" ;;
    esac
done
read -r verdict <"$module"
[ "$verdict" != crash ] || kill -SEGV $$
"""


def test_a_crash_at_run_time_elsewhere_is_a_crash_at_run_as_here(tmp_path):
    backend = fake("CRASHES_WHERE_IT_RUNS")
    common = ["--backend", backend, "--no-default-cases", "--cases", str(FIXTURES / "cases"), "-k", "tanh or double",
              "--no-cache", "--no-xfail", "--reruns", "0", "-j", "1"]
    artifacts = tmp_path / "bundles"
    assert conformance("nightly", *common, "--compile-only", "--artifacts", str(artifacts), "--output-dir", str(tmp_path / "c")).returncode == 0
    runtime = tmp_path / "fake-runtime"
    runtime.write_text(FAKE_RUNTIME)
    runtime.chmod(0o755)
    ran = elsewhere(artifacts, os.environ["PATH"], IREE_RUN_MODULE=str(runtime))
    assert "ran 2 of 2 pairs, 1 with a set that exited nonzero" in ran.stdout, ran.stdout + ran.stderr
    assert conformance("verdicts-from", str(artifacts), "--no-xfail", "-o", str(tmp_path / "v")).returncode == 0
    there = results(tmp_path / "v")
    conformance("nightly", *common, "--output-dir", str(tmp_path / "local"))
    [local_report] = [p for p in (tmp_path / "local").iterdir() if has_results(p)]
    here = results(local_report)
    for key in here:
        assert (there[key].status, there[key].stage, there[key].code) == (here[key].status, here[key].stage, here[key].code)
    crashed = there[("tanh", "crashes-where-it-runs")]
    assert crashed.code == "CRASH" and "killed by signal SIGSEGV (11)" in crashed.explanation
    # what follows is the first line each process printed: Python's fault handler here, the shell there
    assert here[("tanh", "crashes-where-it-runs")].explanation.split(":")[0] == crashed.explanation.split(":")[0]


def test_the_scripts_say_what_is_missing_when_no_runtime_is_found(tmp_path):
    artifacts = tmp_path / "bundles"
    conformance("nightly", "--backend", fake("CRASHES_WHERE_IT_RUNS"), "--no-default-cases", "--cases", str(FIXTURES / "cases"),
                "-k", "double", "--no-cache", "--no-xfail", "--compile-only", "--artifacts", str(artifacts),
                "--output-dir", str(tmp_path / "c"), "-j", "1")
    ran = elsewhere(artifacts, str(tmp_path))  # nothing on PATH
    assert ran.returncode == 2 and "no iree-run-module" in ran.stderr
    refused = conformance("verdicts-from", str(artifacts))
    assert refused.returncode != 0 and "none of the 1 compiled pairs" in refused.stderr


def test_merge_takes_the_verdict_of_a_pair_run_elsewhere_over_its_compiled(tmp_path):
    """And refuses a pair in two runs of its own, as before."""
    def report(name: str, results_: list[Result], **run) -> Path:
        directory = tmp_path / name
        directory.mkdir()
        (directory / "results.jsonl").write_text("".join(r.to_json() + "\n" for r in results_))
        record = {"started": "2026-11-26T00:00:00+00:00", "finished": "2026-11-26T01:00:00+00:00", "backends": ["tosa@cuda"], **run}
        (directory / RUN).write_text(json.dumps(record))
        (directory / "cases.json").write_text("{}")
        return directory

    compiled = Result("tanh", "tosa@cuda", Status.COMPILED, explanation="compiled for cuda; not run: no cuda device")
    other = Result("abs", "tosa@cuda", Status.COMPILED, explanation="compiled for cuda; not run: no cuda device")
    failed = Result("tanh", "tosa@cuda", Status.FAIL, stage="compare", code="NUMERIC_MISMATCH", explanation="off")
    run_report = report("run", [compiled, other])
    verdicts = report("verdicts", [failed], verdicts={"bundles": "/b", "not_run": 0})
    for order in ((run_report, verdicts), (verdicts, run_report)):
        out = tmp_path / f"merged-{order[0].name}"
        proc = conformance("merge", *map(str, order), "-o", str(out))
        assert proc.returncode == 0, proc.stderr
        merged = results(out)
        assert merged[("tanh", "tosa@cuda")].status == Status.FAIL
        assert merged[("abs", "tosa@cuda")].status == Status.COMPILED  # not run there: stays COMPILED
    # a pair that did not end COMPILED in its run (FLAKY: one attempt compiled, one crashed) keeps the run's verdict
    flaky = Result("abs", "tosa@cuda", Status.FLAKY, explanation="the runs disagree")
    passed_there = Result("abs", "tosa@cuda", Status.PASS)
    out = tmp_path / "merged-flaky"
    proc = conformance("merge", str(report("flaky-run", [flaky])), str(report("flaky-there", [passed_there], verdicts={"bundles": "/b"})), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert results(out)[("abs", "tosa@cuda")].status == Status.FLAKY
    twice = report("again", [failed])  # a plain run holding the pair too
    refused = conformance("merge", str(run_report), str(twice), "-o", str(tmp_path / "no"))
    assert refused.returncode != 0 and "pairs have results in two directories" in refused.stderr


def test_pairs_compiled_for_a_device_not_there_are_not_run_and_stay_compiled(tmp_path):
    """Real IREE compiling for cuda on a machine without one: the scripts run nothing here (a module that
    cannot load is no verdict), and verdicts-from says none ran."""
    artifacts = tmp_path / "bundles"
    proc = run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--backend=tosa@cuda", "--case=tanh",
               "--no-cache", f"--artifacts={artifacts}")
    assert "COMPILED" in proc.stdout + proc.stderr or (artifacts / "tanh").exists(), proc.stdout[-3000:]
    ran = elsewhere(artifacts, only_the_runtime(tmp_path))
    assert ran.returncode == 75, ran.stdout + ran.stderr
    assert "not run: " in ran.stderr and "lists no cuda device here" in ran.stderr
    assert "ran 0 of 1 pairs" in ran.stdout
    assert not (artifacts / "tanh" / "tosa_cuda" / "outputs").exists() and not list(artifacts.glob("*/*/outputs"))
    refused = conformance("verdicts-from", str(artifacts))
    assert refused.returncode != 0 and "none of the 1 compiled pairs" in refused.stderr


def test_a_pair_cut_short_there_is_told_apart_from_one_that_never_ran(tmp_path):
    from conformance.execution.remote_verdicts import judge_directory
    from conformance.remote import layout

    for case in ("never", "cut", "between"):
        bundle = tmp_path / case / "tosa"
        bundle.mkdir(parents=True)
        layout.write_manifest(bundle / layout.MANIFEST, {"sets": 2})
    layout.set_dir(tmp_path / "cut" / "tosa", layout.OUTPUTS, 0).mkdir(parents=True)  # began, killed before its exit code
    first = layout.set_dir(tmp_path / "between" / "tosa", layout.OUTPUTS, 0)  # its first set passed, then it was killed
    first.mkdir(parents=True)
    (first / layout.EXIT_CODE).write_text("0\n")
    judged = judge_directory(tmp_path)
    assert judged.results == []
    assert judged.not_run == [str(tmp_path / "never" / "tosa")]
    assert sorted(judged.cut_short) == [str(tmp_path / "between" / "tosa"), str(tmp_path / "cut" / "tosa")]
