"""Root-cause groups: one group per bug, largest first.

This is the list a compiler team works down: one fix usually clears a
whole group. A group is failures at one stage, with one code and op, in
one tool (Backend.tool: torch-mlir's TOSA lowering, iree-compile with
stablehlo input, ...), and for a numeric mismatch of one kind (precision
or a wrong answer): so one bug is one group whichever backends share the
tool that has it (tosa, tosa-ref and onnx-tosa share torch-mlir's TOSA
lowering), and two bugs are never one group. A failure with no op of its
own is grouped under the op its case tests when the case declares exactly
one; a result from before tools were recorded is its backend's own tool.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Iterable

from conformance.digests import digest
from conformance.result import NUMERIC, TOOL, Result

ID_LENGTH = 8  # hex digits of a group's id: unique among a night's ~800 groups, short enough to type


@dataclass
class Group:
    stage: str | None
    code: str
    op: str | None
    tool: str
    kind: str | None  # a numeric mismatch's: "precision" or "wrong answer"; else None
    members: list[Result]  # sorted by (case, backend)

    @property
    def id(self) -> str:
        """A short name of the group's key (stage, code, op, tool, kind): the same bug has the same id
        from night to night, so `conformance issue ID` and an issue file's name outlive a run."""
        return digest(self.stage, self.code, self.op, self.tool, self.kind)[:ID_LENGTH]

    @property
    def count(self) -> int:
        return len(self.members)

    @property
    def example(self) -> Result:
        return self.members[0]

    @property
    def cases(self) -> list[str]:
        return sorted({r.case for r in self.members})

    @property
    def backends(self) -> dict[str, int]:
        """Each backend with its count of the group's failures, the most first."""
        counts = Counter(r.backend for r in self.members)
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    @property
    def backend(self) -> str:
        """The group's one backend; a group of a tool several backends share has none (ValueError)."""
        names = list(self.backends)
        if len(names) != 1:
            raise ValueError(f"a group across {len(names)} backends ({', '.join(names)}) has no one backend")
        return names[0]

    @property
    def code_label(self) -> str:
        """The code, with a numeric mismatch's kind: NUMERIC_MISMATCH (wrong answer)."""
        return f"{self.code} ({self.kind})" if self.kind else self.code

    def backends_label(self) -> str:
        return ", ".join(f"{name} {n}" for name, n in self.backends.items())

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "stage": self.stage,
            "code": self.code,
            "kind": self.kind,
            "op": self.op,
            "tool": self.tool,
            "count": self.count,
            "backends": self.backends,
            "example": {"case": self.example.case, "backend": self.example.backend, "stage": self.example.stage,
                        "explanation": self.example.explanation},
            "cases": self.cases,
            "members": [[r.case, r.backend] for r in self.members],
        }


def blamed_op(result: Result, cases: dict[str, dict] | None) -> str | None:
    if result.op:
        return result.op
    ops = (cases or {}).get(result.case, {}).get("ops") or []
    return ops[0] if len(ops) == 1 else None


def numeric_kind(result: Result) -> str | None:
    measured = result.extras.get(NUMERIC) if isinstance(result.extras, dict) else None
    return measured.get("kind") if isinstance(measured, dict) else None


def tool_of(result: Result) -> str:
    tool = result.extras.get(TOOL) if isinstance(result.extras, dict) else None
    return tool or result.backend


def group_key(result: Result, cases: dict[str, dict] | None = None) -> tuple:
    """(stage, code, op, tool, kind): what makes two failures one root cause."""
    return (result.stage, result.code or "UNKNOWN", blamed_op(result, cases), tool_of(result), numeric_kind(result))


def root_causes(results: Iterable[Result], cases: dict[str, dict] | None = None) -> list[Group]:
    grouped: dict[tuple, list[Result]] = defaultdict(list)
    for r in results:
        if r.failed:
            grouped[group_key(r, cases)].append(r)
    groups = [Group(*key, sorted(members, key=lambda r: (r.case, r.backend))) for key, members in grouped.items()]
    groups.sort(key=lambda g: (-g.count, g.code, g.op or "", g.tool, g.stage or ""))
    return groups
