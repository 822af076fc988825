"""Localization: planted bugs in real models (tests/fake_localize_backends.py) are traced to their op and line.

The end-to-end tests run real model cases of the default registry through
the real engine (supervised children, the executor), so a planted crash is
a real SIGSEGV in a child; the unit tests check the search, the oracle, the
graph cutting and the case emitter on their own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conformance.cases.registry import Registry, directory_sources
from conformance.settings import Settings
from conformance.result import Result
from conformance.taxonomy import Status
from conformance.localize import emit, graph, inline, oracle
from conformance.localize.localizer import LocalizeError, localize
from conformance.localize.search import first_failing_cut, same_failure
from conformance.report.html.data import read_page
from conformance.result import Result
from conformance.taxonomy import Status

HERE = Path(__file__).parent
PLANTED = HERE / "fake_localize_backends.py"
FIXTURES = HERE / "fixtures" / "localize"  # a decoder with torch.no_grad() and autocast regions, a sin-cos chain


def planted(name: str) -> str:
    return f"{PLANTED}:{name}"


def cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli.main", *args], capture_output=True, text=True, cwd=cwd, timeout=1200)


def settings(tmp_path) -> Settings:
    return Settings(cache_dir=str(tmp_path / "cache"))


def fixture_settings(tmp_path, *cases: Path) -> Settings:
    return Settings(cache_dir=str(tmp_path / "cache"), case_paths=[str(c) for c in cases or [FIXTURES]], default_cases=False)


# -- end to end: a planted bug in a real model ----------------------------------


def test_a_numeric_bug_in_resnet18_is_traced_to_its_op_and_line(tmp_path):
    """Every ReLU 1e-2 too high: the op blamed is aten.relu_ at the model's line, its own error far above the noise floor."""
    proc = cli("localize", "resnet18", "--backend", planted("NUMERIC"), "--output-dir", str(tmp_path), "--json",
               "--cache-dir", str(tmp_path / "cache"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads(proc.stdout)
    assert (record["op"], record["node"], record["index"]) == ("aten.relu_", "relu_", 3)
    assert record["source"] == "cases/models/_resnet.py:92"  # x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
    assert record["module"] == "relu (ReLU)"
    own = record["own_error"]
    assert own["exceeds"] and own["own_abs"] == pytest.approx(1e-2, rel=1e-3) and own["noise_abs"] < 1e-6
    assert record["cuts_run"] <= 8  # about log2(69) + the check of the last one
    # The one-op case is a case like any other, whose inputs are eager's activations there.
    [case] = Registry.load(directory_sources(Path(record["case_file"]).parent)).select(keyword="relu_")
    assert case.ops == ("aten.relu_",) and case.exact is not None
    [[activation]] = case.exact.load()
    # batch_norm's output as relu_ received it: captured before the in-place op clipped it
    assert list(activation.shape) == [1, 64, 112, 112] and activation.min() < 0
    assert (Path(record["bundle"]) / "reproduce.sh").is_file()


def test_a_numeric_bug_in_a_real_lowering_names_the_mlir_op_it_became(tmp_path):
    """The real tosa backend with ReLU's tosa.clamp planted wrong: a wrong number names no op, the op's bundle does."""
    record = localize("mlp", planted("TOSA_BROKEN_RELU"), settings(tmp_path), tmp_path / "w")
    assert (record["op"], record["code"]) == ("aten.relu", "NUMERIC_MISMATCH")
    assert record["mlir_op"] == "tosa.clamp"


def test_propagated_error_is_blamed_on_the_op_that_made_it(tmp_path):
    """The mlp's first linear is off by 9e-5 relatively: within the model's tolerance there, so the first cut to
    fail is the second linear; alone, that one is exact and the first exceeds float32's tolerance: it is blamed.
    Run by `nightly --localize`, which records it in the result and both reports."""
    proc = cli("nightly", "-k", "mlp", "--backend", planted("DRIFT"), "--localize", "--no-xfail", "--output-dir", str(tmp_path),
               "--cache-dir", str(tmp_path / "cache"), "-j", "1", "--reruns", "0")
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    [report] = [p for p in tmp_path.iterdir() if (p / "results.jsonl").exists()]
    lines = [json.loads(line) for line in (report / "results.jsonl").read_text().splitlines()]
    record = lines[-1]["extras"]["localized"]  # the result written again, localized
    assert "error" not in record, record
    assert record["first_failing_cut"]["node"] == "linear_1" and record["first_failing_cut"]["index"] == 3
    assert (record["node"], record["index"], record["op"]) == ("linear", 1, "aten.linear")
    suspects = {s["node"]: s for s in record["suspects"]}
    assert not suspects["linear_1"]["error"]["exceeds"] and suspects["linear"]["error"]["exceeds"]
    assert record["verdict"].startswith("local")
    assert "Localized model failures" in (report / "report.md").read_text()
    html = (report / "report.html").read_text()
    rows, _ = read_page(html)
    assert [(op, backend) for op, backend, _ in rows["mlp"]["blamed"]] == [("aten.linear", "planted-drift")]


def test_a_crash_at_one_op_is_traced_to_it_in_a_pytest_run(tmp_path):
    """Compiling any graph with avg_pool2d segfaults: the smallest such prefix ends at the first avg_pool2d."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--backend={planted('CRASH')}", "--case", "lenet5",
         "--localize", "--no-xfail", f"--report-dir={tmp_path / 'report'}", "--reruns", "0", f"--cache-dir={tmp_path / 'cache'}"],
        capture_output=True, text=True, cwd=tmp_path, timeout=1200,
    )
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "localized to aten.avg_pool2d (node avg_pool2d, op 3 of" in proc.stdout
    assert "cases/models/lenet.py:26" in proc.stdout  # return self.classifier(torch.flatten(self.features(x), 1))
    record = json.loads((tmp_path / "report" / "localized" / "lenet5" / "planted-crash" / "localized.json").read_text())
    assert record["code"] == "CRASH" and record["alone"]["code"] == "CRASH"
    assert record["verdict"] == "fails alone as in the model"


def test_a_compile_error_at_one_op_names_it_and_the_mlir_op(tmp_path):
    record = localize("lenet5", planted("COMPILE_ERROR"), settings(tmp_path), tmp_path / "w")
    assert (record["op"], record["node"], record["index"]) == ("aten.tanh", "tanh", 2)
    assert record["code"] == "COMPILER_ERROR" and record["mlir_op"] == "fake.tanh"
    assert Path(record["case_file"]).read_text().count("torch.ops.aten.tanh.default(x0)") == 1
    # Said only where there is something to say: no own error (not numeric), no note (not the first op).
    assert "own_error" not in record and "note" not in record
    assert json.loads((tmp_path / "w" / "localized.json").read_text()) == record


@pytest.mark.parametrize(
    ("case", "backend", "op", "region", "line"),
    [
        ("decoder", "COS_ERROR", "aten.cos", "wrap_with_set_grad_enabled", "cos, sin = emb.cos(), emb.sin()"),
        ("decoder", "TANH_ERROR", "aten.tanh", "wrap_with_autocast", "h = torch.tanh(self.proj(x))"),
        ("branches", "TANH_ERROR", "aten.tanh", "while_loop", None),
    ],
)
def test_an_op_inside_a_higher_order_op_is_localized_to_itself(tmp_path, case, backend, op, region, line):
    """A decoder computes its rotary angles under torch.no_grad() (wrap_with_set_grad_enabled), its projection under
    autocast; a loop's body is a while_loop's: the op blamed is the ATen op inside, which fails alone as in the model."""
    record = localize(case, planted(backend), fixture_settings(tmp_path), tmp_path / "w")
    assert record["op"] == op and record["code"] == "COMPILER_ERROR", record
    assert record["within"][0].startswith(region) and record["verdict"] == "fails alone as in the model"
    assert record["inlined"] and f"torch.ops.{record['target']}(x0)" in Path(record["case_file"]).read_text()
    if line:
        path, number = record["source"].rsplit(":", 1)
        assert path.endswith("fixtures/localize/cases.py")
        assert Path(path if Path(path).is_absolute() else HERE.parent / path).read_text().splitlines()[int(number) - 1].strip() == line


def test_inlined_higher_order_ops_compute_what_the_model_computes(tmp_path):
    """Cut N of the inlined graph is the model, bit for bit: no_grad and autocast bodies (bfloat16 casts made explicit),
    the cond branch eager takes (on either input), the while_loop unrolled as often as eager runs it."""
    from tests.fixtures.localize.cases import Branches, Decoder

    torch.manual_seed(0)
    for number, (module, x) in enumerate([(Decoder(), torch.randn(1, 6, 8)), (Branches(), torch.ones(3, 4)), (Branches(), -torch.ones(3, 4))]):
        directory = tmp_path / str(number)
        graph.save(directory, graph.export_case(module, [x], strict=False), [[x]])
        g = graph.load(directory)
        assert not any(inline.is_higher_order(o.node) for o in g.ops) and not g.inlined.kept
        [out] = g.cut(len(g.ops))(x)
        expected = module(x)
        assert out.dtype == expected.dtype and torch.equal(out, expected)
    taken = {o.aten for o in g.ops if o.within and o.within[0].startswith("cond")}
    assert taken == {"aten.cos"}  # x < 0: the false branch
    assert sum(o.aten == "aten.tanh" for o in g.ops) == 3


def test_an_importer_failure_is_localized_to_the_node_it_names_and_the_context_it_needs(tmp_path):
    """torch-mlir's importer asserts on aten.index.Tensor given a buffer as positions (as Swin's relative_position_index):
    the node it names is confirmed with two cuts, no search; alone the op passes (the buffer became an input), and
    with the buffer frozen as in the model it fails again: that case is kept."""
    record = localize("index_by_buffer", "linalg", fixture_settings(tmp_path, HERE / "fixtures" / "importer"), tmp_path / "w")
    assert (record["op"], record["target"], record["found_by"]) == ("aten.index", "aten.index.Tensor", "named")
    assert record["cuts_run"] <= 2 and record["alone"]["status"] == "pass"
    context = record["context"]
    assert (context["kind"], context["frozen"], context["code"]) == ("constant", ["idx"], record["code"])
    assert "is the model's buffer idx" in record["verdict"] and "alone it became an input" in record["verdict"]
    text = Path(context["case_file"]).read_text()
    assert "CONSTANTS[0]" in text and "torch.ops.aten.index.Tensor(x0, [None, CONSTANTS[0]])" in text


def test_a_lowering_failure_is_taken_at_the_node_its_diagnostic_locates(tmp_path):
    """torch-mlir's TOSA lowering rejects aten.erfinv, its diagnostic located at the model's line: that node, two cuts."""
    record = localize("erfinv", "tosa", fixture_settings(tmp_path), tmp_path / "w")
    assert (record["op"], record["code"], record["found_by"]) == ("aten.erfinv", "UNSUPPORTED_OP", "named")
    assert record["trail"] == {"2": "pass", "3": "UNSUPPORTED_OP"} and record["verdict"] == "fails alone as in the model"


def test_an_op_failing_only_after_another_gets_the_two_op_case(tmp_path):
    """cos compiles alone but not after sin (a fusion bug): the op blamed is cos, its context the op before it,
    and the case of the two is written, and fails as the model does."""
    record = localize("chain", planted("COS_AFTER_SIN"), fixture_settings(tmp_path), tmp_path / "w")
    assert (record["op"], record["alone"]["status"]) == ("aten.cos", "pass")
    context = record["context"]
    assert context["kind"] == "op before" and context["before"] == ["sin"] and context["code"] == "COMPILER_ERROR"
    assert "node sin (aten.sin)" in record["verdict"] and "fails as in the model" in record["verdict"]
    text = Path(context["case_file"]).read_text()
    assert "v0 = torch.ops.aten.sin.default(x0)" in text and "return torch.ops.aten.cos.default(v0)" in text
    [case] = Registry.load(directory_sources(Path(context["case_file"]).parent)).select(keyword="after_sin")
    assert case.ops == ("aten.sin", "aten.cos")


def test_an_op_case_of_several_ops_is_localized_like_a_model(tmp_path):
    record = localize("sin_cos", planted("COS_ERROR"), fixture_settings(tmp_path), tmp_path / "w")
    assert (record["op"], record["ops"], record["verdict"]) == ("aten.cos", 3, "fails alone as in the model")


# -- what cannot be localized, said clearly -------------------------------------------


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("resnet1", "no case with id 'resnet1'; did you mean resnet18"),
        ("tanh", "tanh is an op case: it is one op already, nothing to cut"),
    ],
)
def test_what_cannot_be_localized_is_refused_before_anything_runs(tmp_path, case, message):
    proc = cli("localize", case, "--backend", "eager", "--output-dir", str(tmp_path))
    assert proc.returncode == 1 and message in proc.stderr
    assert not any(tmp_path.iterdir())


def test_a_passing_model_has_nothing_to_localize(tmp_path):
    with pytest.raises(LocalizeError, match="mlp passes on planted-none: nothing to localize"):
        localize("mlp", planted("CLEAN"), settings(tmp_path), tmp_path / "w")


# -- the parts ------------------------------------------------------------------------


def _failure(code="NUMERIC_MISMATCH", op=None, explanation="", case="m"):
    return Result(case, "b", Status.FAIL, stage="compare", code=code, op=op, explanation=explanation)


def test_the_search_finds_the_first_failing_cut_in_about_log2_runs():
    wanted = _failure()
    for first in (1, 2, 37, 99, 100):
        runs = []

        def run_cut(k):
            runs.append(k)
            return _failure() if k >= first else Result("m", "b", Status.PASS)

        found = first_failing_cut(100, run_cut, wanted)
        assert found.first == first and len(runs) <= 8 and len(set(runs)) == len(runs)


def test_a_cut_failing_otherwise_is_not_the_failure_and_is_kept_in_the_trail():
    wanted = _failure("UNSUPPORTED_OP", op="aten.cumsum")
    other = _failure("UNSUPPORTED_OP", op="aten.sort")
    found = first_failing_cut(8, lambda k: wanted if k >= 6 else other if k == 4 else Result("m", "b", Status.PASS), wanted)
    assert found.first == 6 and set(found.otherwise(wanted)) == {4}
    # A code naming the first of several ops: another of them is the same failure.
    f64 = _failure("ILLEGAL_TYPE", op="tosa.const", explanation="f64 in tosa.const (also in tosa.cast)")
    assert same_failure(f64, _failure("ILLEGAL_TYPE", op="tosa.cast", explanation="f64 in tosa.cast"))
    assert not same_failure(f64, _failure("COMPILER_ERROR"))


def test_an_ops_own_error_is_measured_against_fp64_beside_eagers():
    x = torch.linspace(-3, 3, 1000)
    exact = oracle.op_error(torch.exp, [x], torch.exp(x))
    assert not exact.exceeds and exact.own_ratio == exact.noise_ratio
    off = oracle.op_error(torch.exp, [x], torch.exp(x) * (1 + 1e-4))
    assert off.exceeds and off.own_ratio > 10
    assert oracle.blame({"a": exact, "b": off}) == "b" and oracle.blame({"a": exact}) is None
    # A reduction whose float32 noise is large: a backend as far off as eager is not blamed.
    y = torch.randn(4096, generator=torch.Generator().manual_seed(0)) * 1e4
    summed = oracle.op_error(torch.sum, [y], torch.sum(y.flip(0)))
    assert summed.own_ratio <= summed.allowed_ratio


class Branchy(torch.nn.Module):
    def forward(self, x):
        a = torch.relu(x)
        b = torch.sin(x)
        return a + b, torch.cos(a)


def test_a_cut_returns_every_value_a_later_op_still_needs(tmp_path):
    x = torch.randn(3, 4)
    graph.save(tmp_path, graph.export_case(Branchy(), [x], strict=False), [[x]])
    g = graph.load(tmp_path)
    assert [o.aten for o in g.ops] == ["aten.relu", "aten.sin", "aten.add", "aten.cos"]
    relu, sin = torch.relu(x), torch.sin(x)
    torch.testing.assert_close(g.cut(1)(x), (relu,))
    torch.testing.assert_close(g.cut(2)(x), (relu, sin))  # relu still needed by add and cos
    torch.testing.assert_close(g.cut(3)(x), (relu, relu + sin))  # sin is used up
    torch.testing.assert_close(g.cut(4)(x), (relu + sin, torch.cos(relu)))
    assert g.op(3).source.endswith("test_localize.py:" + str(Branchy.forward.__code__.co_firstlineno + 3))


def test_the_emitted_case_calls_the_op_with_its_attributes(tmp_path):
    x = torch.randn(1, 2, 6, 6)
    module = torch.nn.AvgPool2d(2, stride=2, ceil_mode=True)
    graph.save(tmp_path, graph.export_case(module, [x], strict=False), [[x]])
    g = graph.load(tmp_path)
    [op] = g.ops
    values = g.activations([x], set(emit.tensor_args(op)))
    path = emit.write_case(tmp_path / "ops", "pool.alone", op, values, "pool", "tosa")
    assert "Run it: pytest --backend=tosa --cases" in path.read_text()
    assert "torch.ops.aten.avg_pool2d.default(x0, [2, 2], [2, 2], [0, 0], True)" in path.read_text()
    [case] = Registry.load(directory_sources(tmp_path / "ops"))
    [[given]] = case.exact.load()
    torch.testing.assert_close(case.build()(given), module(x))
    assert emit.literal([torch.float16, float("-inf"), None], {}) == "[torch.float16, float('-inf'), None]"
    with pytest.raises(emit.EmitError, match="no literal form"):
        emit.literal(object(), {})


class Stats(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.tensor([2.0, 3.0, 4.0]))

    def forward(self, x):
        var, mean = torch.var_mean(x, dim=1, keepdim=True)
        return torch.sqrt(var) * self.scale + mean


def test_an_ops_contexts_are_cases_computing_what_the_model_does(tmp_path):
    """The op before (one output of several: var_mean's) and the op, as one case; a buffer kept a constant."""
    from conformance.localize import context

    x = torch.randn(3, 5)
    module = Stats()
    graph.save(tmp_path, graph.export_case(module, [x], strict=False), [[x]])
    g = graph.load(tmp_path)
    sqrt, mul = (next(o for o in g.ops if o.aten == name) for name in ("aten.sqrt", "aten.mul"))
    values = g.activations([x], context.nodes_needed(g, sqrt) | context.nodes_needed(g, mul))
    [before] = context.candidates(g, sqrt, values)
    assert before.kind == "op before" and "`self` (float32[3, 1]) is computed by node var_mean (aten.var_mean)" in before.said
    path = emit.write_case(tmp_path / "ops", "stats.sqrt.after", sqrt, values, "stats", "tosa", before=before.before, stem="sqrt_after")
    assert "return torch.ops.aten.sqrt.default(v0[0])" in path.read_text()
    frozen = context.candidates(g, mul, values)[0]
    assert frozen.kind == "constant" and "the model's buffer scale (float32[3])" in frozen.said
    emit.write_case(tmp_path / "ops", "stats.mul.frozen", mul, values, "stats", "tosa", frozen=frozen.frozen, stem="mul_frozen")
    cases = {c.id: c for c in Registry.load(directory_sources(tmp_path / "ops"))}
    var, _ = torch.var_mean(x, dim=1, keepdim=True)
    torch.testing.assert_close(cases["stats.sqrt.after"].build()(x), torch.sqrt(var))
    [[given]] = cases["stats.mul.frozen"].exact.load()  # the buffer is not among the inputs: a constant of the case
    torch.testing.assert_close(cases["stats.mul.frozen"].build()(given), torch.sqrt(var) * module.scale)


def test_what_an_op_lowered_to_is_read_from_its_ir_without_the_scaffolding():
    from conformance.toolchain.mlir import computing_ops

    text = """module {
  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "tosa.const"() <{values = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf32>
    %1 = tosa.clamp %arg0 {max_val = 6.0 : f32, min_val = 0.0 : f32} : (tensor<2xf32>) -> tensor<2xf32>
    %2:2 = "tosa.custom"(%1, %0) <{domain_name = "x"}> : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
    %3 = tosa.clamp %2#0 {max_val = 1.0 : f32, min_val = 0.0 : f32} : (tensor<2xf32>) -> tensor<2xf32>
    return %3 : tensor<2xf32>
  }
}
"""
    assert computing_ops(text) == ["tosa.clamp", "tosa.custom"]


def test_only_a_numeric_failure_is_named_by_what_its_op_lowered_to(tmp_path):
    """A conversion failure's bundle holds torch-dialect IR: listing its ops would name torch.constant.int as the MLIR op."""
    from conformance.localize.blame import mlir_op

    (tmp_path / "input.mlir").write_text("%0 = torch.constant.int 1\n%1 = torch.aten.arange %0 : !torch.int -> !torch.vtensor<[1],si64>\n")
    alone = _failure("CUSTOM_OP_UNCONVERTIBLE")
    alone.artifacts = str(tmp_path)
    assert mlir_op(alone, _failure("CUSTOM_OP_UNCONVERTIBLE"), numeric=False) is None


@pytest.mark.parametrize(
    "kind, fmt, graph_ops, status, expected",
    [
        ("model", "torch", [], Status.FAIL, True),  # a model: always (failed before export: localize says why not)
        ("op", "torch", ["aten.to.dtype", "aten.cumsum.default"], Status.FAIL, True),  # a cast around the op may be it
        ("op", "torch", ["aten.cumsum.default", "aten._assert_tensor_metadata.default"], Status.FAIL, False),  # one op
        ("op", "onnx", ["aten.add.Tensor", "aten.mul.Tensor"], Status.FAIL, False),  # no exported graph to cut
        ("model", "torch", [], Status.PASS, False),
    ],
)
def test_localize_reaches_every_failing_case_with_more_than_one_op_to_blame(kind, fmt, graph_ops, status, expected):
    from types import SimpleNamespace

    from conformance.run.session import needs_localizing

    result = Result(case="c", backend="b", status=status, extras={"aten_ops": graph_ops})
    assert needs_localizing(result, SimpleNamespace(kind=kind, format=fmt)) is expected
    result.extras["localized"] = {"op": "aten.cumsum"}
    assert needs_localizing(result, SimpleNamespace(kind=kind, format=fmt)) is False  # each once
