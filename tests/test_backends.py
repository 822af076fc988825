"""The real backends (torch-mlir lowerings on IREE, the TOSA reference model), run for real.

One engine runs every pair below as jobs of the real supervised runner, so
this file costs one export per case and one batched compile per backend.
"""

import pytest

from conformance.execution.engine import Engine
from conformance.execution.planning import plan_jobs
from conformance.settings import Settings
from tests.conftest import fake

BACKENDS = ["torch", "linalg", "tosa", "stablehlo", "tosa-ref"]
BASICS = ["tanh", "add.broadcast", "matmul", "mlp"]
# float32[n, 4] + float32[n, 4], n at two sizes: a broadcasting op, which is
# where StableHLO needs dynamic_broadcast_in_dim.
DYNAMIC = "add.dynamic"
# torch-mlir lowers these to tm_tensor.scatter and tm_tensor.sort, not linalg.
TM_TENSOR = ["index_add", "sort"]
# Backend-legal for linalg in torch-mlir's own e2e config: its decomposition fails where the sizes do not divide.
LINALG_LEGAL = ["adaptive_max_pool2d", "adaptive_max_pool2d.indices"]
# torch-mlir's TOSA holds tensor arith.constants here (its contract allows them), which tosa-opt cannot serialize.
ARITH_CONSTANTS = ["zeros_like", "as_strided"]
# uint8 and 0-d bfloat16 outputs: what the module hands back needs reading right.
OUTPUT_TYPES = [("add.u8", "linalg"), ("sum.bf16", "torch")]
# A backend setting pipeline, iree_input_type and generic_form itself, as backends did before lowerings.py.
SPELLED_OUT = ("tanh", "spelled-out")
PAIRS = (
    [(c, b) for c in BASICS + [DYNAMIC] for b in BACKENDS]
    + [("atanh", "tosa"), ("lenet5", "tosa-ref"), ("diagonal", "stablehlo")]
    + [(c, "linalg") for c in TM_TENSOR + LINALG_LEGAL]
    + [(c, "tosa-ref") for c in ARITH_CONSTANTS]
    + OUTPUT_TYPES
    + [SPELLED_OUT]
)


@pytest.fixture(scope="module")
def results():
    engine = Engine(Settings(backends=[*BACKENDS, fake("SPELLED_OUT")], batch_size=8))
    try:
        out = {}
        for job in plan_jobs(PAIRS, 8, heavy={"mlp", "lenet5"}):
            out.update({r.key: r for r in engine.run(job)})
        return out
    finally:
        engine.close()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", BASICS)
def test_first_cases_pass_on_every_backend(results, case, backend):
    result = results[(case, backend)]
    assert result.passed, result
    assert {"export", "import", "contract", "lower", "compile", "run", "compare"} <= set(result.timings)


@pytest.mark.parametrize("backend", ["torch", "linalg", "tosa"])
def test_dynamic_shapes_compile_once_and_run_at_two_sizes(results, backend):
    result = results[(DYNAMIC, backend)]
    assert result.passed, result


@pytest.mark.parametrize("backend", ["stablehlo", "tosa-ref"])
def test_backends_without_dynamic_shapes_say_so(results, backend):
    result = results[(DYNAMIC, backend)]
    assert (result.status, result.code) == ("fail", "DYNAMIC_SHAPE_UNSUPPORTED"), result
    assert result.stage == "compile"
    assert "dynamic" in result.explanation


def test_an_op_torch_mlir_cannot_lower_to_tosa_is_named(results):
    # torch-mlir 20261001 has no TOSA lowering for aten.atanh.
    result = results[("atanh", "tosa")]
    assert (result.stage, result.code, result.op) == ("lower", "UNSUPPORTED_OP", "aten.atanh"), result
    assert "torch-mlir cannot lower aten.atanh to tosa" in result.explanation
    assert "failed to legalize operation 'torch.aten.atanh'" in result.details


