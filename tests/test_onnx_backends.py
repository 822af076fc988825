"""The ONNX backends, run for real: hand-built ONNX cases, ONNX's own node tests, torch cases through torch.onnx.export.

One engine runs every pair below as jobs of the real supervised runner.
"""

import pytest

from conformance.execution.engine import Engine
from conformance.execution.planning import plan_jobs
from conformance.settings import Settings
from tests.conftest import FIXTURES, PROJECT

HAND_BUILT = ["onnx.abs", "onnx.abs_wrong", "onnx.add_u8", "onnx.cast_f8", "onnx.cast_i4", "onnx.bernoulli", "onnx.max_roi_pool"]
NODE_TESTS = ["onnx-node:test_abs", "onnx-node:test_attention_3d", "onnx-node:test_scatter_elements_with_axis", "onnx-node:test_identity_sequence"]
TORCH_CASES = ["tanh", "add.broadcast", "onnx.complex_out", "onnx.complex_out_empty", "onnx.complex_in"]
PAIRS = (
    [(c, "onnx-linalg") for c in HAND_BUILT + NODE_TESTS + TORCH_CASES]
    + [(c, b) for c in ("onnx.abs", "tanh") for b in ("onnx-tosa", "onnx-stablehlo")]
    + [("onnx.abs", "linalg")]
)


@pytest.fixture(scope="module")
def results():
    settings = Settings(
        backends=["onnx-linalg", "onnx-tosa", "onnx-stablehlo", "linalg"],
        case_paths=[str(FIXTURES / "onnx_cases")],
        suites=["default", "onnx-node"],
        batch_size=8,
    )
    engine = Engine(settings)
    try:
        out = {}
        for job in plan_jobs(PAIRS, 8):
            out.update({r.key: r for r in engine.run(job)})
        return out
    finally:
        engine.close()


@pytest.mark.parametrize("pair", [("onnx.abs", "onnx-linalg"), ("onnx.abs", "onnx-tosa"), ("onnx.abs", "onnx-stablehlo"), ("onnx-node:test_abs", "onnx-linalg")])
def test_an_onnx_model_passes_every_stage_of_the_onnx_backends(results, pair):
    result = results[pair]
    assert result.passed, result
    assert {"export", "import", "onnx2torch", "contract", "lower", "compile", "run", "compare"} <= set(result.timings)
    assert result.extras["onnx_ops"] == ["Abs"]


@pytest.mark.parametrize("pair", [("tanh", "onnx-linalg"), ("add.broadcast", "onnx-linalg"), ("tanh", "onnx-tosa"), ("tanh", "onnx-stablehlo")])
def test_torch_cases_run_through_torch_onnx_export(results, pair):
    result = results[pair]
    assert result.passed, result
    assert result.extras["aten_ops"] and result.extras["onnx_ops"]


@pytest.mark.parametrize("case", ["onnx.complex_out", "onnx.complex_out_empty", "onnx.complex_in"])
def test_complex_values_pass_as_the_real_tensors_torch_onnx_writes_them_as(results, case):
    # The model takes and returns each complex value as a real one with a trailing dim of 2: that is
    # no shape function's disagreement (TYPE_REFINEMENT), and the values compared are eager's.
    assert results[(case, "onnx-linalg")].passed, results[(case, "onnx-linalg")]


def test_a_mismatch_names_the_onnx_test_data_as_the_reference(results):
    result = results[("onnx.abs_wrong", "onnx-linalg")]
    assert (result.stage, result.code) == ("compare", "NUMERIC_MISMATCH"), result
    assert "(expected 2.5, got 1.5)" in result.explanation and "rtol=0.001, atol=1e-07" in result.explanation


def test_unsigned_results_pass_though_iree_hands_them_back_signed(results):
    assert results[("onnx.add_u8", "onnx-linalg")].passed, results[("onnx.add_u8", "onnx-linalg")]


def test_a_refused_conversion_names_the_onnx_op_and_its_node(results):
    # The model's Cast node has no name: it is named Cast_0 before import, and the diagnostic points at it.
    result = results[("onnx.cast_f8", "onnx-linalg")]
    assert (result.stage, result.code, result.op) == ("onnx2torch", "UNSUPPORTED_OP", "onnx.Cast"), result
    assert result.explanation == "torch-mlir's conversion of onnx.Cast refused node Cast_0 (f32 -> f8E4M3FN; to = 17)"


