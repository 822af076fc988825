"""IREE's compile figures per backend: dispatches, compile seconds and module size per case (median and max)."""

from __future__ import annotations

from conformance.report.html.context import Report
from conformance.report.html.format import esc
from conformance.report.html.markup import Cell, Column, Part, table


def _n(value: float | None, fmt: str = "{:,}") -> Cell:
    return Cell("–", "muted", sort=0) if value is None else Cell(fmt.format(value), sort=value)


def _kb(value: float | None) -> Cell:
    return Cell("–", "muted", sort=0) if value is None else Cell(f"{value / 1024:,.0f}", sort=value)


def has_figures(report: Report) -> bool:
    return any(b.get("compile_stats") for b in (report.summary.get("backends") or {}).values())


def compile_figures(report: Report) -> Part:
    columns = [
        Column("backend"), Column("cases", "n"), Column("dispatches median", "n"), Column("dispatches max", "n"),
        Column("compile s median", "n"), Column("compile s max", "n"), Column("compiled alone", "n"),
        Column("module KB median", "n"), Column("module KB max", "n"),
    ]
    rows = []
    for backend in report.backends:
        f = (report.summary.get("backends", {}).get(backend) or {}).get("compile_stats")
        if not f:
            continue
        d, s, v = f["dispatches"], f["seconds"], f["vmfb_bytes_alone"]
        rows.append((f'data-backend="{esc(backend)}"', [
            report.backend_name(backend), _n(f["cases"]), _n(d["median"], "{:g}"), _n(d["max"]),
            _n(s["median"], "{:.2f}"), _n(s["max"], "{:.2f}"), _n(v["cases"]), _kb(v["median"]), _kb(v["max"]),
        ]))
    return Part(
        table("compile-table", columns, rows, stack=True, sortable=True),
        "per compiled case: dispatches in IREE's static statistics of its function; compile seconds, a batch's "
        "time shared among its cases; the .vmfb size of cases compiled alone (models; op cases compile in batches)",
    )
