"""run_decompositions with torch's per-call set-up remembered (toolchain/decompose.py): the same programs, torch's state the same after."""

from __future__ import annotations

import contextlib

import torch
from torch._subclasses import fake_impls
from torch.export import exported_program
from torch_mlir.extras.fx_decomp_util import get_decomposition_table

from conformance.toolchain import decompose as dec


class GeluMatmul(torch.nn.Module):
    def forward(self, x, y):
        return torch.nn.functional.gelu(x @ y).softmax(-1) + torch.nn.functional.linear(x, y)


class Decoder(torch.nn.Module):  # CIA ops torch-mlir's table keeps (linear, layer_norm) and one it decomposes
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)
        self.norm = torch.nn.LayerNorm(8)

    def forward(self, x):
        return self.norm(torch.nn.functional.silu(self.linear(x))).flatten()


def exported(module, *shape):
    return torch.export.export(module, tuple(torch.randn(*s) for s in shape), strict=False)


def cia_state():
    """Every CIA op's Python kernels and fake-tensor rule: what torch's patch touches."""
    ops = exported_program._collect_all_valid_cia_ops()
    return {op: (dict(op.py_kernels), fake_impls.op_implementations_dict.get(op)) for op in ops}


@contextlib.contextmanager
def counting_torchs(name: str):
    """Each call of torch's `exported_program.<name>(table)` while the block runs, as the table's length."""
    calls = []
    original = getattr(exported_program, name)

    def counted(table):
        calls.append(len(table))
        return original(table)

    setattr(exported_program, name, counted)
    try:
        yield calls
    finally:
        setattr(exported_program, name, original)


def counting_torchs_patch():
    return counting_torchs("_override_composite_implicit_decomp")


def test_decomposed_programs_are_torchs_own_and_torchs_patch_runs_only_until_remembered():
    cases = [(GeluMatmul(), (4, 4), (4, 4)), (Decoder(), (2, 8))]
    programs = [exported(m, *shapes) for m, *shapes in cases]
    plain = [str(p.run_decompositions(get_decomposition_table()).graph) for p in programs]
    dec._LAST.clear()  # what an earlier test in this process left remembered: torch's own patch runs first here
    with counting_torchs_patch() as calls:
        for _ in range(3):
            remembered = [str(dec.decompose(p, get_decomposition_table()).graph) for p in programs]
            assert remembered == plain
    # Six decompositions, two patches each in torch 2.13: torch's own code ran for the first ones only.
    assert 0 < len(calls) < 6
    assert exported_program._override_composite_implicit_decomp.__name__ == "_override_composite_implicit_decomp"
    assert exported_program._collect_all_valid_cia_ops.__name__ == "_collect_all_valid_cia_ops"  # torch's own again


def test_torchs_state_after_a_replay_is_the_state_after_its_own_patch():
    traced_before = str(exported(Decoder(), (2, 8)).graph)
    program = exported(GeluMatmul(), (4, 4), (4, 4))
    program.run_decompositions(get_decomposition_table())
    after_torch = cia_state()
    for _ in range(3):
        dec.decompose(program, get_decomposition_table())
    assert cia_state() == after_torch
    # and an export after it traces as before: no kernel of the patch is left behind
    assert str(exported(Decoder(), (2, 8)).graph) == traced_before


def test_another_table_goes_through_torchs_own_code():
    program = exported(Decoder(), (2, 8))
    dec.decompose(program, get_decomposition_table())
    with counting_torchs_patch() as calls:
        core = dec.decompose(program)  # torch's core ATen table: another patch
        assert str(core.graph) == str(program.run_decompositions().graph)
    assert calls


def test_an_op_registered_later_is_in_the_next_census():
    with dec.preservable_ops_remembered():
        before = exported_program._collect_all_valid_cia_ops()
    library = torch.library.Library("conformance_census_test", "DEF")
    library.define("scaled(Tensor x) -> Tensor")
    library.impl("scaled", lambda x: x * 2, "CompositeImplicitAutograd")
    op = torch.ops.conformance_census_test.scaled.default
    with dec.preservable_ops_remembered():
        after = exported_program._collect_all_valid_cia_ops()
    assert op not in before and op in after
    assert after == exported_program._collect_all_valid_cia_ops()  # what torch itself answers now


