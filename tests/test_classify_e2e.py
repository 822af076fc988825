"""Classification end to end, with real tools: a type-refinement bug, unsupported ops, toolchain skew."""

import subprocess

from conformance.classify import classify_error
from conformance.execution.engine import Engine
from conformance.settings import Settings
from conformance.toolchain.iree import TARGET_FLAGS, iree_compile
from conformance.toolchain.tools import ToolError
from tests.conftest import FIXTURES, fake


def test_a_declared_type_that_disagrees_with_eager_is_type_refinement():
    engine = Engine(Settings(backends=[fake("MISTYPED")], case_paths=[str(FIXTURES / "cases")], default_cases=False))
    try:
        result = next(engine.run([("tanh", "mistyped")]))
    finally:
        engine.close()
    assert (result.status, result.stage, result.code, result.op) == ("fail", "contract", "TYPE_REFINEMENT", "aten.tanh"), result
    assert result.explanation.startswith("output 0: IR says f64[3,4], eager gives f32[3,4] (result of aten.tanh)")


def test_pretty_tosa_handed_to_iree_is_toolchain_skew(tmp_path):
    # IREE 3.13's MLIR is another build than torch-mlir's: it cannot parse
    # torch-mlir's pretty-printed TOSA (hence the generic form in the tosa backend).
    import torch
    from torch_mlir import fx

    class AddBroadcast(torch.nn.Module):
        def forward(self, x, y):
            return x + y

    module = fx.export_and_import(AddBroadcast(), torch.randn(3, 4), torch.randn(4), output_type="tosa")
    source = tmp_path / "pretty.mlir"
    source.write_text(str(module))
    proc = subprocess.run(
        [iree_compile(), str(source), "--iree-input-type=tosa", *TARGET_FLAGS, "-o", str(tmp_path / "m.vmfb")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    found = classify_error("compile", ToolError("iree-compile", proc.returncode, proc.stderr))
    assert found.code == "TOOLCHAIN_SKEW", (found, proc.stderr[:500])
    assert "cannot parse the IR torch-mlir printed" in found.explanation
    assert "custom op 'tosa.const_shape' expected 'values'" in found.explanation


def test_torch_mlir_s_own_compiler_error_is_classified_from_the_diagnostics_it_printed(capfd):
    # torch_mlir.fx.export_and_import(output_type="tosa") runs the pipeline itself: the error it raises
    # names the pipeline (in its reproducer) and MLIR prints the diagnostics on stderr.
    import torch
    from torch_mlir import fx

    class Acos(torch.nn.Module):
        def forward(self, x):
            return torch.acos(x)

    try:
        fx.export_and_import(Acos(), torch.rand(3, 4), output_type="tosa")
    except Exception as e:
        error = e
    printed = capfd.readouterr()
    found = classify_error("lower", error, printed.out + printed.err)
    assert (found.code, found.op) == ("UNSUPPORTED_OP", "aten.acos"), found
    assert found.explanation == (
        "torch-mlir cannot lower aten.acos to tosa (failed to legalize operation 'torch.aten.acos' that was explicitly marked illegal)"
    )


def test_an_fx_importer_assertion_names_the_node_and_its_op():
    """torch-mlir's importer asserts without saying where; the node it was importing is named, and its op blamed."""
    engine = Engine(Settings(backends=["linalg"], case_paths=[str(FIXTURES / "importer")], default_cases=False, cache_dir=None))
    try:
        result = next(engine.run([("index_by_buffer", "linalg")]))
    finally:
        engine.close()
    assert (result.stage, result.code, result.op) == ("import", "UNSUPPORTED_OP", "aten.index.Tensor"), result
    assert result.explanation.startswith("torch-mlir's FX importer cannot import aten.index.Tensor as the graph uses it (node index): "
                                         "AssertionError: Heterogeneous lists are not supported"), result.explanation


def test_an_op_reported_through_its_tensor_literal_is_named():
    # OpInfo's combinations samples export masked_select with a constant boolean mask: the linalg
    # conversion cannot take masked_select (its output size depends on the data), and MLIR names the
    # first illegal op it meets, the mask's torch.vtensor.literal, which lowers fine on its own.
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_dialect

    from conformance.toolchain.mlir import PipelineError, run_pipeline
    from conformance.toolchain.torch_mlir import with_unconverted_ops

    text = """
    func.func @main(%arg0: !torch.vtensor<[1],f32>) -> !torch.vtensor<[?],f32> {
      %0 = torch.vtensor.literal(dense<true> : tensor<1xi1>) : !torch.vtensor<[1],i1>
      %1 = torch.aten.masked_select %arg0, %0 : !torch.vtensor<[1],f32>, !torch.vtensor<[1],i1> -> !torch.vtensor<[?],f32>
      return %1 : !torch.vtensor<[?],f32>
    }"""
    with ir.Context() as context:
        torch_dialect.register_dialect(context)
        module = ir.Module.parse(text)
        try:
            run_pipeline(module.operation, "builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)")
        except PipelineError as e:
            error = with_unconverted_ops(e, module.operation)
        else:
            raise AssertionError("torch-mlir lowered masked_select to linalg: this test checks nothing now")
    assert "failed to legalize operation 'torch.vtensor.literal'" in error.diagnostics
    found = classify_error("lower", error)
    assert (found.code, found.op) == ("UNSUPPORTED_OP", "aten.masked_select"), found
    assert found.explanation.startswith("torch-mlir cannot lower aten.masked_select to linalg-on-tensors"), found.explanation


def test_an_output_iree_s_python_runtime_cannot_map_to_numpy_is_a_runtime_error_not_unknown():
    # OpInfo's chalf samples compile on linalg; reading their complex<f16> output back raises this in
    # iree.runtime's array_interop (numpy has no complex32).
    from conformance.classify import classify_text

    found = classify_text("run", "ValueError: Unsupported VM Buffer -> numpy dtype mapping\n\nTraceback ...")
    assert (found.code, found.op) == ("RUNTIME_ERROR", None), found
    assert "no NumPy dtype" in found.explanation
