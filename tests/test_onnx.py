"""The ONNX path's own logic: graphs it takes, node names, the onnx-node suite's cases, the case format."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper

from conformance.backends.protocol import Backend
from conformance.cases.sources import onnx_node
from conformance.cases.spec import Case, CaseError, CaseUnavailable, Exact, Stored
from conformance.compare import compare
from conformance.onnx_graph import nodes
from conformance.toolchain import onnx as frontend
from tests.fixtures.onnx_cases.cases import ABS, CAST_I4, X, model, value


def test_unnamed_nodes_are_named_by_op_type_and_place_subgraphs_included():
    then = helper.make_graph([helper.make_node("Neg", ["x"], ["t"])], "then", [], [value("t", TensorProto.FLOAT, [2])])
    orelse = helper.make_graph([helper.make_node("Abs", ["x"], ["e"], name="kept")], "else", [], [value("e", TensorProto.FLOAT, [2])])
    proto = model(
        [helper.make_node("Relu", ["x"], ["Relu_0"]), helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=orelse)],
        [value("x", TensorProto.FLOAT, [2]), value("c", TensorProto.BOOL, [])],
        [value("y", TensorProto.FLOAT, [2])],
    )
    named = frontend.with_node_names(proto)
    # onnx.helper sorts a node's attributes: else_branch comes before then_branch.
    assert [n.name for n in nodes(named.graph)] == ["Relu_0", "If_1", "kept", "Neg_3"]
    assert [n.name for n in nodes(proto.graph)] == ["", "", "kept", ""]  # the case's own model is left alone
    assert frontend.with_node_names(named) is named


SEQUENCE = helper.make_value_info("s", helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2])))


@pytest.mark.parametrize(
    "inputs, initializers, reason",
    [
        ([SEQUENCE], [], "graph input 's' is sequence<tensor<FLOAT>>: torch-mlir's backend contract and IREE's functions take tensors only"),
        ([value("x", TensorProto.STRING, [2])], [], "graph input 'x' is tensor<STRING>: no torch-mlir lowering takes strings"),
        ([value("x", TensorProto.FLOAT4E2M1, [2])], [], "graph input 'x' is tensor<FLOAT4E2M1>: torch-mlir's ONNX importer has no MLIR type for FLOAT4E2M1"),
        (
            [value("x", TensorProto.FLOAT, [2])],
            [helper.make_tensor("w", TensorProto.INT2, [2], [1, -1])],
            "initializer 'w' is tensor<INT2>: torch-mlir's ONNX importer has no MLIR type for INT2",
        ),
    ],
)
def test_graphs_no_torch_mlir_backend_takes_are_skipped_with_the_reason(inputs, initializers, reason):
    proto = model([helper.make_node("Identity", [inputs[0].name], ["y"])], inputs, [value("y", TensorProto.FLOAT, [2])], initializers)
    assert frontend.unsupported_graph(proto).startswith(reason)


def test_tensors_and_optional_tensors_are_taken_and_int4_is_compiled_but_not_run():
    optional = helper.make_value_info("o", helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.INT32, [])))
    proto = model([helper.make_node("OptionalGetElement", ["o"], ["y"])], [optional], [value("y", TensorProto.INT32, [])])
    assert frontend.unsupported_graph(proto) is None and frontend.unsupported_graph(ABS) is None
    assert frontend.unsupported_graph(CAST_I4) is None
    assert frontend.unrunnable_graph(CAST_I4) == (
        "graph input 'x' is tensor<INT4>: IREE's Python runtime cannot pass int4 or uint4 buffers (compiled, not run)"
    )
    assert frontend.unrunnable_graph(ABS) is None


def test_unsigned_results_are_read_as_the_reference_dtype_from_the_same_bytes():
    came_back = torch.tensor([-6, 3], dtype=torch.int8)  # IREE's signless i8 holding 250 and 3
    read = frontend.read_as_reference((came_back, came_back.clone()), (torch.tensor([250, 3], dtype=torch.uint8), torch.tensor([1, 2], dtype=torch.int8)))
    assert read[0].dtype == torch.uint8 and read[0].tolist() == [250, 3]
    assert read[1].dtype == torch.int8  # a signed reference: nothing to reinterpret
    wider = frontend.read_as_reference(torch.tensor([1], dtype=torch.int32), torch.tensor([1], dtype=torch.uint8))
    assert wider.dtype == torch.int32  # another width is a real difference, for the comparison to report


def test_an_onnx_case_needs_a_stored_reference_and_backends_take_only_their_formats():
    with pytest.raises(CaseError, match="an onnx model has no eager PyTorch to compare with"):
        Case(id="bare", build=lambda: ABS, inputs=(), format="onnx")
    with pytest.raises(CaseError, match="format 'tflite' is not one of"):
        Case(id="other", build=lambda: ABS, inputs=(), format="tflite")
    case = Case(id="c", build=lambda: ABS, inputs=(), exact=Exact(lambda: [[X]]), reference=Stored(lambda: [X.abs()]), format="onnx")

    class TorchOnly(Backend):
        name = "torch-only"

    assert TorchOnly().not_applicable(case) == "torch-only does not take onnx cases (it takes torch)"
    assert frontend.OnnxFrontend().not_applicable(case) is None


def test_a_stored_draw_is_judged_on_structure_dtype_and_shape_only():
    draw = torch.tensor([1.0, 0.0, 1.0])
    assert compare(draw, 1 - draw, values=False) is None
    assert compare(draw, (1 - draw).double(), values=False).code == "DTYPE_MISMATCH"
    assert compare(draw, draw[:2], values=False).code == "SHAPE_MISMATCH"
    assert compare(draw, 1 - draw).code == "NUMERIC_MISMATCH"


# -- the onnx-node suite -------------------------------------------------------------


def node_test(name, proto, inputs, outputs, **kw):
    return onnx_node.NodeTest(
        name=name,
        model=proto.SerializeToString(),
        input_names=kw.get("input_names") or tuple(v.name for v in proto.graph.input),
        output_names=tuple(v.name for v in proto.graph.output),
        data_sets=((tuple(inputs), tuple(outputs)),),
        rtol=kw.get("rtol", 1e-3),
        atol=kw.get("atol", 1e-7),
    )


def test_data_set_values_become_tensors_those_pytorch_lacks_in_a_dtype_holding_them_exactly():
    import ml_dtypes

    from onnx import numpy_helper

    int4 = np.array([-8, 7], dtype=ml_dtypes.int4)
    fp8 = numpy_helper.to_array(helper.make_tensor("f", TensorProto.FLOAT8E4M3FN, [2], [0.5, -448.0]))
    bf16 = onnx_node._plain(helper.make_tensor("b", TensorProto.BFLOAT16, [2], [1.5, -2.0]))
    scalar = onnx_node._plain(np.float32(2.5))
    test = node_test("test_values", ABS, [int4, fp8, bf16, scalar], [], input_names=("a", "b", "c", "d"))
    tensors = onnx_node.input_sets(test)[0]
    assert [t.dtype for t in tensors] == [torch.int8, torch.float8_e4m3fn, torch.bfloat16, torch.float32]
    assert tensors[0].tolist() == [-8, 7] and tensors[1].float().tolist() == [0.5, -448.0]
    assert tensors[2].float().tolist() == [1.5, -2.0] and tensors[3].shape == ()  # a NumPy scalar stays 0-d


@pytest.mark.parametrize(
    "value, reason",
    [
        (None, "input 'x' is an empty optional: the case API passes tensors only"),
        ([np.zeros(2, np.float32)] * 3, "input 'x' is a sequence of 3 tensors: the case API passes tensors only"),
        (np.array(["a", "b"], dtype=object), "input 'x' holds strings: no PyTorch tensor can"),
    ],
)
def test_a_value_no_tensor_can_hold_makes_the_case_a_skip_when_loaded(value, reason):
    with pytest.raises(CaseUnavailable, match=reason) as raised:
        onnx_node.input_sets(node_test("test_x", ABS, [value], []))
    assert raised.value.skip


def test_suite_cases_carry_the_tests_tolerances_ops_and_how_their_outputs_are_judged(monkeypatch):
    bf16_out = model([helper.make_node("Abs", ["x"], ["y"])], [value("x", TensorProto.BFLOAT16, [2])], [value("y", TensorProto.BFLOAT16, [2])])
    expanded = model(
        [helper.make_node("Constant", [], ["c"], value_float=1.0), helper.make_node("Neg", ["x"], ["y"])],
        [value("x", TensorProto.FLOAT, [2, 3])],
        [value("y", TensorProto.FLOAT, [2, 3])],
    )
    draw = model([helper.make_node("Bernoulli", ["x"], ["y"])], [value("x", TensorProto.FLOAT, [2])], [value("y", TensorProto.FLOAT, [2])], opset=15)
    x = np.ones((2, 3), np.float32)
    tests = [
        node_test("test_abs", ABS, [x], [x]),
        node_test("test_abs_expanded", expanded, [x], [x]),
        node_test("test_abs_bf16", bf16_out, [np.ones(2, np.float32)], [np.ones(2, np.float32)]),
        node_test("test_bernoulli", draw, [np.ones(2, np.float32)], [np.ones(2, np.float32)]),
    ]
    monkeypatch.setattr(onnx_node, "load_tests", lambda: tests)
    cases = {c.id: c for c in onnx_node.cases()}
    abs_, expanded_case, bf16, bernoulli = (cases[f"onnx-node:{t.name}"] for t in tests)
    assert (abs_.format, abs_.family, abs_.kind, abs_.ops, abs_.tags) == ("onnx", "onnx-node", "op", ("onnx.Abs",), {"onnx"})
    assert (abs_.rtol, abs_.atol, abs_.reference.label) == (1e-3, 1e-7, "expected (ONNX test data)")
    assert (expanded_case.ops, expanded_case.tags) == (("onnx.Abs",), {"onnx", "expanded"})  # its op under test, not the body's
    assert bf16.rtol == 2**-6  # ONNX's runner: two bfloat16 ulps at least
    assert bernoulli.nondeterministic and bernoulli.reference.draws and not abs_.reference.draws
    assert abs_.describe_inputs() == "float32[2, 3]"
    assert torch.equal(abs_.exact.load()[0][0], torch.ones(2, 3)) and torch.equal(abs_.reference.outputs()[0], torch.ones(2, 3))


def test_the_suite_is_built_once_then_read_from_the_cache_and_rebuilt_when_unreadable(monkeypatch, tmp_path):
    built = []
    tests = [node_test("test_abs", ABS, [np.ones((2, 3), np.float32)], [np.ones((2, 3), np.float32)])]
    monkeypatch.setattr(onnx_node, "build_tests", lambda: built.append(1) or tests)
    monkeypatch.setenv("CONFORMANCE_CACHE", str(tmp_path))
    load = onnx_node.load_tests.__wrapped__  # without the per-process memo
    names = lambda loaded: [t.name for t in loaded]  # noqa: E731
    assert names(load()) == names(load()) == ["test_abs"] and len(built) == 1
    onnx_node.cache_path().write_bytes(b"torn")
    assert names(load()) == ["test_abs"] and len(built) == 2
    assert onnx_node.cache_path().parent == tmp_path / "suites"


def test_complex_values_cross_as_the_real_tensors_torch_onnx_writes_them_as(tmp_path):
    z = torch.complex(torch.tensor([1.0, -2.0]), torch.tensor([0.5, 3.0]))
    assert frontend.complex_as_real(z).shape == (2, 2) and frontend.complex_as_real(X) is X
    # An empty result may come back with any strides (it counts as contiguous): these view_as_complex refuses.
    came_back = (torch.view_as_real(z * 2).clone(), torch.empty_strided((0, 3, 2), (6, 2, 2)))
    read = frontend.read_as_reference(came_back, (z * 2, torch.ones(0, 3, dtype=torch.complex64)))
    assert torch.equal(read[0], z * 2) and read[1].dtype == torch.complex64 and read[1].shape == (0, 3)
    # Where the shapes do not pair up (no trailing 2) the value is left for the comparison to report.
    assert frontend.read_as_reference(torch.ones(2, 3), z).shape == (2, 3)


def test_a_replay_feeds_iree_run_module_the_real_tensors_the_model_takes(tmp_path):
    from conformance.backends.loader import resolve
    from conformance.backends.protocol import CaseRun
    from conformance.toolchain.iree import COMPILE_INPUT

    z = torch.complex(torch.tensor([1.0, -2.0]), torch.tensor([0.5, 3.0]))
    case = Case(id="c", build=torch.nn.Identity, inputs=(), exact=Exact(lambda: [[z, X]]))
    run = CaseRun(case, torch.nn.Identity(), [[z, X]], [(z * 2, X)], tmp_path)
    run.notes[COMPILE_INPUT] = tmp_path / "compile-input.mlir"
    replay = resolve("onnx-linalg")._replay(run, "module.vmfb")
    command = replay.commands[1]
    assert "--input=@module-inputs/set0/0.npy" in command and "--input=@inputs/set0/1.npy" in command
    assert "--expected_output=@module-expected/set0/0.npy" in command and "--expected_output=@expected/set0/1.npy" in command
    for name in ("module-inputs/set0/0.npy", "module-expected/set0/0.npy"):
        replay.files[name](tmp_path / name)
    assert np.array_equal(np.load(tmp_path / "module-inputs/set0/0.npy"), torch.view_as_real(z).numpy())
    assert np.load(tmp_path / "module-expected/set0/0.npy").shape == (2, 2)
