"""A lane's compilers run on one thread when the lane has one core (toolchain/threads.py): same module, less CPU."""

from __future__ import annotations

import argparse
import os
import subprocess

import pytest

from conformance import run_options as ro
from conformance.execution.engine import Engine
from conformance.settings import Settings
from conformance.toolchain import iree, threads
from tests.conftest import FIXTURES, fake

# Two dispatches (a matmul, then an add on its result): something for the pass manager's threads to share.
MODULE = """
func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %s = arith.addf %m, %a : tensor<64x64xf32>
  return %s : tensor<64x64xf32>
}
"""


@pytest.fixture
def lanes():
    yield threads.share_cores
    threads.share_cores(1)


@pytest.mark.parametrize("cores,lanes_,single", [(2, 2, True), (2, 1, False), (4, 2, False), (4, 3, True), (1, 1, True)])
def test_a_lane_with_one_core_or_less_compiles_on_one_thread(monkeypatch, lanes, cores, lanes_, single):
    monkeypatch.setattr(threads, "cores", lambda: cores)
    lanes(lanes_)
    assert threads.one_core_each() is single
    assert iree.thread_flags() == (["--mlir-disable-threading"] if single else [])


def test_iree_compile_on_one_thread_writes_the_same_module_byte_for_byte(tmp_path):
    source = tmp_path / "input.mlir"
    source.write_text(MODULE)
    modules = []
    for extra in ([], ["--mlir-disable-threading"]):
        output = tmp_path / f"module{len(modules)}.vmfb"
        command = iree.compile_command(str(source), str(output), "none", iree.TARGET_FLAGS, iree.iree_compile())
        subprocess.run([*command, *extra], check=True, capture_output=True)
        modules.append(output.read_bytes())
    assert len(modules[0]) > 1000 and modules[0] == modules[1]


def test_the_lanes_of_a_command_are_its_workers_and_reach_every_child():
    parser = argparse.ArgumentParser()
    ro.WORKERS.add_to(parser, default=None)
    assert ro.settings_from(parser.parse_args(["-j", "3"])).lanes == 3
    assert ro.settings_from(parser.parse_args([])).lanes == (os.cpu_count() or 1)  # the lanes executor's default

    settings = Settings(backends=[fake("LANES_SEEN")], case_paths=[str(FIXTURES / "cases")], default_cases=False, lanes=5)
    engine = Engine(settings)
    try:
        (result,) = list(engine.run([("tanh", "lanes-seen")]))
    finally:
        engine.close()
    assert result.passed and result.extras["lanes"] == 5, result


def test_each_xdist_worker_is_a_lane(run_registry):
    spec = fake("LANES_SEEN")
    runs = {"serial": run_registry(f"--backend={spec}", "-k", "tanh"), "xdist": run_registry(f"--backend={spec}", "-n", "2", "-k", "tanh")}
    for kind, lanes in (("serial", 1), ("xdist", 2)):
        run = runs[kind]
        assert run.returncode == 0 and run.results, run
        assert {r["extras"]["lanes"] for r in run.results.values()} == {lanes}, run
