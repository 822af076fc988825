"""Whether a failure is news: does any shipped case already show it (a (code, op) pair of the backend's xfail set)?

The shipped sets list every known failure of the registry, the OpInfo
samples, torch-mlir's and ONNX's suites where they are covered, with the
code each fails with and, where the failure names one, its op. A wrong
number names no op: its entry is then taken to blame the op its case
tests (as report/triage.py groups it), read from the default registry, or
from an OpInfo sample's id. A fuzz group whose pair is in its backend's
set is a failure somebody already wrote down; the others are new.
"""

from __future__ import annotations

from pathlib import Path

from conformance.xfail.sets import XfailSet


def case_ops() -> dict[str, tuple[str, ...]]:
    """The ops each case of the default registry tests, by case id."""
    from conformance.cases.registry import Registry, discover

    return {c.id: c.ops for c in Registry.load(discover())}


def known_pairs(xfail_dir: Path, backend: str, ops: dict[str, tuple[str, ...]]) -> set[tuple[str, str | None]]:
    pairs = set()
    for case_id, entry in XfailSet.load(xfail_dir, backend).entries.items():
        pairs.add((entry.code, entry.op or _tested_op(case_id, ops)))
    return pairs


def _tested_op(case_id: str, ops: dict[str, tuple[str, ...]]) -> str | None:
    tested = ops.get(case_id, ())
    if len(tested) == 1:
        return tested[0]
    parts = case_id.split(".")
    if parts[0] == "opinfo" and len(parts) > 2:  # opinfo.<op>.<n>.<hash>: not in the default registry
        return f"aten.{parts[1]}"
    return None


def shown_by(pairs: set[tuple[str, str | None]], code: str, op: str | None) -> bool | None:
    """Known when a shipped case fails with this code on this op; None (cannot tell) for a failure that names
    no op even once shrunk: a code alone says too little to call two failures one."""
    if op is None:
        return None
    return any(known_code == code and known_op is not None and _same_op(known_op, op) for known_code, known_op in pairs)


def _same_op(a: str, b: str) -> bool:
    """An op named without its overload (aten.remainder, as a generated call names it) is any of its overloads
    (aten.remainder.Tensor, as the xfail entry of a case calling it names it); two overloads are two ops."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")
