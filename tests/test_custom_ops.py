"""The custom-op contract and the tosa-custom / tosa-selective backends, on the real toolchain.

Contract round trips are pure Python; everything else runs torch.export,
torch-mlir's importer and pass pipelines, the MLIR verifier, TOSA's
validation, the interpreter, and for the selective mode IREE.
"""

from __future__ import annotations

import json
import math
import struct
import sys
import warnings
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from conformance.backends.protocol import CaseRun, StageFailure
from conformance.custom_ops import audit, constants, contract, convert, interpreter, verify
from conformance.custom_ops.contract import Arg, ContractError, Empty, TensorRef
from conformance.custom_ops.encode import Unconvertible
from conformance.custom_ops.reasons import EXPLANATIONS, Reason, explain
from conformance.toolchain.mlir import walk
from tests.conftest import FIXTURES

CUSTOM_CASES = FIXTURES / "custom_ops"

# -- the contract's values: every kind round-trips through JSON text ----------------------------

VALUES = {
    "tensor list (aten.cat)": [TensorRef(0), TensorRef(1), TensorRef(0)],
    "optional tensors, one None (aten.index)": [None, TensorRef(1)],
    "negative dims": [0, -1, -3],
    "int64 extremes": [2**63 - 1, -(2**63)],
    "inf": math.inf,
    "-inf": -math.inf,
    "eps": 1e-05,
    "0.1": 0.1,
    "-0.0": -0.0,
    "denormal": 5e-324,
    "max double": sys.float_info.max,
    "true": True,
    "false": False,
    "approximate=tanh": "tanh",
    "empty string": "",
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "bool dtype": torch.bool,
    "layout": torch.strided,
    "memory format": torch.channels_last,
    "none": None,
    "empty tensor": Empty((0, 4), torch.float32),
    "nested lists": [[1, 2], [], [3.5]],
}


