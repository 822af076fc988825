"""Rewriting an xfail set from a run's results.

Only cases the run actually ran are touched, so a `-k` subset run leaves the
rest of the file alone. Failures are added or updated (keeping notes),
passes and skips are dropped (except of an entry marked flaky, which fails
only sometimes, or CPU-dependent, which passes compiled for another CPU), and entries whose case no longer exists in the
registry are reported as stale (and dropped only when asked). A FLAKY pair
(its runs disagreed) gives no verdict to pin: it is never added, and an entry
it has is kept exactly as it was. A case compiled and not run (no device)
drops an entry expecting it to fail by compile and keeps one expecting a
failure when run: that was not checked.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from conformance.result import Result
from conformance.taxonomy import WRONG_VALUES, Status
from conformance.xfail.judge import expects_run
from conformance.xfail.sets import Entry, XfailSet


@dataclass
class UpdateReport:
    backend: str
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)  # left as they were

    def lines(self) -> list[str]:
        out = [
            f"{self.backend}: {len(self.added)} added, {len(self.changed)} changed, "
            f"{len(self.removed)} removed, {len(self.stale)} stale"
            + (f", {len(self.flaky)} flaky (left as they were)" if self.flaky else "")
        ]
        for label, ids in (("added", self.added), ("changed", self.changed), ("removed", self.removed)):
            out += [f"  {label}: {i}" for i in ids]
        out += stale_lines(self.stale)
        out += [f"  flaky, left as it was (its runs disagree): {i}" for i in self.flaky]
        return out


def stale_lines(stale: list[str], shown: int = 10) -> list[str]:
    """The stale entries: the first `shown` by name, the others counted by their id's first part.

    An entry of a suite the command was not told to load (`--suite opinfo`)
    reads as stale too: thousands of lines would hide the one that matters.
    """
    out = [f"  stale (no such case in the registry): {case}" for case in stale[:shown]]
    if len(stale) > shown:
        prefixes = Counter(case.split(".", 1)[0] for case in stale[shown:])
        counted = ", ".join(f"{prefix}.*: {n}" for prefix, n in prefixes.most_common())
        out.append(f"  ... and {len(stale) - shown} more stale ({counted}); "
                   "the entries of a suite not given to this command (--suite NAME) read as stale")
    return out


def update(xfails: XfailSet, run: Iterable[Result], known_cases: set[str] | None, drop_stale: bool = False) -> UpdateReport:
    report = UpdateReport(xfails.backend)
    for result in run:
        if result.backend != xfails.backend:
            continue
        old = xfails.entries.get(result.case)
        if result.status == Status.FLAKY:
            report.flaky.append(result.case)
        elif result.status == Status.FAIL:
            new = Entry(
                code=result.code or "UNKNOWN",
                explanation=result.explanation,
                stage=result.stage,
                op=result.op,
                note=old.note if old else None,
                flaky=old.flaky if old else False,
                cpu_dependent=old.cpu_dependent if old else None,
                garbage_output=old.garbage_output if old and result.code in WRONG_VALUES else None,
            )
            if old is None:
                report.added.append(result.case)
            elif (old.code, old.op, old.stage, old.explanation) != (new.code, new.op, new.stage, new.explanation):
                report.changed.append(result.case)
            xfails.entries[result.case] = new
        elif old is not None and not old.may_pass and not (result.status == Status.COMPILED and expects_run(old)):
            del xfails.entries[result.case]
            report.removed.append(result.case)
    if known_cases is not None:
        report.stale = sorted(c for c in xfails.entries if c not in known_cases)
        if drop_stale:
            for case in report.stale:
                del xfails.entries[case]
    for ids in (report.added, report.changed, report.removed, report.flaky):
        ids.sort()
    return report
