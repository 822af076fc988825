"""Cases exported together and split back (toolchain/export_together.py): each gets its own export's program."""

from __future__ import annotations

import pytest
import torch

from conformance.backends.protocol import BatchFailure
from conformance.cases.inputs import make_inputs, make_module
from conformance.cases.registry import Registry, discover
from conformance.execution.engine import Engine
from conformance.settings import Settings
from conformance.toolchain.decompose import decompose, settle, table_identity
from conformance.toolchain.export_together import decomposed_together, export_together
from conformance.toolchain.onnx import torch_to_onnx
from conformance.toolchain.torch_mlir import import_program
from tests.conftest import FIXTURES, fake

# In-place ops, the checks `to` leaves (nodes no output depends on), several outputs, a constant the trace lifts.
REGISTRY_CASES = ["add_.chain", "scatter_add_", "to.f16_to_bf16", "to.int_method", "topk.dim0", "split", "index_put.bool_mask", "softmax.on_transpose"]


class WithState(torch.nn.Module):
    """Parameters and buffers, in submodules: their names in the joint program carry its prefix."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3)).eval()

    def forward(self, x):
        return torch.tanh(self.body(x))


@pytest.fixture(scope="module")
def members():
    settle()
    registry = Registry.load(discover())
    members = [(make_module(registry[case]), tuple(make_inputs(registry[case])[0])) for case in REGISTRY_CASES]
    torch.manual_seed(0)
    return [*members, (WithState(), (torch.randn(2, 4),))]


def alone(module, inputs, strict):
    with torch.no_grad():
        return torch.export.export(module, inputs, strict=strict)


def imported(program) -> str:
    """What the torch-mlir frontend makes of a program: decomposed, imported, printed with its locations."""
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    return printed(decompose(program, get_decomposition_table()))


def printed(decomposed) -> str:
    return import_program(decomposed).operation.get_asm(enable_debug_info=True, large_elements_limit=None)


@pytest.mark.parametrize("strict", [False, True], ids=["non-strict", "strict"])
def test_cases_exported_together_are_split_into_the_programs_their_own_exports_make(members, strict):
    programs = export_together([m for m, _ in members], [i for _, i in members], strict=strict)
    assert all(p is not None for p in programs), programs
    for (module, inputs), program in zip(members, programs):
        own = alone(module, inputs, strict)
        # Locations included: a node's stack trace must not name the joint module's forward.
        assert imported(program) == imported(own), module
        assert [s.arg.name for s in program.graph_signature.input_specs] == [s.arg.name for s in own.graph_signature.input_specs]
        assert program.state_dict.keys() == own.state_dict.keys() and program.constants.keys() == own.constants.keys()


def test_the_onnx_exporter_makes_the_same_model_of_a_split_program_as_of_the_cases_own(members, monkeypatch):
    # The ONNX backends start from the torch frontend's program: its input names, module
    # stack and stack traces are written into the model, whose bytes key the compile cache.
    # A split program is decomposed with its batch, the exporter's own decomposition step left out.
    from torch.onnx._internal.exporter import _fx_passes

    steps = []
    step = _fx_passes.decompose_with_registry
    monkeypatch.setattr(_fx_passes, "decompose_with_registry", lambda *args: steps.append(1) or step(*args))
    programs = export_together([m for m, _ in members], [i for _, i in members], strict=False)
    models = [torch_to_onnx(program).SerializeToString() for program in programs]
    assert steps == []
    for (module, inputs), model in zip(members, models):
        assert model == torch_to_onnx(alone(module, inputs, False)).SerializeToString(), module
    assert len(steps) == len(members)


@pytest.mark.parametrize("strict", [False, True], ids=["non-strict", "strict"])
def test_split_programs_decomposed_together_are_the_decompositions_of_the_cases_own_programs(members, strict):
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    table = get_decomposition_table()
    programs = export_together([m for m, _ in members], [i for _, i in members], strict=strict)
    pieces = [decomposed_together(program, table, table_identity(table)) for program in programs]
    assert all(piece is not None for piece in pieces), pieces
    for (module, inputs), piece in zip(members, pieces):
        assert printed(piece) == imported(alone(module, inputs, strict)), module
    # Handed out once: decomposing a program again is its own decomposition.
    assert decomposed_together(programs[0], table, table_identity(table)) is None


def test_a_program_of_its_own_export_is_left_to_its_own_decomposition(members):
    module, inputs = members[0]
    assert decomposed_together(alone(module, inputs, False), {}, "") is None


def test_a_joint_decomposition_that_fails_leaves_every_case_to_its_own(capsys):
    def refuse(*args, **kwargs):
        raise RuntimeError("no decomposition for tanh")

    table = {torch.ops.aten.tanh.default: refuse}
    cases = [op_case("relu6.f16"), op_case("tanh")]
    modules, inputs = [make_module(case) for case in cases], [tuple(make_inputs(case)[0]) for case in cases]
    programs = export_together(modules, inputs, strict=False)
    assert [decomposed_together(program, table, "refuses tanh") for program in programs] == [None, None]
    assert "the joint decomposition of 2 cases failed (RuntimeError)" in capsys.readouterr().err
    assert printed(decompose(programs[0], table)) == printed(decompose(alone(modules[0], inputs[0], False), table))  # alone, it decomposes


def op_case(name: str):
    settle()
    return Registry.load(discover())[name]


def test_a_case_whose_trace_drops_a_node_is_exported_to_onnx_from_its_own_decomposition(monkeypatch):
    # argsort's trace makes a getitem of sort's values and drops it: the case's own trace numbers the next
    # getitem _1, a renumbering of the joint one cannot know it. The model's node names are its own all the same.
    from torch.onnx._internal.exporter import _fx_passes

    steps = []
    step = _fx_passes.decompose_with_registry
    monkeypatch.setattr(_fx_passes, "decompose_with_registry", lambda *args: steps.append(1) or step(*args))
    cases = [op_case(name) for name in ("relu6.f16", "argsort.descending", "argsort.descending", "tanh")]
    modules, inputs = [make_module(case) for case in cases], [tuple(make_inputs(case)[0]) for case in cases]
    models = [torch_to_onnx(program).SerializeToString() for program in export_together(modules, inputs, strict=False)]
    assert len(steps) == 2  # the two argsorts, by their own decomposition
    for module, case_inputs, model in zip(modules, inputs, models):
        assert model == torch_to_onnx(alone(module, case_inputs, False)).SerializeToString()


class Answers(torch.nn.Module):
    """A Python bool out: the program returns a constant, which a split cannot place."""

    def forward(self, x):
        return x.is_floating_point()


def test_a_case_the_split_cannot_vouch_for_is_left_to_its_own_export_and_the_others_are_split():
    settle()
    registry = Registry.load(discover())
    relu = registry["relu6.f16"]
    modules, inputs = [Answers(), make_module(relu)], [(torch.ones(2),), tuple(make_inputs(relu)[0])]
    programs = export_together(modules, inputs, strict=False)
    assert programs[0] is None
    assert imported(programs[1]) == imported(alone(modules[1], inputs[1], False))


@pytest.mark.parametrize("symbolic", ["nonzero", "scatter.dim1"])
def test_a_symbol_the_trace_makes_leaves_every_case_of_the_batch_to_its_own_export(symbolic):
    # nonzero's size, or the sizes scatter's meta function reasons about, are symbols in the ShapeEnv every
    # case's values share: a decomposition of any of them would report them (an ONNX model records them).
    settle()
    registry = Registry.load(discover())
    chosen = [registry[symbolic], registry["relu6.f16"]]
    programs = export_together([make_module(c) for c in chosen], [tuple(make_inputs(c)[0]) for c in chosen], strict=False)
    assert programs == [None, None]


def test_a_case_torch_export_refuses_in_a_batch_gets_the_verdict_it_gets_alone():
    """The joint export fails with the refused case in it; the stage walk splits the batch until it stands alone."""
    pairs = [(case, "export-only") for case in ("relu", "refused", "tanh")]

    def verdicts(batch_size):
        settings = Settings(backends=[fake("EXPORT_ONLY")], case_paths=[str(FIXTURES / "export_together")], default_cases=False,
                            batch_size=batch_size)  # fmt: skip
        engine = Engine(settings)
        try:
            return {r.case: (r.status, r.code, r.stage, r.explanation) for r in engine.run(pairs)}
        finally:
            engine.close()

    together = verdicts(16)
    assert together == verdicts(1)
    assert together["refused"][2] == "export" and together["relu"][0] == together["tanh"][0] == "pass", together


class Plus(torch.nn.Module):
    def forward(self, x):
        return x + 1


class Branches(torch.nn.Module):
    def forward(self, x):
        return x if x.sum() > 0 else -x  # data-dependent control flow: torch.export refuses it


@pytest.mark.parametrize("strict", [False, True], ids=["non-strict", "strict"])
def test_a_joint_export_that_fails_names_the_case_it_failed_in(strict):
    # So the stage walk runs that case alone and the rest together, instead of bisecting the batch.
    with pytest.raises(BatchFailure) as failure:
        export_together([Plus(), Plus(), Branches(), Plus()], [(torch.ones(2),)] * 4, strict=strict)
    assert failure.value.guilty == [2]


def test_a_strict_joint_export_failure_in_a_forward_two_cases_run_is_not_blamed_on_either():
    # Dynamo's stack names the forward it failed in, not which of the two cases ran it: the batch is bisected.
    with pytest.raises(Exception) as failure:
        export_together([Branches(), Plus(), Branches()], [(torch.ones(2),)] * 3, strict=True)
    assert not isinstance(failure.value, BatchFailure), failure.value
