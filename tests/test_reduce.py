"""`conformance reduce`: a failing case shrunk while it fails the same way, to the op and its smallest shape.

End to end, the real command reduces a registry case and a file as
`conformance localize` writes one, on backends with a planted bug that
shows from some size on (tests/fake_fuzz_backends.py); the loop, the
program surgery and the graph conversion are also checked on their own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import torch

from conformance.cases.inputs import make_inputs, make_module
from conformance.cases.registry import Registry, sources_of
from conformance.localize import emit, graph as model_graph
from conformance.programs import eager
from conformance.programs import program as programs
from conformance.programs.program import Call, Input, Program
from conformance.reduce import edit, graph, loop
from conformance.result import failed, passed
from conformance.settings import Settings
from conformance.taxonomy import Code

HERE = Path(__file__).parent
PLANTED = HERE / "fake_fuzz_backends.py"


def planted(name: str) -> str:
    return f"{PLANTED}:{name}"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli.main", *args], capture_output=True, text=True, timeout=600)


# -- end to end --------------------------------------------------------------------


def test_a_registry_case_is_reduced_to_the_op_and_the_smallest_shape_that_fails(tmp_path):
    """cumsum.on_strided (x[:, ::3].cumsum(1) on 3x12) on a backend whose cumsum does not compile from size 3 on:
    the slice goes, the input shrinks to one dim of 3; the case file fails the same way when run, with its bundle."""
    proc = cli("reduce", "cumsum.on_strided", "--backend", planted("CUMSUM_FAILS"), "--output-dir", str(tmp_path), "--no-cache", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads(proc.stdout)
    assert (record["code"], record["stage"], record["op"]) == ("UNSUPPORTED_OP", "compile", "aten.cumsum")
    assert record["ops"] == ["aten.cumsum"] and record["from"].startswith("2 ops")
    case = programs.load(Path(record["case_file"]))
    [[tensor]] = make_inputs(case, 0)
    assert list(tensor.shape) == [3]
    assert record["confirmed"] and (Path(record["bundle"]) / "reproduce.sh").is_file()
    # The written case is an ordinary case: pytest runs it and it fails as reduced.
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--backend={planted('CUMSUM_FAILS')}",
                          "--cases", str(Path(record["case_file"]).parent), "--no-default-cases", "--no-xfail"],
                         capture_output=True, text=True, timeout=600, cwd=HERE.parent)
    assert "FAIL UNSUPPORTED_OP (aten.cumsum)" in run.stdout, run.stdout[-2000:]


def test_a_failure_that_needs_a_dynamic_dim_is_reduced_with_it(tmp_path):
    """cumsum.dynamic (cumsum over dim 1 of n x 16) on a backend whose cumsum fails only in a dynamic program: the
    graph, traced static, passes; the program with the case's dynamic dim fails, and shrinks to cumsum over n alone
    (n is 3 or 6, so the bug still shows; its static dim of 16 goes)."""
    proc = cli("reduce", "cumsum.dynamic", "--backend", planted("CUMSUM_FAILS_DYNAMIC"), "--output-dir", str(tmp_path),
               "--no-cache", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads(proc.stdout)
    assert record["from"].endswith("on float32[n,16]") and record["confirmed"]
    [spec] = programs.load(Path(record["case_file"])).inputs
    assert [d if isinstance(d, int) else d.name for d in spec.shape] == ["n"]


def test_ops_before_a_failure_that_needs_a_dynamic_dim_are_cut_with_it(tmp_path):
    """A matmul (n x 8 by 8 x 16) feeding a cumsum that fails only in a dynamic program: the matmul's result, cut
    into an input, keeps its dynamic n, so the matmul goes and the cumsum is left alone, still dynamic. (No
    bypass could take the matmul: its operands are not n x 16.)"""
    (tmp_path / "case").mkdir()
    (tmp_path / "case" / "mm_cumsum.py").write_text(
        "import torch\nfrom conformance import Dyn, T, op\n\nn = Dyn('n', 3, 6)\n\n"
        "CASES = [op('mm_cumsum', lambda x, w: torch.cumsum(x @ w, 1), T(n, 8), T(8, 16), rtol=1e-4, atol=1e-4)]\n"
    )
    proc = cli("reduce", str(tmp_path / "case" / "mm_cumsum.py"), "--backend", planted("CUMSUM_FAILS_DYNAMIC"),
               "--output-dir", str(tmp_path / "out"), "--no-cache", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads(proc.stdout)
    assert record["ops"] == ["aten.cumsum"] and record["confirmed"], record
    [spec] = programs.load(Path(record["case_file"])).inputs
    assert [d if isinstance(d, int) else d.name for d in spec.shape][0] == "n"


def test_a_localized_model_op_file_is_reduced_by_its_path(tmp_path):
    """The one-op file `conformance localize` writes (the op on eager's activations, saved beside it): amax over
    a 2x6x5 activation on a backend whose amax is off from size 4 on shrinks to amax of 4 values."""
    class Model(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x).amax(2)

    x = torch.randn(2, 6, 5)
    program = model_graph.export_case(Model(), [x], strict=False)
    model_graph.save(tmp_path / "w", program, [[x]])
    g = model_graph.load(tmp_path / "w")
    amax = next(o for o in g.ops if o.aten == "aten.amax")
    values = g.activations([x], set(emit.tensor_args(amax)))
    path = emit.write_case(tmp_path / "ops", "model.amax", amax, values, "model", planted("AMAX_OFF"))
    proc = cli("reduce", str(path), "--backend", planted("AMAX_OFF"), "--output-dir", str(tmp_path / "out"), "--no-cache", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads(proc.stdout)
    assert (record["code"], record["ops"]) == ("NUMERIC_MISMATCH", ["aten.amax"])
    [[tensor]] = make_inputs(programs.load(Path(record["case_file"])), 0)
    assert list(tensor.shape) == [4] and record["confirmed"]


def test_reduce_says_why_when_there_is_nothing_to_reduce(tmp_path):
    passing = cli("reduce", "tanh", "--backend", planted("CUMSUM_FAILS"), "--output-dir", str(tmp_path), "--no-cache")
    assert passing.returncode == 1 and "tanh passes on cumsum-fails: nothing to reduce" in passing.stderr
    unknown = cli("reduce", "cumsum.on_strid", "--backend", planted("CUMSUM_FAILS"), "--output-dir", str(tmp_path), "--no-cache")
    assert unknown.returncode == 1 and "no case with id 'cumsum.on_strid'; did you mean cumsum.on_strided" in unknown.stderr
    two = cli("reduce", "tanh", "--backend", f"eager,{planted('CUMSUM_FAILS')}", "--output-dir", str(tmp_path))
    assert two.returncode == 2 and "reduce takes one backend" in two.stderr


# -- the loop, on a judge without a backend -------------------------------------------


def test_the_loop_keeps_the_smallest_program_that_fails_the_same_way():
    """A judge that fails any program holding cumsum on a dim of 3 or more: from three ops on 5x7 inputs the loop
    ends at cumsum alone, its input one dim of exactly 3, zeros (the plainest values that still fail)."""
    start = Program(
        inputs=(Input((5, 7)), Input((5, 7))),
        calls=(Call("torch.mul({0}, {1})", (0, 1), "aten.mul"), Call("torch.cumsum({0}, dim=1)", (2,), "aten.cumsum"),
               Call("torch.neg({0})", (3,), "aten.neg")),
        outputs=(4,), rtol=1e-4, atol=1e-4,
    )
    wanted = failed("p", "b", stage="compile", code=Code.UNSUPPORTED_OP, explanation="no cumsum", op="aten.cumsum")

    def judge(batch):
        out = []
        for program in batch:
            fails = any(c.op == "aten.cumsum" and any(d >= 3 for d in _operand_shape(program, c)) for c in program.calls)
            out.append(wanted if fails else passed("p", "b", {}))
        return out

    outcome = loop.reduce(start, wanted, judge)
    assert [c.op for c in outcome.program.calls] == ["aten.cumsum"]
    [spec] = outcome.program.inputs
    assert tuple(spec.shape) == (3,) and spec.values == ("full", 0), programs.source(outcome.program, "x", "x")
    assert outcome.runs > 0 and not outcome.out_of_budget


def _operand_shape(program: Program, call: Call) -> tuple:
    found = edit.values(program, edit.inputs_of(program))
    return tuple(found[call.operands[0]].shape)


def test_a_numeric_failure_is_not_reduced_into_an_ill_conditioned_program():
    """For a wrong number, a step whose eager result is itself far from float64 is not tried: x - x*1.0000001
    cancels to rounding noise, which any backend may get 'wrong'."""
    wanted = failed("p", "b", stage="compare", code=Code.NUMERIC_MISMATCH, explanation="off")
    noisy = Program((Input((4,), values=("uniform", 1000.0, 2000.0)),),
                    (Call("torch.sub({0}, torch.mul({0}, 1.0000001))", (0,), "aten.sub"),), (1,), rtol=1e-6, atol=1e-9)
    assert not loop.acceptable(noisy, wanted, True)
    assert loop.acceptable(noisy, failed("p", "b", stage="compile", code=Code.COMPILER_ERROR, explanation="x"), True)


# -- program surgery and the graph -------------------------------------------------------


def test_cutting_a_call_makes_its_result_an_exact_input_with_eager_s_values():
    program = Program(
        inputs=(Input((2, 3)),),
        calls=(Call("torch.exp({0})", (0,), "aten.exp"), Call("torch.sum({0}, dim=0)", (1,), "aten.sum")),
        outputs=(2,), seed=4,
    )
    found = edit.values(program, edit.inputs_of(program))
    cut = edit.cut(program, {0}, found)
    assert [c.op for c in cut.calls] == ["aten.sum"] and cut.exact is not None
    [[activation]] = cut.exact
    torch.testing.assert_close(activation, torch.exp(found[0]))
    torch.testing.assert_close(eager.evaluate(cut).outputs[0], eager.evaluate(program).outputs[0])


def test_cutting_a_call_of_a_dynamic_program_gives_a_drawn_input_with_its_dynamic_dims():
    """exp, then a matmul giving n x 5, then sum: cut the matmul and its n x 5 becomes an input of dims (n, 5),
    drawn, where an exact input would have made the program static. A result whose dim is no symbol's
    (the concatenation's 2n) cannot be cut that way."""
    program = Program(
        inputs=(Input(("n", 4)), Input((4, 5))),
        calls=(Call("torch.exp({0})", (0,), "aten.exp"), Call("torch.matmul({0}, {1})", (2, 1), "aten.matmul"),
               Call("torch.sum({0}, dim=1)", (3,), "aten.sum"), Call("torch.cat([{0}, {0}])", (4,), "aten.cat")),
        outputs=(5,), symbols=(("n", (3, 6)),), seed=4,
    )
    found = [edit.values(program, inputs) for inputs in edit.input_sets(program)]
    cut = edit.cut_dynamic(program, {1}, found)
    assert [c.op for c in cut.calls] == ["aten.sum", "aten.cat"] and cut.exact is None and cut.symbols == program.symbols
    assert [(i.shape, i.dtype) for i in cut.inputs] == [(("n", 5), "float32")]
    assert [tuple(o.shape) for o in eager.evaluate(cut).outputs] == [(6,), (12,)]  # it runs at each size, as dynamic
    assert edit.cut_dynamic(program, {3}, found) is None  # cat's 2n: no symbol


def test_pruning_drops_what_no_output_needs_and_bypassing_rewires_users():
    program = Program(
        inputs=(Input((3,)), Input((3,))),
        calls=(Call("torch.neg({0})", (0,), "aten.neg"), Call("torch.abs({0})", (1,), "aten.abs"), Call("torch.relu({0})", (2,), "aten.relu")),
        outputs=(4,),
    )
    pruned = edit.prune(program)
    assert [c.op for c in pruned.calls] == ["aten.neg", "aten.relu"] and len(pruned.inputs) == 1 and pruned.outputs == (2,)
    bypassed = edit.bypass(pruned, 0, 0)
    assert [c.op for c in bypassed.calls] == ["aten.relu"] and bypassed.calls[0].operands == (0,)


def test_any_case_becomes_a_program_of_its_exported_graph_that_computes_the_same():
    """The mlp model: its ATen calls with weights as exact inputs give what the model gives."""
    registry = Registry.load(sources_of(Settings()))
    case = registry["mlp"]
    program = graph.program_of(case, 0, "non-strict")
    assert "aten.linear" in program.ops and program.exact is not None
    with torch.no_grad():
        expected = make_module(case, 0)(*make_inputs(case, 0)[0])
    torch.testing.assert_close(eager.evaluate(program).outputs[0], expected)
