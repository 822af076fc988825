"""Where the time goes: seconds per stage per backend, and the slowest pairs with their stage split."""

from __future__ import annotations

from conformance.report.html.context import Report
from conformance.report.html.format import esc
from conformance.report.html.markup import Cell, Column, Part, case_link, table
from conformance.report.html.style import ordered_stages
from conformance.report.html.svg import stage_bars, stage_colours
from conformance.report.tables import outcome

SLOWEST_SHOWN = 60


def _secs(value: float | None) -> Cell:
    if value is None:
        return Cell("–", "muted", sort=0)
    return Cell(f"{value:,.2f}" if value < 10 else f"{value:,.1f}", sort=round(value, 3))


def _legend(stages: list[str], colours: dict[str, str]) -> str:
    return "".join(f'<span class="lgi"><span class="sw" style="background:{colours[s]}"></span>{esc(s)}</span>' for s in stages)


def stages(report: Report) -> Part:
    bs = report.summary.get("backends", {})
    stages = ordered_stages({s for b in bs.values() for s in b.get("stage_seconds", {})})
    if not stages:
        return Part("<p>No timings.</p>")
    colours = stage_colours(stages)
    columns = [Column("backend"), *(Column(s, "n") for s in stages), Column("total", "n")]
    rows, bars = [], []
    for backend in report.backends:
        b = bs.get(backend)
        if not b:
            continue
        secs = b.get("stage_seconds", {})
        total = sum(secs.values())
        rows.append((f'data-backend="{esc(backend)}"', [
            Cell(report.backend_name(backend), sort=backend), *(_secs(secs.get(s)) for s in stages), Cell(f"<b>{total:,.1f}</b>", sort=total),
        ]))
        bars.append((backend, secs))
    return Part(
        f'<div class="legend-row">{_legend(stages, colours)}</div><div class="chart-row">{stage_bars(bars, stages, colours)}</div>'
        + table("stage-table", columns, rows, stack=True, sortable=True),
        "seconds summed over cases, per backend",
    )


def slowest(report: Report) -> Part:
    timed = [r for r in report.results.values() if r.timings]
    if not timed:
        return Part("<p>No timings.</p>")
    timed.sort(key=lambda r: (-sum(r.timings.values()), r.case, r.backend))
    shown = timed[:SLOWEST_SHOWN]
    stages = ordered_stages({s for r in shown for s in r.timings})
    columns = [Column("case", "case"), Column("backend"), Column("outcome"), Column("total s", "n"), *(Column(s, "n") for s in stages)]
    rows = [
        ("", [
            Cell(case_link(r.case, r.backend), sort=r.case), Cell(report.backend_name(r.backend), sort=r.backend), esc(outcome(r)),
            _secs(sum(r.timings.values())), *(_secs(r.timings.get(s)) for s in stages),
        ])
        for r in shown
    ]
    return Part(
        table("slowest-table", columns, rows, stack=True, sortable=True),
        f"the {len(shown)} slowest of {len(timed):,} timed (case, backend) pairs, seconds per stage; click a column to sort",
    )