def test_an_op_reported_through_its_scalar_constant_is_named(results):
    # MLIR names the first illegal op it meets, torch.constant.int; the op the
    # StableHLO conversion really left behind is aten.diagonal.
    result = results[("diagonal", "stablehlo")]
    assert (result.stage, result.code, result.op) == ("lower", "UNSUPPORTED_OP", "aten.diagonal"), result
    assert "failed to legalize operation 'torch.constant.int'" in result.details
    assert result.explanation.startswith("torch-mlir cannot lower aten.diagonal to stablehlo"), result


@pytest.mark.parametrize("case", TM_TENSOR)
def test_linalg_compiles_torch_mlirs_tm_tensor_ops(results, case):
    # IREE takes torch-mlir's TMTensor ops only under --iree-input-type=tm_tensor.
    result = results[(case, "linalg")]
    assert result.passed, result


@pytest.mark.parametrize("case", LINALG_LEGAL)
def test_linalg_keeps_the_ops_torch_mlirs_linalg_config_keeps_backend_legal(results, case):
    # Decomposed, adaptive_max_pool2d 8x7 -> 3x5 became max_pool2d behind `runtime.assert false`
    # and an invalid tensor.cast: VERIFIER_ERROR, blamed on torch-mlir for our contract options.
    result = results[(case, "linalg")]
    assert result.passed, result


def test_a_backend_naming_its_pipeline_and_input_type_itself_still_lowers_and_compiles_with_them(results):
    # Generic TOSA handed to IREE as tosa input passes; the torch contract as tosa input, or pretty TOSA, would not.
    result = results[SPELLED_OUT]
    assert result.passed, result
    assert {"lower", "compile", "run"} <= set(result.timings)


@pytest.mark.parametrize("case", ARITH_CONSTANTS)
def test_tosa_ref_serializes_the_arith_constants_torch_mlirs_tosa_contract_allows(results, case):
    # They were UNSUPPORTED_OP (arith.constant) at compile, blamed on torch-mlir for its own contract.
    result = results[(case, "tosa-ref")]
    assert result.passed, result


@pytest.mark.parametrize("case, backend", OUTPUT_TYPES)
def test_unsigned_and_0d_bfloat16_outputs_come_back_as_eager_gives_them(results, case, backend):
    # The signless module returns uint8 as int8; NumPy's ascontiguousarray made a 0-d bf16 1-d.
    result = results[(case, backend)]
    assert result.passed, result


def test_a_0d_bfloat16_array_stays_0d():
    import ml_dtypes
    import numpy as np
    import torch

    from conformance.arrays import to_tensor

    t = to_tensor(np.array(1.5, dtype=ml_dtypes.bfloat16))
    assert (t.shape, t.dtype, t.item()) == (torch.Size([]), torch.bfloat16, 1.5)


def test_int8_outputs_are_viewed_as_uint8_only_where_eager_has_uint8():
    # Leading outputs are mutated inputs (extras["mutations"]): they follow the input's dtype.
    from types import SimpleNamespace

    import torch

    from conformance.toolchain.torch_mlir import unsigned_as_eager

    u8, i8 = torch.tensor([200], dtype=torch.uint8), torch.tensor([-56], dtype=torch.int8)
    run = SimpleNamespace(inputs=[[u8, i8]], expected=[(u8, i8)], extras={"mutations": [1]})
    got = unsigned_as_eager((i8, i8, i8), run)
    assert [t.dtype for t in got] == [torch.int8, torch.uint8, torch.int8]
    assert got[1].item() == 200  # the same byte, read unsigned
    run = SimpleNamespace(inputs=[[u8]], expected=[u8], extras={})
    assert unsigned_as_eager(i8, run).dtype == torch.uint8
    assert unsigned_as_eager((i8, i8), run) == (i8, i8)  # another structure: left for the comparison


def test_the_tosa_reference_model_runs_a_small_conv_net(results):
    result = results[("lenet5", "tosa-ref")]
    assert result.passed, result
    assert result.timings["run"] > 0


