"""`conformance fuzz`: programs drawn from the op table, run against eager, bugs planted in fake backends found,
grouped by root cause and shrunk to the op and its smallest shape.

The end-to-end tests run the real command (Hypothesis, the engine's
supervised child, the case files and bundles) on tests/fake_fuzz_backends.py,
whose bugs show only from some size on; the others check the generator and
Hypothesis's replay on their own, without a backend.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conformance.cases.inputs import make_inputs
from conformance.fuzz import known, ops, search
from conformance.fuzz.strategies import Config, Stats
from conformance.programs import eager
from conformance.programs import program as programs
from conformance.programs.program import Call, Input, Program

HERE = Path(__file__).parent
PLANTED = HERE / "fake_fuzz_backends.py"
# The planted bugs' ops and some company: few enough that 48 programs meet both bugs often.
OPS = "cumsum,amax,add,mul,neg"


def planted(name: str) -> str:
    return f"{PLANTED}:{name}"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance.cli.main", *args], capture_output=True, text=True, timeout=600)


def draw(config: Config, seed: int, count: int, stats: Stats | None = None) -> list[Program]:
    found: list[Program] = []

    def visit(program: Program) -> None:
        found.append(program)
        if len(found) >= count:
            raise search.Spent

    search.generate(config, seed, visit, stats)
    return found


# -- end to end: planted bugs found, grouped, shrunk ---------------------------------


def test_planted_bugs_are_found_grouped_and_shrunk_to_the_op_and_its_smallest_shape(tmp_path):
    """Two backends, a bug each: cumsum does not compile from size 3 on, amax is 0.5 too high from size 4 on.
    Each is one root-cause group of several programs, shrunk to that op alone on one dim of exactly that size,
    written as a case file that fails the same way when run from the file, with its bundle."""
    proc = cli("fuzz", "--backend", f"{planted('CUMSUM_FAILS')},{planted('AMAX_OFF')}", "--ops", OPS, "--programs", "48",
               "--seed", "0", "--shrink-runs", "60", "--output-dir", str(tmp_path), "--no-cache", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads(proc.stdout)
    groups = {(g["backend"], g["code"]): g for g in record["groups"]}
    assert set(groups) == {("cumsum-fails", "UNSUPPORTED_OP"), ("amax-off", "NUMERIC_MISMATCH")}, record["groups"]
    for (backend, _), op, size in ((("cumsum-fails", "UNSUPPORTED_OP"), "aten.cumsum", 3), (("amax-off", "NUMERIC_MISMATCH"), "aten.amax", 4)):
        group = groups[(backend, _)]
        assert group["op"] == op
        assert group["count"] >= 2  # several programs, one group: deduplicated
        assert group["known"] is False  # no shipped xfail set names these fake backends
        assert group["confirmed"], group["confirm"]
        case = programs.load(Path(group["case_file"]))
        assert case.ops == (op,)
        [tensor] = make_inputs(case, 0)[0]
        assert list(tensor.shape) == [size], f"{op}: shrunk to {list(tensor.shape)}, the bug shows from {size}"
        assert (Path(group["bundle"]) / "reproduce.sh").is_file()
    # Run per backend, a program fails or passes; every program reached the backends (nothing refused before).
    for backend, counts in record["per_backend"].items():
        assert counts["run"] == 48 and counts["passed"] + counts["failed"] == 48 and counts["invalid"] == 0
    assert record["reproduce"].endswith("--seed 0 --programs 48")


def test_one_bug_failing_at_the_ops_after_it_is_one_group_under_where_it_first_goes_wrong(tmp_path):
    """cumsum from size 3 leaves a result that fails wherever it is read next (neg, mul, add ... or the return):
    one group per reader until each shrunk program is cut after each call; the cut returning cumsum's result
    fails too, so every group has that root and they are one, the others listed as seen downstream."""
    proc = cli("fuzz", "--backend", planted("CUMSUM_DOWNSTREAM"), "--ops", OPS, "--programs", "48", "--seed", "0",
               "--shrink-runs", "40", "--output-dir", str(tmp_path), "--no-cache", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads(proc.stdout)
    [group] = record["groups"]
    assert (group["code"], group["op"]) == ("VERIFIER_ERROR", "func.return")
    assert group["downstream"], "the readers' groups were not merged"
    assert all(d["signature"].startswith("VERIFIER_ERROR") and "func.return" not in d["signature"] for d in group["downstream"])
    assert group["count"] == record["per_backend"]["cumsum-downstream"]["failed"]
    case = programs.load(Path(group["case_file"]))
    assert case.ops == ("aten.cumsum",) and group["confirmed"], group["confirm"]


def test_eager_against_itself_finds_nothing(tmp_path):
    """The generator's programs are valid and well conditioned: eager judged against eager never fails,
    dynamic programs included."""
    proc = cli("fuzz", "--backend", "eager", "--programs", "64", "--seed", "1", "--output-dir", str(tmp_path), "--no-cache", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads(proc.stdout)
    counts = record["per_backend"]["eager"]
    assert (counts["run"], counts["passed"], counts["failed"], counts["invalid"]) == (64, 64, 0, 0), counts
    assert record["groups"] == []


def test_fuzz_rejects_an_unknown_op_naming_the_table():
    proc = cli("fuzz", "--backend", "eager", "--ops", "neg,frobnicate", "--programs", "1")
    assert proc.returncode == 2
    assert "no op 'frobnicate' in the fuzz table" in proc.stderr and "cumsum" in proc.stderr


# -- the generator -----------------------------------------------------------------------


def test_the_same_seed_draws_the_same_programs_and_another_seed_others():
    config = Config(ops=ops.select(OPS.split(",")))
    first = [p.key() for p in draw(config, 3, 25)]
    again = [p.key() for p in draw(config, 3, 25)]
    other = [p.key() for p in draw(config, 4, 25)]
    assert first == again
    assert first != other


def test_drawn_programs_are_valid_finite_and_run_from_their_case_files(tmp_path):
    """Every program: 2-20 ops, outputs finite, and its case file (the text the child runs) gives what the builder
    computed; a dynamic one runs at two sizes; some use several dtypes; together they cover most of the table."""
    stats = Stats()
    drawn = draw(Config(), 11, 120, stats)
    assert stats.finished >= 120
    seen_ops, dynamic, mixed = set(), 0, 0
    for index, program in enumerate(drawn):
        assert 2 <= len(program.calls) <= 20
        path = programs.write(program, tmp_path, f"p{index}", f"fuzz.p{index}", "A drawn program.")
        evaluation = eager.evaluate(program, path)
        assert evaluation.error is None and evaluation.finite, (evaluation.error, programs.source(program, "x", "x"))
        assert len(evaluation.inputs) == (2 if program.symbols else 1)
        dynamic += bool(program.symbols)
        mixed += len({i.dtype for i in program.inputs}) > 1
        seen_ops |= set(program.ops)
    assert dynamic >= 5 and mixed >= 10
    assert len(seen_ops) >= len({o.aten for o in ops.TABLE}) * 2 // 3, sorted({o.aten for o in ops.TABLE} - seen_ops)


def test_discontinuous_ops_take_exact_values_only():
    """floor, sign, comparisons, argmax and casts to integers read only values no rounding made: a program never
    floors the result of a float multiplication, where a backend's last bit would flip the answer."""
    rounding = {"aten.mul", "aten.add", "aten.sub", "aten.div", "aten.exp", "aten.tanh", "aten.sigmoid", "aten.mean", "aten.sum"}
    discontinuous = {"aten.floor", "aten.ceil", "aten.round", "aten.sign", "aten.argmax", "aten.argmin", "aten.eq", "aten.lt"}
    for program in draw(Config(dtypes=("float32",)), 5, 150):
        n = len(program.inputs)
        for call in program.calls:
            if call.op in discontinuous:
                for o in call.operands:
                    if o >= n:
                        assert program.calls[o - n].op not in rounding, programs.source(program, "x", "x")


