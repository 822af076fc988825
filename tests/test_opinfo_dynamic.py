"""The opinfo-dynamic suite's variants (cases/opinfo_dynamic.py): which dims become dynamic, and the same values."""

import functools

import torch

from cases._opinfo import _clone_of, dynamic_variant
from conformance.cases.spec import Case, T


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


def opinfo_like(*tensors: torch.Tensor) -> Case:
    """A case as cases/_opinfo.py makes one: its inputs are fixed tensors, cloned."""
    inputs = tuple(T(*t.shape, dtype=t.dtype, gen=functools.partial(_clone_of, t)) for t in tensors)
    return Case(id="opinfo.add.3.0123abcd", build=Add, inputs=inputs, kind="opinfo", tags=frozenset({"add", "opinfo"}))


def test_every_dim_of_size_two_or_more_is_dynamic_and_the_values_are_the_sample_s():
    x, y = torch.randn(4, 1, 3), torch.randn(3)
    variant = dynamic_variant(opinfo_like(x, y))
    assert variant.id == "opinfo.add.3.0123abcd.dynamic"
    assert variant.is_dynamic and "dynamic" in variant.all_tags and variant.inputs == ()
    assert variant.exact.dynamic_dims() == {0: (0, 2), 1: (0,)}  # size-1 dims stay static
    assert variant.exact.description == "float32[?,1,?], float32[?] (? dynamic)"
    (loaded,) = variant.exact.load()
    assert torch.equal(loaded[0], x) and torch.equal(loaded[1], y)
    loaded[0].zero_()  # each load is a copy: a backend writing to its inputs changes nothing for the next
    assert torch.equal(variant.exact.load()[0][0], x)


def test_a_sample_without_a_dim_of_size_two_has_no_variant():
    assert dynamic_variant(opinfo_like(torch.randn(1, 1), torch.randn(0))) is None
    assert dynamic_variant(opinfo_like(torch.tensor(2.0))) is None  # 0-d


def test_the_exported_graph_of_an_opinfo_case_points_at_its_sample_not_the_generic_forward():
    # Every OpInfo diagnostic said "cases/_opinfo.py":323 (OpInfoCall.forward, the same line for all samples);
    # torch-mlir's importer takes a node's location from its stack trace, innermost frame first.
    import re

    from cases._opinfo import OpInfoCall, Slot

    where = "cases/opinfo.py (OpInfo flip sample 5)"
    module = OpInfoCall(torch.flip, (Slot(0), ([0],), {}), where)  # flip(input, [0]) as a sample's template says
    program = torch.export.export(module, (torch.randn(2, 3),), strict=False)
    (flip,) = [n for n in program.graph.nodes if n.op == "call_function"]
    files = re.findall(r'File "([^"]+)", line (\d+)', flip.meta["stack_trace"])
    assert files[-1] == (where, "1"), flip.meta["stack_trace"]