def test_an_op_without_any_conversion_is_named_from_what_the_conversion_left(results):
    result = results[("onnx-node:test_attention_3d", "onnx-linalg")]
    assert (result.stage, result.code, result.op) == ("onnx2torch", "UNSUPPORTED_OP", "onnx.Attention"), result
    assert "left it in place" in result.explanation and 'loc("Attention_0")' in result.details


def test_int4_on_the_boundary_compiles_then_is_skipped_at_run(results):
    result = results[("onnx.cast_i4", "onnx-linalg")]
    assert result.status == "skip", result
    assert "cannot pass int4 or uint4 buffers" in result.explanation
    assert result.timings.get("compile", 0) > 0  # it went through every stage the runtime does not limit


def test_a_random_draw_passes_on_shape_and_dtype(results):
    assert results[("onnx.bernoulli", "onnx-linalg")].passed, results[("onnx.bernoulli", "onnx-linalg")]


def test_tm_tensor_ops_reach_iree_as_tm_tensor_input(results):
    # torch-mlir's linalg output keeps tm_tensor.scatter, which IREE takes only with --iree-input-type=tm_tensor.
    result = results[("onnx-node:test_scatter_elements_with_axis", "onnx-linalg")]
    assert result.passed, result


def test_onnx_linalg_keeps_the_ops_the_linalg_lowering_keeps_backend_legal(results):
    # MaxRoiPool becomes aten.adaptive_max_pool2d; decomposed by the contract, it was a max_pool2d
    # of dynamic sizes: "failed to legalize operation 'torch.aten.max_pool2d'" at lower.
    result = results[("onnx.max_roi_pool", "onnx-linalg")]
    assert result.passed, result


def test_what_no_onnx_backend_or_other_format_takes_is_skip_with_the_reason(results):
    sequence = results[("onnx-node:test_identity_sequence", "onnx-linalg")]
    assert sequence.status == "skip" and "is sequence<tensor<FLOAT>>" in sequence.explanation
    torch_only = results[("onnx.abs", "linalg")]
    assert (torch_only.status, torch_only.explanation) == ("skip", "linalg does not take onnx cases (it takes torch)")


def test_a_torch_frontend_backend_after_the_onnx_exporter_meets_the_program_as_it_would_alone():
    """The ONNX exporter starts from the torch frontend's program (`shared`'s `given`), which tosa-custom
    decomposes again after it. nonzero's program has a data-dependent size: torch.onnx's decomposition left an
    unbacked symbol in the ShapeEnv the program's decompositions share, and tosa-custom's import then failed
    (PendingUnbackedSymbolNotFound) where alone it fails at convert. Such a program is exported again."""
    settings = Settings(backends=["linalg", "onnx-linalg", "tosa-custom"])
    engine = Engine(settings)
    try:
        together = {r.key: r for r in engine.run([("nonzero", b) for b in ("linalg", "onnx-linalg", "tosa-custom")])}
        (alone,) = engine.run([("nonzero", "tosa-custom")])
    finally:
        engine.close()
    after_onnx = together[("nonzero", "tosa-custom")]
    assert (after_onnx.verdict, after_onnx.code, after_onnx.stage) == (alone.verdict, alone.code, alone.stage), after_onnx


def test_the_zygotes_warm_up_leaves_torch_onnxs_registry_built_for_every_child():
    """Built once where the children are forked from (0.7 s), not by each child's first ONNX export."""
    import subprocess
    import sys

    program = (
        "import importlib; from conformance.toolchain import onnx\n"
        "importlib.import_module('backends.onnx_linalg').BACKEND.warm_up()\n"
        "built = onnx._exporter_registry.cache_info().currsize\n"
        "onnx._exporter_registry()\n"
        "print(built, onnx._exporter_registry.cache_info().misses)\n"
    )
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300, cwd=PROJECT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["1", "1"]  # built by warm_up; the export's call finds it