def test_shrinking_replays_the_search_to_the_failing_program_then_shrinks_it():
    """Hypothesis shrinks what it drew: the seed's search replayed to the program's place, then smaller programs tried
    (here judged without a backend: 'holds a cumsum')."""
    config = Config(ops=ops.select(OPS.split(",")))
    drawn = draw(config, 7, 60)
    place, target = next((i, p) for i, p in enumerate(drawn) if i > 20 and "aten.cumsum" in p.ops and len(p.calls) >= 5)
    tried = []

    def interesting(program: Program) -> bool:
        tried.append(program)
        return "aten.cumsum" in program.ops

    shrunk = search.shrink(config, 7, target, place, interesting)
    assert shrunk is not None and tried
    assert "aten.cumsum" in shrunk.ops
    assert shrunk.size() < target.size() and len(shrunk.calls) == config.min_ops


def test_shrinking_a_program_the_seed_never_draws_gives_up():
    config = Config(ops=ops.select(OPS.split(",")))
    stranger = Program((Input((3,)),), (Call("torch.neg({0})", (0,), "aten.neg"), Call("torch.neg({0})", (1,), "aten.neg")), (2,))
    assert search.shrink(config, 7, stranger, 5, lambda p: True) is None


def test_a_program_case_file_declares_its_inputs_as_the_project_does(tmp_path):
    """Drawn inputs are T(...) with the program's seed, dynamic dims Dyn(...): the file is an ordinary case."""
    program = Program(
        inputs=(Input(("s0", 4)), Input((4,), "int32", ("uniform", -3, 4))),
        calls=(Call("torch.add({0}, {1})", (0, 1), "aten.add"), Call("torch.sum({0}, dim=1)", (2,), "aten.sum")),
        outputs=(3,), symbols=(("s0", (2, 5)),), seed=9, rtol=1e-4, atol=1e-4,
    )
    path = programs.write(program, tmp_path, "case", "fuzz.example", "An example.")
    text = path.read_text()
    assert "s0 = Dyn('s0', 2, 5)" in text and "T(s0, 4, low=-4.0, high=4.0)" in text and "seed=9" in text
    case = programs.load(path)
    assert case.id == "fuzz.example" and case.is_dynamic and case.ops == ("aten.add", "aten.sum")
    evaluation = eager.evaluate(program, path)
    assert [list(s[0].shape) for s in evaluation.inputs] == [[2, 4], [5, 4]]
    x, y = evaluation.inputs[0]
    torch.testing.assert_close(evaluation.outputs[0], (x + y).sum(1))


