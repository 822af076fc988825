"""IREE targets as backend parameters: `NAME@TARGET[:CHIP][:LEVEL]`, the COMPILED outcome, compile figures.

The GPU targets are compiled for real (iree-compile needs no GPU); running
needs a device, so on a machine without one their pairs end COMPILED.
"""

from __future__ import annotations

import json
import platform
import subprocess
from pathlib import Path

import jsonschema

import pytest

from conformance.backends import loader
from conformance.execution.engine import Engine
from conformance.report.build import build_reports
from conformance.report.html.data import read_page
from conformance.report.summary import SCHEMA_PATH
from conformance.result import Result
from conformance.settings import Settings
from conformance.taxonomy import Status, Verdict
from conformance.toolchain.iree import dispatch_counts, iree_compile, statistics_flags
from conformance.toolchain.iree_targets import TARGETS, compile_target, missing_device
from conformance.toolchain.versions import toolchain_versions
from conformance.xfail.judge import verdict
from conformance.xfail.sets import Entry, XfailSet
from conformance.xfail.update import update
from tests.test_report_build import night, passing

# -- the spelling ---------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, name, target_flags",
    [
        ("tosa@cuda", "tosa@cuda", ["--iree-hal-target-device=cuda"]),
        ("linalg@rocm:gfx942", "linalg@rocm:gfx942", ["--iree-hal-target-device=hip", "--iree-rocm-target=gfx942"]),
        ("stablehlo@vulkan-spirv", "stablehlo@vulkan-spirv", ["--iree-hal-target-device=vulkan"]),
        ("tosa@llvm-cpu:O0", "tosa@llvm-cpu:O0", ["--iree-hal-local-target-device-backends=llvm-cpu", "--iree-opt-level=O0"]),
        ("torch@cuda:O3:sm_80", "torch@cuda:sm_80:O3", ["--iree-cuda-target=sm_80", "--iree-opt-level=O3"]),  # canonical order
    ],
)
def test_a_target_is_a_backend_of_its_own_name_compiling_with_its_flags(spec, name, target_flags):
    backend = loader.resolve(spec)
    base = loader.resolve(spec.split("@")[0])
    assert backend.name == name and base.name == spec.split("@")[0]
    command = backend.compile_command("in.mlir", "out.vmfb")
    assert all(flag in command for flag in target_flags), command
    # The input type is the backend's, whatever the target; the flags (so the cache keys) differ from the CPU's.
    assert f"--iree-input-type={base.iree_input_type}" in command
    assert backend.flags()["iree_input_type"] == base.flags()["iree_input_type"]
    assert backend.flags() != base.flags()
    assert loader.resolve(name) is loader.resolve(name)  # one Backend per name in a process


def test_the_default_target_spelled_out_is_the_backend_itself():
    assert loader.resolve("tosa@llvm-cpu") is loader.resolve("tosa")
    default_cpu = compile_target("llvm-cpu", []).flags_chip()
    assert loader.resolve(f"tosa@llvm-cpu:{default_cpu}") is loader.resolve("tosa")


def test_the_cpu_backends_compile_for_a_named_cpu_never_the_host_unless_asked():
    """Code generated for `host` differs between CPU models, and with it verdicts: the default names a CPU."""
    flags = loader.resolve("tosa").target.flags()
    cpu = [f for f in flags if f.startswith("--iree-llvmcpu-target-cpu=")]
    assert len(cpu) == 1 and cpu[0] != "--iree-llvmcpu-target-cpu=host", flags
    if platform.machine() == "x86_64":
        assert cpu == ["--iree-llvmcpu-target-cpu=x86-64-v3"]
    host = loader.resolve("tosa@llvm-cpu:host")
    assert host.name == "tosa@llvm-cpu:host" and "--iree-llvmcpu-target-cpu=host" in host.target.flags()
    assert toolchain_versions()["llvm-cpu target cpu"] == cpu[0].split("=")[1]  # in every report and cache key


