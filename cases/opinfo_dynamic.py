"""The `opinfo-dynamic` suite: PyTorch's OpInfo samples again, exported with dynamic dims.

    pytest --backend=NAME --suite opinfo-dynamic -k "opinfo and dynamic"

Each sample of the `opinfo` suite (cases/opinfo.py) with a dimension of size
2 or more becomes `<its id>.dynamic`: the same tensors, every such dimension
exported as dynamic (torch.export.Dim.AUTO: export keeps static what the
program needs static). The static suite checks the result types the
frontend declares against eager where torch.export has already fixed every
shape; here the shapes are symbolic, so the contract stage's type check
(TYPE_REFINEMENT, conformance/toolchain/torch_mlir.py: check_result_types)
judges the shapes and dtypes torch-mlir refines on its own: a static size or
a dtype it declares that eager does not give. Dims of size 0 and 1 stay
static (export specializes them anyway).

Importing this module is cheap; the op database is imported by cases().
"""

SUITE = "opinfo-dynamic"


def cases():
    from ._opinfo import build_cases, dynamic_variant

    return [variant for case in build_cases() if (variant := dynamic_variant(case)) is not None]
