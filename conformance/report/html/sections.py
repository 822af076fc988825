"""The page's sections, in page order: one entry each (anchor id, title, builder); the nav is made from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from conformance.report.html import changes, compile_figures, coverage, gates, matrix, overview, run, stability, timing
from conformance.report.html.context import Report
from conformance.report.html.markup import Part


@dataclass(frozen=True)
class Section:
    id: str  # the anchor: #<id> links to it
    title: str  # in the nav and as the section's heading
    build: Callable[[Report], Part]


SECTIONS = [
    Section("overview", "Overview", overview.overview),
    Section("trend", "Trend", overview.trend),
    Section("backends", "Backends", overview.backends),
    Section("changes", "Changes", changes.changes),
    Section("root-causes", "Root causes", changes.root_causes),
    Section("flaky", "Flaky pairs", stability.flaky),
    Section("families", "Families", coverage.families),
    Section("matrix", "Matrix", matrix.matrix),
    Section("ops", "Op coverage", coverage.ops),
    Section("stages", "Stage times", timing.stages),
    Section("slowest", "Slowest pairs", timing.slowest),
    Section("flipping", "Flipping pairs", stability.flipping),
]
# Shown when a backend recorded compile figures (the IREE ones do).
COMPILE = Section("compile", "Compile figures", compile_figures.compile_figures)
# Shown when the run was made with --gates.
GATES = Section("gates", "Gates", gates.gates)
LAST = [Section("run", "Run and machine", run.run)]


def sections_of(report: Report) -> list[Section]:
    """The sections of this page: the fixed ones, those the backends contributed, then the run's facts."""
    extras = [
        Section(f"extra-{i}", str(extra.get("title") or f"section {i + 1}"), run.extra(i))
        for i, extra in enumerate(report.summary.get("sections") or [])
    ]
    figures = [GATES] * gates.has_gates(report) + [COMPILE] * compile_figures.has_figures(report)
    return [*SECTIONS, *figures, *extras, *LAST]