@pytest.mark.skipif(platform.machine() != "x86_64" or "avx512f" not in Path("/proc/cpuinfo").read_text(),
                    reason="compares code for an AVX2 and an AVX-512 CPU: needs an x86-64 host that runs both")
def test_the_named_cpu_decides_the_code_that_runs(tmp_path):
    """to.f32_to_u8 (values 0..255): IREE's AVX2 code gives 127 where PyTorch gives 253, its AVX-512 code is right.
    The verdict follows the CPU named, whatever this host is."""
    engine = Engine(Settings(backends=["linalg", "linalg@llvm-cpu:x86-64-v4"], cache_dir=None))
    try:
        results = {r.backend: r for r in engine.run([("to.f32_to_u8", "linalg"), ("to.f32_to_u8", "linalg@llvm-cpu:x86-64-v4")])}
    finally:
        engine.close()
    assert results["linalg@llvm-cpu:x86-64-v4"].passed, results["linalg@llvm-cpu:x86-64-v4"]
    assert results["linalg"].code == "NUMERIC_MISMATCH" and "got 127" in results["linalg"].explanation


@pytest.mark.parametrize(
    "spec, said",
    [
        ("tosa@cudaa", "unknown IREE target 'cudaa'; known: llvm-cpu, vmvx, cuda, rocm, vulkan-spirv, metal-spirv"),
        ("linalg@rocm", "rocm needs a chip (@rocm:CHIP); known: gfx908, gfx90a, gfx942"),
        ("linalg@rocm:gfx9999", "unknown rocm chip 'gfx9999'; known: gfx908, gfx90a, gfx942"),
        ("tosa@cuda:sm_90", "unknown cuda chip 'sm_90'; known: sm_60"),  # IREE 3.13 has no sm_90 ("missing GPU target")
        ("tosa@llvm-cpu:O4", "unknown optimization level 'O4'; IREE's are O0, O1, O2, O3"),
        ("tosa@vmvx:znver4", "vmvx takes no chip (got 'znver4'), only an optimization level"),
        ("tosa@llvm-cpu:pentium", "unknown llvm-cpu chip 'pentium'; known: "),
        ("tosa@cuda:O1:O2", "two optimization levels (O1, O2)"),
        ("tosa@", "write NAME@TARGET[:CHIP][:LEVEL], e.g. tosa@cuda"),
        ("tosa@cuda::O1", "write NAME@TARGET[:CHIP][:LEVEL]"),
        ("eager@cuda", "eager compiles for no target of choice; these do: linalg, onnx-linalg, onnx-stablehlo, onnx-tosa, stablehlo, torch, tosa"),
    ],
)
def test_a_target_iree_cannot_compile_for_is_refused_naming_the_valid_ones(spec, said):
    with pytest.raises(loader.BackendError) as error:
        loader.resolve(spec)
    assert str(error.value).startswith(f"backend {spec!r}: ") and said in str(error.value), str(error.value)


def test_a_target_in_a_pytest_run_is_checked_before_anything_runs(run_registry):
    run = run_registry("--backend=tosa@rocm:gfx9999")
    assert run.returncode == 4 and not run.results  # pytest's usage error
    assert "unknown rocm chip 'gfx9999'; known: gfx908" in run.output