@pytest.mark.parametrize("backend", ["torch", "linalg", "tosa", "stablehlo"])
def test_a_batch_compiles_as_one_module_with_right_answers(backend, tmp_path):
    # Two models with different weights under the same resource names, and an op:
    # one iree-compile call, and each function still computes its own case.
    import torch

    from conformance.backends import loader
    from conformance.backends.protocol import CaseRun
    from conformance.cases.inputs import make_inputs, make_module
    from conformance.cases.spec import T, model, op

    cases = [
        model("m1", lambda: torch.nn.Linear(3, 3), T(2, 3)),
        model("m2", lambda: torch.nn.Linear(3, 3), T(2, 3), seed=5),
        op("t", lambda x: torch.tanh(x) + 1, T(2, 3)),
    ]
    chosen = loader.resolve(backend)
    runs, values = [], []
    for i, case in enumerate(cases):
        module, inputs = make_module(case), make_inputs(case)
        with torch.no_grad():
            expected = [module(*x) for x in inputs]
        run = CaseRun(case, module, inputs, expected, tmp_path / str(i))
        run.workdir.mkdir()
        value = None
        for stage in chosen.stages[:-2]:  # up to, not including, compile and run
            value = chosen.run_stage(stage, value, run)
        runs.append(run)
        values.append(value)
    entries = chosen.compile(values, runs)
    assert len({id(e.compiled) for e in entries}) == 1
    assert [e.function for e in entries] == ["c0", "c1", "c2"]
    for entry, run in zip(entries, runs):
        torch.testing.assert_close(chosen.run(entry, run.inputs[0], run), run.expected[0])


def test_a_failing_batch_names_its_guilty_case_and_verdicts_equal_one_by_one():
    cases = ["tanh", "exp.f64", "add.broadcast", "relu"]  # exp.f64: TOSA has no f64
    verdicts = {}
    for batch in (4, 1):
        engine = Engine(Settings(backends=["tosa"], batch_size=batch, cache_dir=None))
        try:
            verdicts[batch] = {r.case: (r.status, r.stage, r.code, r.op, r.explanation) for r in engine.run([(c, "tosa") for c in cases])}
        finally:
            engine.close()
    assert verdicts[4] == verdicts[1]
    assert verdicts[4]["exp.f64"][:4] == ("fail", "compile", "ILLEGAL_TYPE", "tosa.exp")
    assert all(verdicts[4][c][0] == "pass" for c in cases if c != "exp.f64")


def test_iree_diagnostics_point_at_the_guilty_function(tmp_path):
    import torch

    from conformance.backends import loader
    from conformance.backends.protocol import BatchFailure, CaseRun
    from conformance.cases.inputs import make_inputs, make_module
    from conformance.cases.spec import T, op

    tosa = loader.resolve("tosa")
    cases = [op("a", torch.tanh, T(2, 3)), op("b", torch.exp, T(2, 3, dtype=torch.float64)), op("c", torch.neg, T(2, 3))]
    runs, values = [], []
    for i, case in enumerate(cases):
        module, inputs = make_module(case), make_inputs(case)
        run = CaseRun(case, module, inputs, [module(*inputs[0])], tmp_path / str(i))
        run.workdir.mkdir()
        value = None
        for stage in tosa.stages[:-2]:
            value = tosa.run_stage(stage, value, run)
        runs.append(run)
        values.append(value)
    with pytest.raises(BatchFailure) as failure:
        tosa.compile(values, runs)
    assert failure.value.guilty == [1]
    assert "element type 'f64' is not legal" in str(failure.value.cause)


def test_inplace_cases_compare_the_updated_input_on_a_real_backend():
    engine = Engine(Settings(backends=["tosa"], cache_dir=None))
    try:
        result = next(engine.run([("add_", "tosa")]))
    finally:
        engine.close()
    assert result.passed, result
    assert result.extras["mutations"] == [0]  # the first output is input 0's new value


