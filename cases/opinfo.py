"""The `opinfo` suite: PyTorch's OpInfo sample inputs as cases.

    pytest --backend=NAME --suite opinfo

One case per float32 CPU sample of each OpInfo in PyTorch's op database
(the first 16 samples of each op), minus the samples that cannot be a
backend test: random, uninitialised, sparse, CUDA-only or non-tensor-output
ops, and a few named samples. cases/_opinfo.py holds the rules, why each
exists and how many samples it removes, and a census that re-counts them:

    .venv/bin/python cases/_opinfo.py

Ids: `opinfo.<op>[.<variant>].<sample index>.<hash of shapes, dtypes, args>`.
Tags: the op's name, `opinfo`, `zero-size` (an input with a zero-size
dimension), `complex` (real inputs, complex outputs) and `nonunique`
(decompositions a backend may legitimately answer differently).

Importing this module is cheap; the op database is imported by cases().
"""

SUITE = "opinfo"


def cases():
    from ._opinfo import build_cases

    return build_cases()
