"""run_decompositions with torch's preservable-op census remembered: the same programs, the census redone when ops are registered."""

from __future__ import annotations

import torch
from torch.export import exported_program
from torch_mlir.extras.fx_decomp_util import get_decomposition_table

from conformance.toolchain.torch_mlir import preservable_ops_remembered


class GeluMatmul(torch.nn.Module):
    def forward(self, x, y):
        return torch.nn.functional.gelu(x @ y).softmax(-1) + torch.nn.functional.linear(x, y)


def test_decomposed_programs_are_the_same_with_the_census_remembered():
    program = torch.export.export(GeluMatmul(), (torch.randn(4, 4), torch.randn(4, 4)), strict=False)
    plain = program.run_decompositions(get_decomposition_table())
    with preservable_ops_remembered():
        remembered = program.run_decompositions(get_decomposition_table())
    with preservable_ops_remembered():  # the second time from what the first one kept
        again = program.run_decompositions(get_decomposition_table())
    assert str(plain.graph) == str(remembered.graph) == str(again.graph)
    assert exported_program._collect_all_valid_cia_ops.__name__ == "_collect_all_valid_cia_ops"  # torch's own again


def test_an_op_registered_later_is_in_the_next_census():
    with preservable_ops_remembered():
        before = exported_program._collect_all_valid_cia_ops()
    library = torch.library.Library("conformance_census_test", "DEF")
    library.define("scaled(Tensor x) -> Tensor")
    library.impl("scaled", lambda x: x * 2, "CompositeImplicitAutograd")
    op = torch.ops.conformance_census_test.scaled.default
    with preservable_ops_remembered():
        after = exported_program._collect_all_valid_cia_ops()
    assert op not in before and op in after
    assert after == exported_program._collect_all_valid_cia_ops()  # what torch itself answers now