def _same(a, b) -> bool:
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):  # bit for bit: -0.0 and the last digit count
        return isinstance(b, float) and struct.pack("<d", a) == struct.pack("<d", b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("value", list(VALUES.values()), ids=list(VALUES))
def test_every_value_round_trips_through_json_text(value):
    text = json.dumps(contract.encode_value(value), allow_nan=False)
    assert _same(contract.decode_value(json.loads(text)), value), text


def test_nan_is_spelt_out_and_comes_back_nan():
    encoded = contract.encode_value(math.nan)
    assert encoded == {"float": "nan"}
    assert math.isnan(contract.decode_value(json.loads(json.dumps(encoded))))


def test_random_doubles_round_trip_exactly():
    generator = torch.Generator().manual_seed(0)
    doubles = (torch.randn(2000, dtype=torch.float64, generator=generator) * 10 ** torch.randint(-300, 300, (2000,), generator=generator).double()).tolist()
    text = contract.encode([Arg("x", doubles)], [TensorRef(0)])
    back = contract.decode(text).args[0].value
    assert all(struct.pack("<d", a) == struct.pack("<d", b) for a, b in zip(doubles, back))


def test_bools_and_ints_keep_their_kind():
    assert contract.decode_value({"bool": True}) is True
    one = contract.decode_value({"int": 1})
    assert one == 1 and type(one) is int


def test_a_whole_call_decodes_and_calls_the_op_again():
    x = torch.randn(3, 4, 5)
    attrs = contract.encode(
        [Arg("self", TensorRef(0)), Arg("dim", [0, -1]), Arg("keepdim", True), Arg("dtype", torch.float64, keyword=True)],
        [TensorRef(0)],
    )
    call = contract.decode(attrs)
    assert [a.name for a in call.args] == ["self", "dim", "keepdim", "dtype"] and call.args[3].keyword
    positional, keywords = contract.bind(call, [x])
    assert keywords == {"dtype": torch.float64} and positional[1:] == [[0, -1], True]
    (out,) = contract.call_op("aten.sum.dim_IntList", attrs, [x])
    assert torch.equal(out, x.sum(dim=[0, -1], keepdim=True, dtype=torch.float64))


def test_results_are_laid_out_in_output_list_order():
    x = torch.randn(4, 6)
    # max.dim returns (values, indices); declared as output_list[1] and output_list[0]
    two = contract.encode([Arg("self", TensorRef(0)), Arg("dim", 1), Arg("keepdim", False)], [TensorRef(1), TensorRef(0)])
    first, second = contract.call_op("aten.max.dim", two, [x])
    assert torch.equal(first, x.max(1).indices) and torch.equal(second, x.max(1).values)
    split = contract.encode([Arg("self", TensorRef(0)), Arg("split_size", 2), Arg("dim", 1)], [[TensorRef(0), TensorRef(1), TensorRef(2)]])
    parts = contract.call_op("aten.split.Tensor", split, [x])
    assert [p.shape for p in parts] == [torch.Size([4, 2])] * 3
    # An empty result is checked, not passed on.
    empty_result = contract.encode([Arg("self", TensorRef(0)), Arg("dim", 1)], [[TensorRef(0), Empty((4, 0), torch.float32)]])
    with pytest.raises(ContractError, match="declared"):
        contract.call_op("aten.split.Tensor", empty_result, [x])


@pytest.mark.parametrize(
    "text, words",
    [
        ('{"version":1,"args":[{"name":"a","float":NaN}],"results":[]}', "non-finite"),
        ('{"version":2,"args":[],"results":[]}', "version 2"),
        ('{"version":1,"results":[]}', "'args' and 'results'"),
        ('{"version":1,"args":[{"name":"a","int":1,"bool":true}],"results":[]}', "exactly one of the tags"),
        ('{"version":1,"args":[{"name":"a","device":"cpu"}],"results":[]}', "exactly one of the tags"),
        ('{"version":1,"args":[{"name":"a","float":"infinity"}],"results":[]}', "spelt as strings"),
        ('{"version":1,"args":[{"name":"a","dtype":"floaty"}],"results":[]}', "not a torch dtype"),
        ('{"version":1,"args":[{"name":"a","empty":{"shape":[2],"dtype":"float32"}}],"results":[]}', "no zero-sized"),
        ('{"version":1,"args":[{"int":1}],"results":[]}', "has no name"),
        ("not json", "not JSON"),
    ],
)
def test_malformed_attributes_are_refused_with_the_reason(text, words):
    with pytest.raises(ContractError, match=words):
        contract.decode(text)


def test_a_tensor_index_beyond_input_list_is_refused():
    attrs = contract.encode([Arg("self", TensorRef(1))], [TensorRef(0)])
    with pytest.raises(ContractError, match="out of range"):
        contract.call_op("aten.neg.default", attrs, [torch.ones(2)])


# -- the conversion on real torch-mlir IR ----------------------------------------------------------


def _import(fn, *args):
    from conformance.custom_ops.backend import TosaCustomBackend

    class Fn(nn.Module):
        def forward(self, *a):
            return fn(*a)

    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        program = torch.export.export(Fn(), args, strict=False)
    run = CaseRun(None, None, [list(args)], [], Path("."))
    return TosaCustomBackend().import_(program, run)


def _customs(module) -> dict[str, list]:
    found: dict[str, list] = {}
    for op in verify.custom_ops(module):
        a = op.attributes
        found.setdefault(a["operator_name"].value, []).append((contract.decode(a["implementation_attrs"].value), op))
    return found


def _edge_cases(x, y):
    return (
        torch.cat([x, y, x], dim=-1),
        F.gelu(x, approximate="tanh"),
        x.sum(dim=[0, -1], keepdim=True, dtype=torch.float32),
        torch.topk(x, 2),
        torch.split(x, 2, dim=1),
        torch.clamp(x, min=float("-inf"), max=0.25),
        x[:, torch.tensor([0, 2])],  # a lifted int64 constant: a tosa.const
        x.to(torch.float16),
    )


def test_every_op_becomes_a_custom_op_holding_all_of_its_arguments():
    x, y = torch.randn(3, 4), torch.randn(3, 2)
    module, fates = convert.to_custom_module(_import(_edge_cases, x, y))
    assert module is not None, fates.summary()
    converted = [op for op, fate in fates.status.items() if fate == "converted"]
    assert verify.verify(module, only_custom=True)["tosa.custom"] == len(converted) >= 8
    ops = _customs(module)

    (cat, op), = ops["aten.cat.default"]
    assert cat.args[0].value == [TensorRef(0), TensorRef(1), TensorRef(2)] and cat.args[1].value == -1
    assert len(op.operands) == 3 and op.operands[0] == op.operands[2]  # x twice: one entry per occurrence
    (gelu, _), = ops["aten.gelu.default"]
    assert gelu.args[1] == Arg("approximate", "tanh", keyword=True)
    (total, _), = ops["aten.sum.dim_IntList"]
    assert [a.value for a in total.args[1:]] == [[0, -1], True, torch.float32]
    (topk, op), = ops["aten.topk.default"]
    assert topk.results == (TensorRef(0), TensorRef(1)) and [str(r.type) for r in op.results] == ["tensor<3x2xf32>", "tensor<3x2xi64>"]
    (split, op), = ops["aten.split.Tensor"]
    assert split.results == ([TensorRef(0), TensorRef(1)],) and len(op.results) == 2
    (clamp, _), = ops["aten.clamp.default"]
    assert clamp.args[1].value == -math.inf and clamp.args[2].value == 0.25
    (index, op), = ops["aten.index.Tensor"]
    assert index.args[1].value == [None, TensorRef(1)] and str(op.operands[1].type) == "tensor<2xi64>"
    consts = [o for o in module.body.operations[0].regions[0].blocks[0].operations if o.name == "tosa.const"]
    assert [str(c.result.type) for c in consts] == ["tensor<2xi64>"]  # the si64 literal, made signless
    # torch.tensor(...) in the graph is copied (lift_fresh_copy): the graph is functionalized, .to is _to_copy
    (to, _), = ops["aten._to_copy.default"]
    assert {a.name: a.value for a in to.args}["dtype"] is torch.float16
    assert fates.status["aten._assert_tensor_metadata.default"] == "erased-assertion"

    outputs = interpreter.interpret(module, [x, y])
    expected = [t for r in _edge_cases(x, y) for t in (r if isinstance(r, tuple) else (r,))]
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        assert got.dtype == want.dtype and torch.equal(got, want)


def test_the_interpreter_obeys_the_attributes_not_the_torch_ir():
    from torch_mlir import ir

    x = torch.randn(64)
    module, _ = convert.to_custom_module(_import(lambda t: F.gelu(t, approximate="tanh"), x))
    (op,) = verify.custom_ops(module)
    tanh = interpreter.interpret(module, [x])[0]
    with module.context:
        text = op.attributes["implementation_attrs"].value.replace('"str":"tanh"', '"str":"none"')
        op.attributes["implementation_attrs"] = ir.StringAttr.get(text)
    exact = interpreter.interpret(module, [x])[0]
    assert torch.equal(tanh, F.gelu(x, approximate="tanh")) and torch.equal(exact, F.gelu(x))
    assert not torch.equal(tanh, exact)


def test_the_interpreter_and_verify_refuse_what_is_not_the_contract():
    from torch_mlir import ir

    torch_ir = _import(torch.tanh, torch.randn(3))
    with pytest.raises(StageFailure, match=r"torch dialect left after conversion: type !torch.vtensor<\[3\],f32>"):
        verify.verify(torch_ir, only_custom=True)
    with ir.Context():
        plain_tosa = ir.Module.parse(
            "func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
            "  %0 = tosa.abs %a : (tensor<3xf32>) -> tensor<3xf32>\n  return %0 : tensor<3xf32>\n}"
        )
        with pytest.raises(interpreter.InterpreterError, match="not tosa.abs"):
            interpreter.interpret(plain_tosa, [torch.randn(3)])
        with pytest.raises(StageFailure, match="tosa.abs is in the module"):
            verify.verify(plain_tosa, only_custom=True)
        wrong = ir.Module.parse(
            "func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
            '  %0 = tosa.custom %a {domain_name = "torch", operator_name = "aten.add.Tensor", implementation_attrs = '
            '"{\\"version\\":1,\\"args\\":[{\\"name\\":\\"self\\",\\"tensor\\":0},{\\"name\\":\\"other\\",\\"tensor\\":1},'
            '{\\"name\\":\\"alpha\\",\\"int\\":1}],\\"results\\":[{\\"tensor\\":0}]}"} : (tensor<3xf32>) -> tensor<3xf32>\n'
            "  return %0 : tensor<3xf32>\n}"
        )
        with pytest.raises(StageFailure, match=r"refers to tensors \[0, 1\] but input_list has 1"):
            verify.verify(wrong, only_custom=True)


def test_an_unconvertible_op_is_named_with_its_reason_and_every_op_keeps_its_fate():
    module, fates = convert.to_custom_module(_import(lambda x: torch.arange(3) + torch.zeros(3) * x, torch.randn(3)))
    assert module is None
    assert fates.status == {
        "aten.arange.default": "device-argument",
        "aten.zeros.default": "device-argument",
        "aten.mul.Tensor": "converted",
        "aten.add.Tensor": "converted",
    }
    assert fates.summary().startswith(
        "aten.arange.default cannot become a tosa.custom (device-argument): its operand device is the device 'cpu'"
    )
    assert "also unconvertible: aten.zeros.default (device-argument)" in fates.summary()


def test_every_reason_kind_has_its_explanation_and_a_misspelt_kind_is_refused():
    assert [kind for kind in Reason if not EXPLANATIONS.get(kind)] == []
    assert "no explanation recorded" in explain("mutaton")
    assert all("no explanation recorded" not in explain(kind) for kind in Reason)
    assert Unconvertible("aten.x.default", "mutation", "it writes").kind is Reason.MUTATION
    with pytest.raises(ValueError, match="mutaton"):
        Unconvertible("aten.x.default", "mutaton", "it writes")


# -- through the framework: the registry's own machinery, a real child process ---------------------

PASSING = [
    "co.layer_norm",
    "co.cat.neg_dim",
    "co.conv2d.stride_pad",
    "co.sum.dim_list",
    "co.gelu.tanh",
    "co.index.none",
    "co.clamp.inf",
    "co.topk",
    "co.split",
    "co.to.f16",
    "co.full_like.bool",
    "co.batch_norm.inplace_relu",
    "mlp",
    "lenet5",
]
UNCONVERTIBLE = {
    # case: (stage, op blamed, kind)
    "co.zeros.device": ("convert", "aten.zeros.default", "device-argument"),
    "co.view.dynamic": ("convert", "aten.size.int", "non-tensor-result"),
    "co.exp.f64": ("convert", "aten.exp.default", "non-tosa-element-type"),
    "co.add.empty": ("convert", "@main result", "empty-tensor"),
    "co.lstm": ("import", "aten.lstm.input", "unimportable-weight-list"),
}


@pytest.fixture(scope="module")
def custom_results():
    """The tosa-custom Results of the fixture cases and the registry's mlp and lenet5, from one Engine."""
    from conformance.execution.engine import Engine
    from conformance.settings import Settings

    settings = Settings(backends=["tosa-custom"], case_paths=[str(CUSTOM_CASES)], case_timeout=120)
    engine = Engine(settings)
    try:
        return {r.case: r for r in engine.run([(c, "tosa-custom") for c in PASSING + list(UNCONVERTIBLE)])}
    finally:
        engine.close()


@pytest.mark.parametrize("case", PASSING)
def test_a_converted_case_passes_on_the_interpreter(custom_results, case):
    result = custom_results[case]
    assert result.passed, (result.stage, result.code, result.explanation)
    fates = result.extras["custom_ops"]
    assert set(fates.values()) <= {"converted", "erased-assertion", "folded-constant"}, fates
    assert result.extras["custom_op_count"] >= sum(1 for v in fates.values() if v == "converted") > 0
    assert set(result.timings) >= {"export", "import", "convert", "verify", "run"}


def test_what_the_passing_cases_went_through(custom_results):
    extras = {c: custom_results[c].extras for c in PASSING}
    assert extras["co.layer_norm"]["custom_ops"] == {"aten.layer_norm.default": "converted"}
    assert extras["co.conv2d.stride_pad"]["custom_ops"] == {"aten.conv2d.default": "converted"}
    assert extras["co.full_like.bool"]["custom_ops"]["aten.Int.bool"] == "folded-constant"
    assert extras["co.to.f16"]["custom_ops"]["aten._assert_tensor_metadata.default"] == "erased-assertion"
    # ReLU(inplace=True): functionalized, and batch norm's empty saved statistics are spelt, not dropped.
    bn = extras["co.batch_norm.inplace_relu"]
    assert bn["functionalized"] and bn["custom_ops"]["aten._native_batch_norm_legit_no_training.default"] == "converted"
    assert {"aten.linear.default", "aten.relu.default"} <= set(extras["mlp"]["custom_ops"])
    assert extras["lenet5"]["custom_op_count"] >= 10


@pytest.mark.parametrize("case", list(UNCONVERTIBLE))
def test_an_unconvertible_case_fails_with_the_op_and_the_reason(custom_results, case):
    stage, op, kind = UNCONVERTIBLE[case]
    result = custom_results[case]
    assert (result.status, result.stage, result.code, result.op) == ("fail", stage, "CUSTOM_OP_UNCONVERTIBLE", op)
    assert result.explanation.startswith(op) and f"({kind})" in result.explanation
    assert result.extras["custom_ops"][op] == kind  # recorded in the Result, not only said


def test_the_audit_tabulates_ops_and_explains_each_kind(custom_results, tmp_path, capsys):
    from conformance.cli.main import main

    table = audit.audit(custom_results.values())
    rows = {row[0]: dict(zip(table.headers, row)) for row in table.rows}
    assert rows["aten.zeros.default"]["unconvertible"] == 1 and rows["aten.zeros.default"]["converted"] == 0
    assert rows["aten.layer_norm.default"]["converted"] >= 1 and rows["aten.layer_norm.default"]["passed"] >= 1
    kinds = {k.kind: k for k in table.kinds}
    assert {"device-argument", "non-tensor-result", "runtime-scalar", "non-tosa-element-type", "empty-tensor"} <= set(kinds)
    assert "a TOSA program has no devices" in kinds["device-argument"].explanation
    assert kinds["device-argument"].example.startswith("aten.zeros.default cannot become a tosa.custom")
    assert table.totals["passed"] == len(PASSING)

    path = tmp_path / "results.jsonl"
    path.write_text("".join(r.to_json() + "\n" for r in custom_results.values()))
    assert main(["custom-audit", "--results", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{len(PASSING)} converted fully and passed" in out
    assert any(line.split()[:1] == ["aten.zeros.default"] and "device-argument (1)" in line for line in out.splitlines())
    assert "- runtime-scalar: an operand that must go into implementation_attrs" in out


def test_the_nightly_report_gets_the_audit_as_a_section(custom_results):
    section = audit.report_section(custom_results.values())
    assert section["title"] == "Custom-op audit (tosa-custom)"
    assert "| aten.zeros.default" in section["markdown"] and "device-argument (1)" in section["markdown"]
    assert "<td>aten.zeros.default</td>" in section["html"] and "<b>device-argument</b>" in section["html"]
    assert "&#x27;cpu&#x27;" in section["html"] and "'cpu'" not in section["html"]  # escaped
    assert audit.report_section(custom_results.values(), backend="tosa") is None  # nothing of that backend


def test_custom_audit_runs_the_cases_itself(capsys):
    from conformance.cli.main import main

    status = main(
        ["custom-audit", "--no-default-cases", "--cases", str(CUSTOM_CASES), "-k", "co.gelu or co.zeros", "-j", "1", "--json"]
    )
    assert status == 0
    data = json.loads(capsys.readouterr().out)
    ops = {row["op"]: row for row in data["ops"]}
    assert ops["aten.gelu.default"]["converted"] == 1 and ops["aten.zeros.default"]["unconvertible"] == 1
    assert data["totals"] == {"audited": 2, "passed": 1, "failed": 1, "unconvertible": 1}


# -- the selective mode (RFC #1519's own flow) ------------------------------------------------------


class SimpleModel(nn.Module):
    """The RFC's example."""

    def __init__(self):
        super().__init__()
        self.layernorm = nn.LayerNorm(normalized_shape=4)

    def forward(self, input_tensor):
        return self.layernorm(input_tensor)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm, self.up, self.down = nn.LayerNorm(8), nn.Linear(8, 16), nn.Linear(16, 8)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


def _selective(module, x, tmp_path, ops=None):
    """Run tosa-selective's stages by hand; (lowered module, output, eager output, the CaseRun)."""
    from conformance import T, model
    from conformance.custom_ops.selective import SelectiveBackend

    module = module.eval()
    with torch.no_grad():
        expected = module(x)
    case = model("selective.by_hand", lambda: module, T(*x.shape))
    run = CaseRun(case, module, [[x]], [expected], tmp_path, options={"custom_ops": ops} if ops else {})
    backend = SelectiveBackend()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = None
        for stage in backend.stages[:-1]:
            value = backend.run_stage(stage, value, run)
            if stage == "verify":
                lowered = value
    return lowered, backend.run(value, [x.clone()], run), expected, run


def test_selective_layer_norm_gives_the_rfc_ir_and_runs(tmp_path):
    torch.manual_seed(0)
    model = SimpleModel()
    with torch.no_grad():
        model.layernorm.weight.uniform_(0.5, 1.5)
        model.layernorm.bias.uniform_(-0.5, 0.5)
    lowered, output, expected, run = _selective(model, torch.randn(4, 4), tmp_path, ops=["aten.layer_norm"])

    names = sorted({op.name for op in walk(lowered.operation)})
    assert names == ["builtin.module", "func.func", "func.return", "tosa.const", "tosa.custom"], names
    (custom,) = verify.custom_ops(lowered)
    assert custom.attributes["domain_name"].value == "torch"
    assert custom.attributes["operator_name"].value == "aten.layer_norm.default"
    call = contract.decode(custom.attributes["implementation_attrs"].value)
    assert [(a.name, a.value) for a in call.args] == [
        ("input", TensorRef(0)),
        ("normalized_shape", [4]),
        ("weight", TensorRef(1)),
        ("bias", TensorRef(2)),
        ("eps", 1e-05),
        ("cudnn_enable", False),
    ]
    from torch_mlir import ir

    data, weight, bias = custom.operands
    assert isinstance(data.owner, ir.Block)  # the function's argument itself
    resources = constants.blobs(lowered.operation)
    assert weight.owner.name == bias.owner.name == "tosa.const"
    assert torch.equal(constants.to_tensor(weight.owner.attributes["values"], resources), model.layernorm.weight.detach())
    assert torch.equal(constants.to_tensor(bias.owner.attributes["values"], resources), model.layernorm.bias.detach())
    assert torch.allclose(output, expected, rtol=1e-5, atol=1e-6)
    assert run.extras["custom_ops"] == {"aten.layer_norm.default": "converted"}


def test_selective_default_ops_run_tosa_on_iree_and_custom_ops_on_aten(tmp_path):
    torch.manual_seed(0)
    lowered, output, expected, run = _selective(Block(), torch.randn(2, 5, 8), tmp_path)
    customs = [op.attributes["operator_name"].value for op in verify.custom_ops(lowered)]
    assert customs == ["aten.layer_norm.default", "aten.gelu.default"]
    tosa = {op.name for op in walk(lowered.operation) if op.name.startswith("tosa.")} - {"tosa.const", "tosa.custom"}
    assert {"tosa.matmul", "tosa.add"} <= tosa  # the linears and the residual: torch-mlir's own lowering
    assert (tmp_path / "segments.vmfb").exists()  # IREE compiled the TOSA segments
    assert torch.allclose(output, expected, rtol=1e-4, atol=1e-5)


def test_selective_from_pytest_as_a_user_runs_it(run_registry):
    run = run_registry(
        "--backend=tosa-selective", "--custom-ops=aten.layer_norm", "--no-xfail", "-k", "co.layer_norm or co.gelu.tanh", cases="custom_ops"
    )
    layer_norm, gelu = run.results["co.layer_norm[tosa-selective]"], run.results["co.gelu.tanh[tosa-selective]"]
    assert layer_norm["status"] == "pass" and gelu["status"] == "pass", run
    assert layer_norm["extras"]["custom_ops"] == {"aten.layer_norm.default": "converted"}
    assert layer_norm["extras"]["custom_op_count"] == 1
    assert gelu["extras"]["custom_op_count"] == 0  # not chosen: lowered by torch-mlir's TOSA pipeline


def test_selective_reads_uint8_results_as_eager_gives_them(run_registry):
    # The TOSA segments are signless: IREE hands uint8 back as int8, as for the tosa backend, which
    # reads them as eager's dtype; tosa-selective did not, so its u8 cases were DTYPE_MISMATCH.
    run = run_registry("--backend=tosa-selective", "--no-xfail", "--case=bitwise_and.u8", cases=None, default_cases=True)
    result = run.results["bitwise_and.u8[tosa-selective]"]
    assert result["status"] == "pass", result
