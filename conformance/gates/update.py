"""Rewriting a gates file from a run's results (what `conformance gates update` does).

Only the chosen cases (chosen_by_default, or already in the file) that the
run passed are written: their figures as measured, each one the run
measured (a module's size and compile time only when compiled alone, a
run time only from a run with --gates). A figure the run did not measure
keeps its golden value; a case that failed, was skipped or not run keeps
its entry as it was (a failure is the xfail sets' business, not a new
golden figure). Notes and tolerances are the humans' and are kept.
Entries whose case no longer exists are reported as stale (and dropped only
when asked), as xfail updates do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from conformance.gates.figures import FIGURES
from conformance.gates.sets import GateEntry, GateSet
from conformance.result import Result
from conformance.xfail.update import stale_lines
from conformance.taxonomy import Status


@dataclass
class UpdateReport:
    backend: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # in the file, in the run, not passed: left as they were
    stale: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"{self.backend}: {len(self.added)} added, {len(self.updated)} updated, {len(self.kept)} kept, {len(self.stale)} stale"]
        out += [f"  added: {i}" for i in self.added]
        out += [f"  kept as it was (not passed in this run): {i}" for i in self.kept]
        out += stale_lines(self.stale)
        return out


def update(
    gates: GateSet,
    run: Iterable[Result],
    chosen: Callable[[str], bool],
    known_cases: set[str] | None,
    drop_stale: bool = False,
) -> UpdateReport:
    """`chosen(case_id)`: whether a case not yet in the file is gated (gates/selection.py's rule)."""
    report = UpdateReport(gates.backend)
    for result in run:
        if result.backend != gates.backend or not (result.case in gates.entries or chosen(result.case)):
            continue
        old = gates.entries.get(result.case)
        measured = {name: value for name, figure in FIGURES.items() if (value := figure.measured(result.extras or {})) is not None}
        if result.status not in (Status.PASS, Status.COMPILED) or not measured:
            if old is not None:
                report.kept.append(result.case)
            continue
        entry = old or GateEntry()
        entry.figures = {**entry.figures, **measured}
        gates.entries[result.case] = entry
        (report.updated if old is not None else report.added).append(result.case)
    if known_cases is not None:
        report.stale = sorted(c for c in gates.entries if c not in known_cases)
        if drop_stale:
            for case in report.stale:
                del gates.entries[case]
    for ids in (report.added, report.updated, report.kept):
        ids.sort()
    return report
