"""The outputs' structure: how many there are, and how they are nested.

A backend may return its outputs flat, the only way an MLIR function can
return them: the single output alone, or a tuple or list of all of them in
the order torch.utils._pytree flattens eager's. So `(out, h, c)` stands
for eager's `(out, (h, c))`, and a plain tuple for a torch.return_types.max.
A backend that nests its outputs must nest them as eager does: tuples,
lists and named tuples (torch.return_types.*) are all sequences, so only
their lengths must agree; a mapping must have eager's keys, in any order;
any other container must be of eager's type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torch.utils._pytree import keystr, tree_flatten, tree_flatten_with_path, tree_is_leaf

from conformance.compare.mismatch import Mismatch, describe, reference
from conformance.taxonomy import Code

SKETCH_LIMIT = 300  # characters of a nesting sketch in an explanation (a model may return hundreds of outputs)


def pair_outputs(expected: Any, actual: Any, label: str) -> tuple[list[tuple[str, Any, Any]], Mismatch | None]:
    """([(path, eager's leaf, the backend's leaf)], None), or ([], the STRUCTURE_MISMATCH)."""
    flat, _ = tree_flatten_with_path(expected)
    paths = [f"{label}{keystr(path)}" if path else label for path, _ in flat]
    exp = [leaf for _, leaf in flat]
    act = _flat(actual)
    if act is None:
        act, where = _align(expected, actual, label)
        if where:
            return [], Mismatch(Code.STRUCTURE_MISMATCH, f"{where} (the outputs are nested differently)")
    if len(exp) != len(act):
        return [], Mismatch(
            Code.STRUCTURE_MISMATCH,
            f"{reference()} returns {len(exp)} output(s) ({', '.join(describe(v) for v in exp)}) "
            f"but the backend returned {len(act)} ({', '.join(describe(v) for v in act) or 'nothing'})",
        )
    return list(zip(paths, exp, act)), None


def _flat(value: Any) -> list | None:
    """The outputs of a flat return (one leaf, or a tuple or list of leaves), else None."""
    if tree_is_leaf(value):
        return [value]
    if type(value) in (tuple, list) and all(tree_is_leaf(v) for v in value):
        return list(value)
    return None


def _kind(value: Any) -> Any:
    """None for a leaf, "sequence", "mapping", or the type of any other pytree container."""
    if tree_is_leaf(value):
        return None
    if isinstance(value, (tuple, list)):
        return "sequence"
    if isinstance(value, Mapping):
        return "mapping"
    return type(value)


def _children(value: Any) -> list:
    return tree_flatten(value, is_leaf=lambda x: x is not value)[0]


def _align(expected: Any, actual: Any, path: str) -> tuple[list, str | None]:
    """(the backend's leaves in the order of eager's, None), or ([], where and how the nesting first differs)."""
    kind = _kind(expected)
    if kind is None and _kind(actual) is None:
        return [actual], None
    differ = f"{path}: {reference()} gives {sketch(expected)}, the backend {sketch(actual)}"
    if kind != _kind(actual):
        return [], differ
    if kind == "mapping":
        if set(expected) != set(actual):
            return [], differ
        children = [(f"{path}[{key!r}]", expected[key], actual[key]) for key in expected]
    else:
        ours, theirs = _children(expected), _children(actual)
        if len(ours) != len(theirs):
            return [], differ
        children = [(f"{path}[{i}]", e, a) for i, (e, a) in enumerate(zip(ours, theirs))]
    leaves = []
    for child_path, e, a in children:
        found, where = _align(e, a, child_path)
        if where:
            return [], where
        leaves += found
    return leaves, None


def sketch(value: Any) -> str:
    """The nesting of `value` with its leaves described: `(float32[3], (int64[3],))`."""
    text = _sketch(value)
    return text if len(text) <= SKETCH_LIMIT else text[: SKETCH_LIMIT - 3] + "..."


def _sketch(value: Any) -> str:
    kind = _kind(value)
    if kind is None:
        return describe(value)
    if kind == "mapping":
        return "{" + ", ".join(f"{key!r}: {_sketch(v)}" for key, v in value.items()) + "}"
    inner = [_sketch(v) for v in (value if kind == "sequence" else _children(value))]
    if type(value) is list:
        return f"[{', '.join(inner)}]"
    body = f"({', '.join(inner)}{',' if len(inner) == 1 else ''})"
    return body if type(value) is tuple else f"{type(value).__name__}{body}"