def test_the_first_decomposition_in_a_process_meets_the_state_later_ones_do():
    # torch drops pre-registered fake-tensor rules as its patch ends: nonzero_numpy on a 0-d input fails to
    # decompose in a fresh process and passes after any decomposition. decompose() settles that first.
    script = (
        "import torch, warnings; warnings.filterwarnings('ignore')\n"
        "from conformance.toolchain.decompose import decompose\n"
        "class NZ(torch.nn.Module):\n"
        "    def forward(self, x): return torch.ops.aten.nonzero_numpy(x)\n"
        "program = torch.export.export(NZ(), (torch.tensor(1.5),), strict=False)\n"
        "decompose(program, {})\n"
        "print('decomposed')\n"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "decomposed" in done.stdout, done.stderr[-2000:]


class Mix(torch.nn.Module):  # ops torch.onnx's registry translates itself (flip, sum) and ones it decomposes (hardswish, var)
    def forward(self, x):
        return torch.nn.functional.hardswish(x).var(0) + torch.flip(x, (0,)).sum()


def test_onnx_exports_with_the_set_up_remembered_are_the_exporters_own_and_its_table_is_built_once():
    from torch.onnx import _constants
    from torch.onnx._internal.exporter import _core, _decomp

    from conformance.toolchain import onnx

    def exporters_own(program):
        options = dict(opset_version=_constants.ONNX_DEFAULT_OPSET, optimize=True, verbose=False)
        return _core.export(program, registry=onnx._exporter_registry(), **options).model_proto.SerializeToString()

    dec.settle()
    programs = [exported(GeluMatmul(), (4, 4), (4, 4)), exported(Decoder(), (2, 8)), exported(Mix(), (3, 5))]
    plain = [exporters_own(p) for p in programs]
    built = []
    build = _decomp.create_onnx_friendly_decomposition_table
    _decomp.create_onnx_friendly_decomposition_table = lambda ops: built.append(1) or build(ops)
    try:
        onnx._ONNX_TABLE.clear()
        for _ in range(2):
            assert [onnx.torch_to_onnx(p).SerializeToString() for p in programs] == plain
    finally:
        _decomp.create_onnx_friendly_decomposition_table = build
    assert len(built) == 1
    assert [exporters_own(p) for p in programs] == plain  # torch's own code, as it was, afterwards


def test_a_tables_split_is_torchs_own_and_torch_splits_each_table_once():
    from torch.onnx._internal.exporter import _decomp

    from conformance.toolchain import onnx

    registry = onnx._exporter_registry()
    onnx_table = _decomp.create_onnx_friendly_decomposition_table(set(_decomp.get_onnx_implemented_overloads(registry)))
    tables = [get_decomposition_table(), onnx_table]
    expected = []
    dec._SPLITS.clear()
    for table in tables:
        cia, rest = exported_program._split_decomp_table_to_cia_and_python_decomp(dict(table))
        expected.append((list(cia.items()), list(rest.items())))
    with counting_torchs("_split_decomp_table_to_cia_and_python_decomp") as calls, dec.split_remembered():
        for _ in range(3):
            for table, (cia, rest) in zip(tables, expected):
                given = dict(table)
                got_cia, got_rest = exported_program._split_decomp_table_to_cia_and_python_decomp(given)
                assert got_rest is given  # torch deletes the CIA ops from the table it is given, as the replay does
                assert list(got_cia.items()) == cia and list(got_rest.items()) == rest
        assert calls == [len(t) for t in tables]  # torch's own split ran once per table
        smaller = dict(tables[0])
        smaller.pop(next(iter(smaller)))
        exported_program._split_decomp_table_to_cia_and_python_decomp(smaller)
        assert len(calls) == 3  # another table: torch's own split again
    assert exported_program._split_decomp_table_to_cia_and_python_decomp.__name__ == "_split_decomp_table_to_cia_and_python_decomp"
