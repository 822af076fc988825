"""A numeric mismatch names its op, and says whether it is precision or a wrong answer.

A fake backend carries two planted bugs: a cumsum off by 50 times eager's
own float32 rounding (precision) and a remainder with C's sign convention
(a wrong answer). Each failure names its op, says which kind it is against
a float64 run of the same program, and the root-cause groups keep them
apart. The measurement itself is checked on tensors built for it.
"""

from __future__ import annotations

import pytest
import torch

from conformance.cases import registry as reg
from conformance.classify.op_under_test import op_under_test
from conformance.compare.precision import PRECISION, WRONG, judge
from conformance.execution.engine import Engine
from conformance.settings import Settings
from tests.conftest import FIXTURES, fake

SOURCE = FIXTURES / "numeric"


@pytest.fixture(scope="module")
def results():
    cases = reg.Registry.load(reg.discover([str(SOURCE)], default_dir=False, plugins=False))
    spec = fake("TWO_NUMERIC_BUGS")
    engine = Engine(Settings(backends=[spec], case_paths=[str(SOURCE)], default_cases=False, cache_dir=None, reruns=0))
    try:
        return {r.case: r for r in engine.run([(c.id, "two-numeric-bugs") for c in cases])}
    finally:
        engine.close()


@pytest.mark.parametrize("case", ["cumsum.long", "cumsum.rows"])
def test_a_planted_precision_bug_is_named_and_called_precision(results, case):
    result = results[case]
    assert (result.code, result.op) == ("NUMERIC_MISMATCH", "aten.cumsum"), result
    assert result.explanation.endswith(": precision"), result.explanation
    numeric = result.extras["numeric"]
    assert numeric["kind"] == PRECISION and 10 < numeric["factor"] <= 100  # 50x, give or take the rounding of the nudge
    assert 0 < numeric["mismatch_fraction"] <= 1 and numeric["sqnr_db"] > 60


@pytest.mark.parametrize("case", ["remainder.negative", "remainder.then_abs"])
def test_a_planted_wrong_answer_is_named_and_called_a_wrong_answer(results, case):
    result = results[case]
    assert (result.code, result.op) == ("NUMERIC_MISMATCH", "aten.remainder"), result
    assert result.explanation.endswith(": wrong answer"), result.explanation
    assert result.extras["numeric"]["factor"] > 1e5


# -- the measurement, on tensors made for it --------------------------------------------------


def test_another_summation_order_is_precision_and_a_sign_error_is_a_wrong_answer():
    g = torch.Generator().manual_seed(0)
    x = torch.rand(10000, generator=g)
    oracle = x.double().sum()
    eager = x.sum()
    pairwise_reversed = x.flip(0).reshape(100, 100).sum(1).sum()  # another order, the same float32
    found = judge(eager, pairwise_reversed, oracle)
    assert found.kind == PRECISION and found.factor < 100
    assert judge(eager, -eager, oracle).kind == WRONG


def test_a_backend_closer_to_float64_than_eager_is_precision_and_says_so():
    x = torch.linspace(-3, 3, 1000, dtype=torch.float16)
    oracle = torch.nn.functional.gelu(x.double())
    eager = torch.nn.functional.gelu(x)
    via_float32 = torch.nn.functional.gelu(x.float()).half()
    found = judge(eager, via_float32, oracle)
    assert found.kind == PRECISION
    assert found.factor < 1 and "closer to float64 than eager" in found.sentence(), found


def test_integer_results_are_wrong_unless_eager_too_differs_from_float64():
    oracle = torch.tensor([2, 3, 4, 5])
    eager = torch.tensor([2, 3, 4, 4])  # eager rounded a tie the other way
    assert judge(eager, torch.tensor([2, 3, 4, 5]), oracle).kind == PRECISION
    assert judge(eager, torch.tensor([2, 9, 4, 4]), oracle).kind == WRONG


def test_the_op_under_test_is_the_graph_s_only_op_else_the_declared_one():
    assert op_under_test(["aten.tanh.default", "aten._assert_tensor_metadata.default"], ["aten.tanh"]) == "aten.tanh"
    assert op_under_test(["aten.abs.default", "aten.add.Tensor", "aten.remainder.Tensor"], ["aten.remainder"]) == "aten.remainder.Tensor"
    assert op_under_test(["aten.abs.default", "aten.add.Tensor"], ["aten.remainder"]) is None  # decomposed away: not named
    assert op_under_test([], ["aten.cumsum"]) == "aten.cumsum"  # a backend that exports nothing: the declaration
    assert op_under_test(["aten.mm.default", "aten.relu.default"], []) is None  # a model: localize names it


# -- root causes: one bug one group, one group one bug ----------------------------------------


def test_two_numeric_bugs_are_two_groups(results):
    from conformance.report.triage import root_causes

    groups = root_causes(results.values())
    keys = sorted((g.op, g.kind, g.count) for g in groups)
    assert keys == [("aten.cumsum", "precision", 2), ("aten.remainder", "wrong answer", 2)], keys
    assert all(g.tool == "two-numeric-bugs" and g.stage == "compare" for g in groups)


def test_a_shared_tool_s_failure_is_one_group_across_the_backends_sharing_it():
    from conformance.backends import loader
    from conformance.report.triage import root_causes
    from conformance.result import TOOL, Result

    tosa, tosa_ref, onnx_tosa = (loader.resolve(n) for n in ("tosa", "tosa-ref", "onnx-tosa"))
    assert tosa.tool("lower") == tosa_ref.tool("lower") == onnx_tosa.tool("lower") == "torch-mlir tosa lowering"
    stablehlo, onnx_stablehlo = loader.resolve("stablehlo"), loader.resolve("onnx-stablehlo")
    assert stablehlo.tool("compile") == onnx_stablehlo.tool("compile") != tosa.tool("compile")
    assert tosa.tool("compare") != tosa_ref.tool("compare")  # another executor: not assumed to be the same bug
    assert tosa.tool("export") != onnx_tosa.tool("export")  # torch.export and torch.onnx's exporter

    def failure(case, backend, op="aten.size.int"):
        return Result(case, backend, "fail", stage="lower", code="DYNAMIC_SHAPE_UNSUPPORTED", op=op,
                      extras={TOOL: loader.resolve(backend).tool("lower")})

    results = [failure(f"c{i}", b) for i in range(3) for b in ("tosa", "tosa-ref", "onnx-tosa")]
    results += [failure("c0", "stablehlo"), failure("c9", "tosa", op="aten.cumsum")]
    groups = root_causes(results)
    assert [(g.op, g.count, g.backends) for g in groups] == [
        ("aten.size.int", 9, {"onnx-tosa": 3, "tosa": 3, "tosa-ref": 3}),
        ("aten.cumsum", 1, {"tosa": 1}),
        ("aten.size.int", 1, {"stablehlo": 1}),
    ]