@pytest.mark.parametrize("bad", [dict(min_ops=5, max_ops=2), dict(dtypes=("float32", "floaty"))])
def test_a_bad_config_is_a_clear_error(bad):
    with pytest.raises(ValueError):
        Config(**bad)


def test_a_group_is_known_when_a_shipped_case_fails_with_its_code_on_its_op(tmp_path):
    """An xfail entry that names no op (a wrong number) blames the op its case tests, as triage groups it."""
    (tmp_path / "b.toml").write_text(
        '[remainder]\ncode = "NUMERIC_MISMATCH"\n\n["opinfo.cumsum.0.ab12"]\ncode = "NUMERIC_MISMATCH"\n\n'
        '["t.one"]\ncode = "UNSUPPORTED_OP"\nop = "aten.amax"\n'
    )
    pairs = known.known_pairs(tmp_path, "b", {"remainder": ("aten.remainder",)})
    assert known.shown_by(pairs, "NUMERIC_MISMATCH", "aten.remainder") is True
    assert known.shown_by(pairs, "NUMERIC_MISMATCH", "aten.cumsum") is True  # from the OpInfo sample's id
    assert known.shown_by(pairs, "UNSUPPORTED_OP", "aten.amin") is False
    assert known.shown_by(pairs, "NUMERIC_MISMATCH", None) is None  # a code alone: cannot tell
    # an op named without its overload is any of its overloads, but two overloads are two ops
    (tmp_path / "c.toml").write_text('["rem.t"]\ncode = "NUMERIC_MISMATCH"\nop = "aten.remainder.Tensor"\n')
    overloads = known.known_pairs(tmp_path, "c", {})
    assert known.shown_by(overloads, "NUMERIC_MISMATCH", "aten.remainder") is True
    assert known.shown_by(overloads, "NUMERIC_MISMATCH", "aten.remainder.Scalar") is False
    assert known.shown_by(overloads, "NUMERIC_MISMATCH", "aten.rem") is False


def test_groups_that_name_no_op_are_not_merged_by_the_upstream_pass():
    """Two crashes naming no op, with no failing cut, may be two bugs: they stay two groups."""
    from conformance.fuzz import upstream
    from conformance.result import Result

    program = Program(inputs=(Input((3,)),), calls=(Call("torch.neg({0})", (0,), "aten.neg"),), outputs=(1,))
    items = [{"wanted": Result(f"p{i}", "b", "fail", stage="run", code="CRASH"), "program": program, "count": 1, "op": None}
             for i in range(2)]
    merged = upstream.merge(items, lambda backend, programs: [Result("c", backend, "pass") for _ in programs])
    assert len(merged) == 2
