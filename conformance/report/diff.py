"""What changed since a baseline run: newly failing, newly passing, failing differently."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from conformance.gates import judge as gates
from conformance.result import Result
from conformance.taxonomy import Status


@dataclass
class Changes:
    baseline: str | None
    newly_failing: list[dict] = field(default_factory=list)  # passed (or compiled, not run) in the baseline, fail now: regressions
    newly_passing: list[dict] = field(default_factory=list)  # failed in the baseline, pass (or compile, not run) now
    changed: list[dict] = field(default_factory=list)  # failed in both, differently
    newly_beyond_gates: list[dict] = field(default_factory=list)  # within their gates (or not gated) in the baseline, beyond now
    added: int = 0  # pairs the baseline did not have
    removed: int = 0  # pairs the baseline had and this run does not

    @property
    def regressions(self) -> int:
        return len(self.newly_failing)

    @property
    def gate_regressions(self) -> int:
        """Pairs newly beyond their golden figures: regressions of their own kind, not of correctness."""
        return len(self.newly_beyond_gates)

    def to_dict(self) -> dict:
        return {
            "baseline": self.baseline,
            "newly_failing": self.newly_failing,
            "newly_passing": self.newly_passing,
            "changed": self.changed,
            "newly_beyond_gates": self.newly_beyond_gates,
            "added": self.added,
            "removed": self.removed,
        }


# Outcomes a later failure regresses from: a pass, or a compile for a device not here (COMPILED).
GOT_THROUGH = (Status.PASS, Status.COMPILED)


def _entry(now: Result, before: Result | None) -> dict:
    entry = {"case": now.case, "backend": now.backend, "code": now.code, "op": now.op, "explanation": now.explanation}
    if before is not None and before.failed:
        entry["was"] = {"code": before.code, "op": before.op, "explanation": before.explanation}
    return entry


def changes(current: Iterable[Result], baseline: Iterable[Result] | None, label: str | None) -> Changes:
    out = Changes(label)
    if baseline is None:
        return out
    before = {r.key: r for r in baseline}
    now = {r.key: r for r in current}
    for key in sorted(now):
        r, b = now[key], before.get(key)
        if b is None:
            out.added += 1
        elif b.status in GOT_THROUGH and r.failed:
            out.newly_failing.append(_entry(r, b))
        elif b.failed and r.status in GOT_THROUGH:
            out.newly_passing.append({"case": r.case, "backend": r.backend, "status": r.status, "was": {"code": b.code, "op": b.op}})
        elif b.failed and r.failed and (b.code, b.op) != (r.code, r.op):
            out.changed.append(_entry(r, b))
        if b is not None and (figures := gates.beyond(r)):
            was = {f["figure"] for f in gates.beyond(b)}
            if new := [f for f in figures if f["figure"] not in was]:
                out.newly_beyond_gates.append({"case": r.case, "backend": r.backend, "figures": new})
    out.removed = sum(1 for key in before if key not in now)
    return out
