"""Reproducer bundles (--artifacts): each holds its own case's diagnostics, replays with public tools
from a warm compile cache exactly as from a cold one, and never hangs or passes quietly."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from conformance.execution.engine import Engine
from conformance.settings import Settings
from tests.conftest import FIXTURES, fake

SMALL = ["add.broadcast", "double", "tanh", "sum.int"]


def engine_run(backends: list[str], pairs: list[tuple[str, str]], cases=FIXTURES / "cases", **settings) -> dict:
    engine = Engine(Settings(backends=backends, case_paths=[str(cases)], default_cases=False, **settings))
    try:
        return {r.key: r for r in engine.run(pairs)}
    finally:
        engine.close()


@pytest.mark.parametrize("spec,name", [("BATCH_BLAMING", "batch-blaming"), ("BATCH_BISECTED", "batch-bisected")])
def test_a_failing_batch_members_details_are_its_own(tmp_path, spec, name):
    results = engine_run([fake(spec)], [(c, name) for c in SMALL], batch_size=4, artifacts=str(tmp_path))
    tanh = results[("tanh", name)]
    assert (tanh.stage, tanh.status) == ("compile", "fail"), tanh
    assert "cannot compile the batch of tanh\n" in tanh.details + "\n", tanh.details
    # Neither the batch's error nor another member's output is the victim's.
    others = [c for c in SMALL if c != "tanh"]
    assert not [c for c in others if c in tanh.details], tanh.details
    assert (tmp_path / "tanh" / name / "details.txt").read_text() == tanh.details
    assert all(results[(c, name)].passed for c in others)


def bundle_files(bundle: Path) -> dict[str, bytes]:
    return {str(p.relative_to(bundle)): p.read_bytes() for p in sorted(bundle.rglob("*")) if p.is_file()}


def replay(bundle: Path, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", str(bundle / "reproduce.sh")], capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})


def test_a_bundle_from_a_warm_cache_replays_with_public_tools_as_one_from_a_cold_cache(tmp_path):
    cases = ["tanh", "exp.f64", "expm1.f16"]
    pairs = [(c, "tosa") for c in cases]
    common = dict(cases=FIXTURES / "iree_failures", cache_dir=str(tmp_path / "cache"), batch_size=4)
    cold = engine_run(["tosa"], pairs, artifacts=str(tmp_path / "cold"), **common)
    warm = engine_run(["tosa"], pairs, artifacts=str(tmp_path / "warm"), **common)
    # The warm run used the cache: a compiled case skipped every stage before `run` (its case key), the
    # one that failed there too, its IR kept by the cold run; a case failing before `run` ran again.
    for case in ("tanh", "expm1.f16"):
        assert {"cache", "run"} <= set(warm[(case, "tosa")].timings) and "lower" not in warm[(case, "tosa")].timings
    assert {"lower", "compile"} <= set(warm[("exp.f64", "tosa")].timings)
    expected = {"exp.f64": ("compile", "ILLEGAL_TYPE"), "expm1.f16": ("compare", "NUMERIC_MISMATCH")}
    for case, (stage, code) in expected.items():
        for run, root in ((cold, "cold"), (warm, "warm")):
            result = run[(case, "tosa")]
            assert (result.stage, result.code) == (stage, code), result
            assert result.artifacts == str(tmp_path / root / case / "tosa")
        cold_files, warm_files = (bundle_files(tmp_path / root / case / "tosa") for root in ("cold", "warm"))
        assert "input.mlir" in warm_files and "stages" not in str(warm_files)
        assert warm_files.keys() == cold_files.keys()
        assert warm_files["input.mlir"] == cold_files["input.mlir"] and warm_files["reproduce.sh"] == cold_files["reproduce.sh"]
        # Its own diagnostics: the case's IR alone, not the batch's module.
        assert "batch-input.mlir" not in warm_files["details.txt"].decode()
    compiled = replay(tmp_path / "warm" / "exp.f64" / "tosa")
    assert compiled.returncode == 1 and "'tosa.exp' op is not profile-aligned: element type 'f64'" in compiled.stderr, compiled
    ran = replay(tmp_path / "warm" / "expm1.f16" / "tosa")
    assert ran.returncode != 0 and "[FAILED] result[0]" in ran.stdout + ran.stderr, ran
    assert (tmp_path / "warm" / "expm1.f16" / "tosa" / "module.vmfb").exists()  # iree-compile ran first
    assert not (tmp_path / "warm" / "tanh").exists() and not (tmp_path / "warm" / ".staging").exists()


def test_a_stage_without_a_public_tool_reruns_the_pair_with_no_xfail_and_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_SCRIPT", json.dumps({"tanh": "raise"}))  # fails at lower, which declares no replay
    spec = fake("SCRIPTED")
    results = engine_run([spec], [("tanh", "scripted")], artifacts=str(tmp_path / "bundles"), case_timeout=60)
    bundle = Path(results[("tanh", "scripted")].artifacts)
    script = (bundle / "reproduce.sh").read_text()
    assert f"--backend={spec} --case=tanh --no-default-cases --cases={FIXTURES / 'cases'}" in script
    assert "--no-xfail" in script and "--case-timeout=60" in script
    rerun = replay(bundle, timeout=600)
    assert rerun.returncode == 1 and "FAILED tanh[scripted]" in rerun.stdout, rerun.stdout[-3000:]


def test_a_replay_of_a_hanging_stage_ends_after_the_case_timeout(tmp_path):
    results = engine_run([fake("HANGING_TOOL")], [("tanh", "hanging-tool")], artifacts=str(tmp_path), case_timeout=3)
    result = results[("tanh", "hanging-tool")]
    assert result.code == "TIMEOUT", result
    bundle = Path(result.artifacts)
    assert (bundle / "note.txt").exists()
    replayed = replay(bundle, timeout=120)  # `sleep 1000` unless the script stops it
    assert replayed.returncode == 124, replayed
    assert "sleep was still running after 3 s: stopped (the hang reproduces)" in replayed.stderr


def test_an_iree_replay_runs_every_input_set_so_a_failure_at_the_second_set_reproduces(tmp_path):
    # linear.dyn_no_bias runs at n=1, then n=3: torch-mlir's linalg lowering casts the dynamic dim to 1,
    # so only the second input set fails. A replay of set 0 alone passed: "reproduced" nothing.
    engine = Engine(Settings(backends=["linalg"], artifacts=str(tmp_path), case_timeout=300))
    try:
        [result] = engine.run([("linear.dyn_no_bias", "linalg")])
    finally:
        engine.close()
    assert (result.stage, result.code) == ("run", "RUNTIME_ERROR"), result
    bundle = tmp_path / "linear.dyn_no_bias" / "linalg"
    script = (bundle / "reproduce.sh").read_text()
    assert "--input=@inputs/set0/0.npy" in script and "--input=@inputs/set1/0.npy" in script
    replayed = replay(bundle)
    assert replayed.returncode != 0, replayed
    assert "input0 shape dimension 1 mismatch" in replayed.stdout + replayed.stderr, replayed
