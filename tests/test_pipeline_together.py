"""One torch-mlir pipeline run for several cases' modules (toolchain/mlir.py run_pipeline_together), on real torch-mlir.

Each copy must print exactly as the pipeline's run on that module alone
prints: the ONNX contract batches its cases this way, and what it hands on
must not depend on the batch a case was in.
"""

import pytest

from conformance.toolchain.mlir import PipelineError, run_pipeline, run_pipeline_together

CONTRACT = "builtin.module(torch-onnx-to-torch-backend-pipeline)"

TANH_PLUS = """
func.func @main(%arg0: !torch.vtensor<[3,4],f32> loc("x"), %arg1: !torch.vtensor<[3,4],f32> loc("y")) -> !torch.vtensor<[3,4],f32> attributes {torch.onnx_meta.opset_version = 20 : si64} {
  %0 = torch.vtensor.literal(dense<2.000000e+00> : tensor<f32>) : !torch.vtensor<[],f32> loc("two")
  %1 = torch.aten.tanh %arg0 : !torch.vtensor<[3,4],f32> -> !torch.vtensor<[3,4],f32> loc("Tanh_0")
  %2 = torch.aten.mul.Tensor %arg1, %0 : !torch.vtensor<[3,4],f32>, !torch.vtensor<[],f32> -> !torch.vtensor<[3,4],f32> loc("Mul_1")
  %int1 = torch.constant.int 1 loc("one")
  %3 = torch.aten.add.Tensor %1, %2, %int1 : !torch.vtensor<[3,4],f32>, !torch.vtensor<[3,4],f32>, !torch.int -> !torch.vtensor<[3,4],f32> loc("Add_2")
  return %3 : !torch.vtensor<[3,4],f32>
}
"""
# Its result type is refined by the shape library: the pass whose fixed cost batching saves.
UNREFINED_RELU = """
func.func @main(%arg0: !torch.vtensor<[2,3],f32> loc("x")) -> !torch.vtensor<*,f32> attributes {torch.onnx_meta.opset_version = 20 : si64} {
  %0 = torch.aten.relu %arg0 : !torch.vtensor<[2,3],f32> -> !torch.vtensor<*,f32> loc("Relu_0")
  return %0 : !torch.vtensor<*,f32>
}
"""
# A module attribute: not merged with the others, run alone.
WITH_ATTRIBUTES = """
module attributes {torch.debug_module_name = "Neg"} {
  func.func @forward(%arg0: !torch.vtensor<[5],f32>) -> !torch.vtensor<[5],f32> attributes {torch.onnx_meta.opset_version = 20 : si64} {
    %0 = torch.aten.neg %arg0 : !torch.vtensor<[5],f32> -> !torch.vtensor<[5],f32>
    return %0 : !torch.vtensor<[5],f32>
  }
}
"""


def _modules(*texts):
    """Each text parsed into a context of its own, as each case's import makes it."""
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_dialect

    modules = []
    for text in texts:
        context = ir.Context()
        torch_dialect.register_dialect(context)
        with context:
            modules.append(ir.Module.parse(text).operation)
    return modules


def _alone(text, pipeline=CONTRACT):
    (module,) = _modules(text)
    run_pipeline(module, pipeline)
    return module.get_asm(enable_debug_info=True)


def test_each_module_of_a_joint_run_prints_as_its_run_alone_does():
    texts = [TANH_PLUS, UNREFINED_RELU, WITH_ATTRIBUTES, TANH_PLUS]
    inputs = _modules(*texts)
    before = [m.get_asm(enable_debug_info=True) for m in inputs]
    together = run_pipeline_together(inputs, CONTRACT)
    assert [m.get_asm(enable_debug_info=True) for m in together] == [_alone(t) for t in texts]
    # The pipeline ran: the relu's result type was refined, and the names are the cases' own again.
    relu = together[1].get_asm()
    assert "!torch.vtensor<[2,3],f32>" in relu.split("->")[-1] and "@main(" in relu
    assert "@forward(" in together[2].get_asm() and "torch.debug_module_name" in together[2].get_asm()
    assert [m.get_asm(enable_debug_info=True) for m in inputs] == before  # the inputs are left as they were


def test_a_joint_run_that_fails_raises_the_pipelines_error():
    verify = "builtin.module(torch-verify-backend-contract-no-decompositions)"
    unrefined = UNREFINED_RELU  # a result of unknown shape breaks the backend contract
    with pytest.raises(PipelineError) as failure:
        run_pipeline_together(_modules(TANH_PLUS, unrefined, TANH_PLUS), verify)
    assert "Relu_0" in failure.value.diagnostics or "backend contract" in failure.value.diagnostics
    # Alone, the others pass that check: the caller splits the batch to find its guilty member.
    assert "torch.aten.tanh" in _alone(TANH_PLUS, verify)