def test_tosa_tools_are_the_native_binaries_of_their_own_virtualenv():
    # pip's console shims of the same names only re-launch these (and under
    # `pip --target` they overwrote them): the backend calls the ELF files.
    from conformance.toolchain.tosa_reference import find_tool
    from conformance.toolchain.versions import tosa_tools_version

    for name in ("tosa-opt", "tosa_reference_model"):
        with open(find_tool(name), "rb") as f:
            assert f.read(4) == b"\x7fELF", find_tool(name)
    assert tosa_tools_version() == "2026.8.0"


def test_a_missing_tosa_tools_install_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setenv("CONFORMANCE_TOSA_TOOLS", str(tmp_path))
    engine = Engine(Settings(backends=["tosa-ref"], cache_dir=str(tmp_path / "cache")))
    try:
        result = next(engine.run([("tanh", "tosa-ref")]))
    finally:
        engine.close()
    assert (result.stage, result.code) == ("compile", "TOOL_MISSING"), result
    assert "tosa-opt" in result.explanation and "make install" in result.explanation


def test_the_tosa_reference_model_runs_a_graph_without_inputs(tmp_path):
    # OpInfo's arange samples take no tensor: given no --ifm_name, the reference model looks for a test
    # descriptor (./desc.json) and stopped with "Unable to load test json", a RUNTIME_ERROR of ours.
    (tmp_path / "no_inputs.py").write_text(
        "import torch\nfrom conformance import op\n\nCASES = [op('arange.alone', lambda: torch.arange(-1.0, 2.0, 2.0))]\n"
    )
    engine = Engine(Settings(backends=["tosa-ref"], case_paths=[str(tmp_path)], default_cases=False))  # no cache_dir: no compile cache
    try:
        (result,) = engine.run([("arange.alone", "tosa-ref")])
    finally:
        engine.close()
    assert result.passed, result


def test_the_tosa_reference_model_refuses_a_dynamic_signature_and_runs_zero_size_outputs(tmp_path):
    # OpInfo's dynamic variants of clone, contiguous, flip of a size-1 dim: @main returns its dynamic input.
    # tosa-opt's level check passed it (no op uses the dim), and the model aborted (std::length_error: CRASH)
    # or wrote a (1, 0, -1) .npy header numpy cannot reshape (UNKNOWN, "cannot reshape array of size 0").
    (tmp_path / "identity.py").write_text(
        "import torch\nfrom conformance import op, T, Dyn\n\nn = Dyn('n', 2, 5)\n\n"
        "CASES = [\n"
        "    op('clone.dynamic', torch.clone, T(n, 3, n)),\n"
        "    op('clone.zero_size.dynamic', torch.clone, T(1, 0, n)),\n"
        "    op('clone.zero_size', torch.clone, T(1, 0, 3)),\n"
        "    op('bmm.dynamic', torch.bmm, T(n, 2, 3), T(n, 3, 4)),\n"
        "]\n"
    )
    engine = Engine(Settings(backends=["tosa-ref"], case_paths=[str(tmp_path)], default_cases=False))
    ids = ("clone.dynamic", "clone.zero_size.dynamic", "clone.zero_size", "bmm.dynamic")
    try:
        results = {r.case: r for r in engine.run([(c, "tosa-ref") for c in ids])}
    finally:
        engine.close()
    for case in ("clone.dynamic", "clone.zero_size.dynamic"):
        result = results[case]
        assert (result.stage, result.code) == ("compile", "DYNAMIC_SHAPE_UNSUPPORTED"), result
        assert "argument 0: tensor<" in result.explanation and "?" in result.explanation
    # Its static twin, a zero-size output (torch-mlir's TOSA lowering of an op refuses a zero-size tensor), runs right.
    assert results["clone.zero_size"].passed, results["clone.zero_size"]
    # Where an op uses the dynamic dim, tosa-opt's level check speaks first and names it.
    bmm = results["bmm.dynamic"]
    assert (bmm.stage, bmm.code, bmm.op) == ("compile", "DYNAMIC_SHAPE_UNSUPPORTED", "tosa.matmul"), bmm