@pytest.mark.parametrize("target", [t for t in TARGETS.values() if t.chips])
def test_the_chips_of_the_table_are_chips_iree_compile_knows(target, tmp_path):
    """The first and last chip of each table compile a small module with the installed iree-compile."""
    source = tmp_path / "tanh.mlir"
    source.write_text("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                      "  %0 = math.tanh %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")
    for chip in (target.chips[0], target.chips[-1]):
        flags = compile_target(target.name, [chip]).flags()
        proc = subprocess.run([iree_compile(), str(source), *flags, "-o", str(tmp_path / "m.vmfb")], capture_output=True, text=True)
        assert proc.returncode == 0, (chip, proc.stderr[-2000:])


# -- running: on a device, or COMPILED without one --------------------------------


@pytest.fixture(scope="module")
def cpu_and_gpu(tmp_path_factory):
    """A few cases on tosa@llvm-cpu:O0 (runs here), tosa@vmvx (runs here) and tosa@cuda (compiles here), cached."""
    cache = tmp_path_factory.mktemp("cache")
    pairs = [(c, b) for c in ("tanh", "matmul", "gelu.tanh.f16", "atanh") for b in ("tosa@llvm-cpu:O0", "tosa@cuda")] + [("tanh", "tosa@vmvx")]

    def run():
        engine = Engine(Settings(backends=["tosa@llvm-cpu:O0", "tosa@cuda", "tosa@vmvx"], batch_size=4, cache_dir=str(cache)))
        try:
            return {r.key: r for r in engine.run(pairs)}
        finally:
            engine.close()

    return run(), run()  # the second run finds every compiled case in the cache


def test_a_case_compiled_at_O0_for_the_cpu_runs_and_is_compared(cpu_and_gpu):
    results, _ = cpu_and_gpu
    for case in ("tanh", "matmul"):
        result = results[(case, "tosa@llvm-cpu:O0")]
        assert result.status == Status.PASS, result
        assert {"compile", "run", "compare"} <= set(result.timings)
    # Compared for real: torch-mlir's f16 tanh-gelu differs from eager's past f16 tolerances, at O0 as at the default level.
    mismatch = results[("gelu.tanh.f16", "tosa@llvm-cpu:O0")]
    assert (mismatch.status, mismatch.stage, mismatch.code) == (Status.FAIL, "compare", "NUMERIC_MISMATCH"), mismatch


def test_a_target_whose_device_is_here_runs_and_compares_as_on_the_cpu(cpu_and_gpu):
    results, _ = cpu_and_gpu
    result = results[("tanh", "tosa@vmvx")]  # vmvx modules run on the local-task driver: on every machine
    assert result.status == Status.PASS, result
    assert {"run", "compare"} <= set(result.timings)


def test_a_case_compiled_for_a_device_not_here_ends_compiled_not_passed(cpu_and_gpu):
    absent = missing_device("cuda")
    if absent is None:
        pytest.skip("this machine has a cuda device: its pairs run and are compared")
    results, cached = cpu_and_gpu
    for outcome in (results, cached):
        result = outcome[("tanh", "tosa@cuda")]
        assert result.status == Status.COMPILED and not result.passed and not result.failed, result
        assert result.explanation == f"compiled for cuda; not run: no cuda device ({absent})"
        assert "compare" not in result.timings
        assert verdict(result, None) == Verdict.COMPILED and not Verdict.COMPILED.is_failure
    # A failure before compile is the same failure on every target.
    assert results[("atanh", "tosa@cuda")].code == results[("atanh", "tosa@llvm-cpu:O0")].code == "UNSUPPORTED_OP"


def test_each_compiled_case_records_its_compile_figures_also_from_the_cache(cpu_and_gpu):
    results, cached = cpu_and_gpu
    for backend in ("tosa@llvm-cpu:O0", "tosa@cuda"):
        stats = results[("matmul", backend)].extras["compile_stats"]
        assert stats["dispatches"] >= 1 and stats["vmfb_bytes"] > 1000 and stats["seconds"] > 0, stats
        assert stats["module_cases"] == 3  # tanh, matmul and gelu.tanh.f16 compiled as one module; atanh never lowered
        assert cached[("matmul", backend)].extras["compile_stats"] == stats  # a cache hit keeps the figures of the compile
        assert "compile" not in cached[("matmul", backend)].timings


def test_dispatches_are_counted_per_function_from_irees_statistics(tmp_path):
    source = tmp_path / "three.mlir"
    source.write_text(
        "func.func @c0(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {\n  %0 = math.tanh %a : tensor<4x8xf32>\n  return %0 : tensor<4x8xf32>\n}\n"
        "func.func @c1(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
        "  %z = arith.constant dense<0.0> : tensor<4x4xf32>\n"
        "  %0 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>\n"
        "  %1 = linalg.matmul ins(%0, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>\n"
        "  return %1 : tensor<4x4xf32>\n}\n"
        "func.func @c2(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
    )
    statistics = tmp_path / "statistics.csv"
    flags = compile_target("llvm-cpu", []).flags()
    subprocess.run([iree_compile(), str(source), *flags, *statistics_flags(statistics), "-o", str(tmp_path / "m.vmfb")], check=True)
    assert dispatch_counts(statistics) == {"c0": 1, "c1": 2}  # c2 computes nothing: no dispatch, no entry


# -- judging and reporting COMPILED ---------------------------------------------------


def compiled(case: str, backend: str = "tosa@cuda", dispatches: int = 2, alone: bool = False) -> Result:
    stats = {"dispatches": dispatches, "vmfb_bytes": 40960, "module_cases": 1 if alone else 8, "seconds": 0.25}
    return Result(case, backend, "compiled", explanation="compiled for cuda; not run: no cuda device (no libcuda.so)",
                  timings={"compile": 0.25, "run": 0.0}, extras={"compile_stats": stats})


def test_an_xfail_entry_is_judged_by_a_compiled_case_only_when_it_expects_a_failure_by_compile(tmp_path):
    at_compile = Entry("COMPILER_ERROR", stage="compile")
    when_run = Entry("NUMERIC_MISMATCH", stage="compare")
    assert verdict(compiled("a"), at_compile) == Verdict.XPASS  # it compiled: the entry is stale
    assert verdict(compiled("a"), when_run) == Verdict.COMPILED  # not run: neither confirmed nor refuted
    xfails = XfailSet("tosa@cuda", tmp_path / "tosa@cuda.toml", {"a": at_compile, "b": when_run})
    report = update(xfails, [compiled("a"), compiled("b")], {"a", "b"})
    assert report.removed == ["a"] and list(xfails.entries) == ["b"]


def test_compiled_pairs_have_their_own_count_everywhere_and_no_pass_rate(tmp_path):
    before = night(tmp_path, "2026-10-01", [passing("math.add", "tosa"), compiled("math.add"), compiled("math.softmax", alone=True)])
    now = night(tmp_path, "2026-10-02", [passing("math.add", "tosa"), compiled("math.add", dispatches=4),
                                         Result("math.softmax", "tosa@cuda", "fail", stage="compile", code="COMPILER_ERROR",
                                                explanation="iree-compile failed", timings={"compile": 1.0})])
    summary = build_reports(now, before)
    jsonschema.validate(json.loads((now / "summary.json").read_text()), json.loads(SCHEMA_PATH.read_text()))
    cuda = summary["backends"]["tosa@cuda"]
    assert cuda["by_status"]["compiled"] == 1 and cuda["by_status"]["pass"] == 0
    assert cuda["pass_rate"] is None and cuda["compile_rate"] == 0.5
    assert cuda["compile_stats"]["dispatches"] == {"median": 4, "max": 4}
    assert summary["backends"]["tosa"]["pass_rate"] == 1.0
    assert summary["families"]["math"]["tosa@cuda"]["compiled"] == 1
    # Compiled last night, failing to compile tonight: a regression (the nightly's exit status counts it).
    assert [(i["case"], i["backend"]) for i in summary["changes"]["newly_failing"]] == [("math.softmax", "tosa@cuda")]
    markdown = (now / "report.md").read_text()
    assert "compiled, not run" in markdown and "## Compile figures" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| tosa@cuda "))
    assert [cell.strip() for cell in row.split("|")[2:10]] == ["2", "0", "1", "0", "0", "1", "-", "50.0%"]  # flaky 0, compiled 1
    page = (now / "report.html").read_text()
    assert 'data-k="compiled">1<' in page and 'id="compile-table"' in page
    assert ("cp", "C") in {cell["look"] for cell in read_page(page)[1].values()}  # the matrix cell: compiled, not run
    results = [json.loads(line) for line in (now / "results.jsonl").read_text().splitlines()]
    assert {r["status"] for r in results} == {"pass", "compiled", "fail"}
