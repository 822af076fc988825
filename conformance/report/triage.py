"""Root-cause groups: failures grouped by (backend, code, op), largest first.

This is the list a backend team works down: one fix usually clears a
whole group. A failure with no op of its own is grouped under the op its
case tests when the case tests exactly one.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

from conformance.result import Result


@dataclass
class Group:
    backend: str
    code: str
    op: str | None
    cases: list[str]
    example: Result

    @property
    def count(self) -> int:
        return len(self.cases)

    def to_dict(self) -> dict:
        return {
            "backend": self.backend,
            "code": self.code,
            "op": self.op,
            "count": self.count,
            "example": {"case": self.example.case, "stage": self.example.stage, "explanation": self.example.explanation},
            "cases": self.cases,
        }


def blamed_op(result: Result, cases: dict[str, dict] | None) -> str | None:
    if result.op:
        return result.op
    ops = (cases or {}).get(result.case, {}).get("ops") or []
    return ops[0] if len(ops) == 1 else None


def root_causes(results: Iterable[Result], cases: dict[str, dict] | None = None) -> list[Group]:
    grouped: dict[tuple, list[Result]] = defaultdict(list)
    for r in results:
        if r.failed:
            grouped[(r.backend, r.code or "UNKNOWN", blamed_op(r, cases))].append(r)
    groups = []
    for (backend, code, op), members in grouped.items():
        members.sort(key=lambda r: r.case)
        groups.append(Group(backend, code, op, [r.case for r in members], members[0]))
    groups.sort(key=lambda g: (-g.count, g.backend, g.code, g.op or ""))
    return groups