def test_an_output_file_numpy_cannot_read_is_a_tool_error_naming_it(tmp_path):
    # What the real model wrote for a graph returning its tensor<1x0x?xf32> input: a -1 dim in the header.
    import subprocess

    import numpy as np

    from conformance.classify import classify_error
    from conformance.toolchain.tools import ToolError
    from conformance.toolchain.tosa_reference import _load_output, find_tool

    (tmp_path / "m.mlir").write_text(
        "func.func @main(%arg0: tensor<1x0x?xf32>) -> tensor<1x0x?xf32> {\n  return %arg0 : tensor<1x0x?xf32>\n}\n"
    )
    subprocess.run([find_tool("tosa-opt"), "m.mlir", "--tosa-validate", "--tosa-serialize", "--tosa-flatbuffer-filename=m.tosa", "-o", "/dev/null"], cwd=tmp_path, check=True)
    np.save(tmp_path / "in.npy", np.ones((1, 0, 5), np.float32))
    subprocess.run(
        [find_tool("tosa_reference_model"), "--tosa_file", "m.tosa", "--output_dir", ".", "--ifm_name", "TosaInput_0",
         "--ifm_file", "in.npy", "--ofm_name", "TosaInput_0", "--ofm_file", "out.npy"],
        cwd=tmp_path, check=True, env={"TOSA_MODEL_NO_BACKTRACE": "1"},
    )
    with pytest.raises(ToolError) as raised:
        _load_output(tmp_path / "out.npy")
    assert "out.npy" in str(raised.value) and "(1, 0, -1)" in str(raised.value)
    classified = classify_error("run", raised.value)
    assert classified.code == "RUNTIME_ERROR", classified
    assert "out.npy, which numpy cannot read" in classified.explanation


def test_an_op_without_a_lowering_for_its_dtype_fails_the_same_way_with_dynamic_dims(tmp_path):
    # torch-mlir's "failed to legalize operation 'torch.aten.relu'" reads the same for integer relu (no TOSA
    # lowering at all) and for tanh gelu on a '?' dim (a lowering that bails on it); fuzz counted the dynamic
    # integer relu as a new DYNAMIC_SHAPE_UNSUPPORTED group. The lower stage's static twin tells them apart.
    (tmp_path / "twins.py").write_text(
        "import torch\nimport torch.nn.functional as F\nfrom conformance import op, T, Dyn\n\nn = Dyn('n', 2, 5)\n\n"
        "CASES = [\n"
        "    op('relu.i32', torch.relu, T(3, 4, dtype=torch.int32)),\n"
        "    op('relu.i32.dynamic', torch.relu, T(n, 4, dtype=torch.int32)),\n"
        "    op('gelu.tanh.dynamic', lambda x: F.gelu(x, approximate='tanh'), T(2, n, 8), ops=('aten.gelu',)),\n"
        "]\n"
    )
    engine = Engine(Settings(backends=["tosa"], case_paths=[str(tmp_path)], default_cases=False))
    try:
        results = {r.case: r for r in engine.run([(c, "tosa") for c in ("relu.i32", "relu.i32.dynamic", "gelu.tanh.dynamic")])}
    finally:
        engine.close()
    static, dynamic = results["relu.i32"], results["relu.i32.dynamic"]
    assert (static.stage, static.code, static.op) == ("lower", "UNSUPPORTED_OP", "aten.relu"), static
    assert (dynamic.stage, dynamic.code, dynamic.op) == (static.stage, static.code, static.op), dynamic
    gelu = results["gelu.tanh.dynamic"]
    assert (gelu.stage, gelu.code, gelu.op) == ("lower", "DYNAMIC_SHAPE_UNSUPPORTED", "aten.gelu"), gelu
    assert "static twin (each dynamic dim made 2): lowers" in gelu.details
