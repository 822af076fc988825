"""Pass rates by case family and by op, per backend (heatmaps)."""

from __future__ import annotations

from conformance.report.html.context import Report
from conformance.report.html.format import esc, heat, pct
from conformance.report.html.markup import Cell, Column, Part, table
from conformance.report.summary import op_dtype_rows


def _backend_columns(report: Report) -> list[Column]:
    return [Column(b, "n", report.backend_name(b)) for b in report.backends]


def families(report: Report) -> Part:
    columns = [Column("family"), Column("cases", "n"), *_backend_columns(report)]
    rows = []
    for family, per in (report.summary.get("families") or {}).items():
        cells: list = [esc(family), f"{len(report.family_members.get(family, ())):,}"]
        for b in report.backends:
            c = per.get(b)
            ran = (c["pass"] + c["fail"]) if c else 0
            if c and c.get("compiled"):  # compiled for a device not here: what compiled, of what was tried
                tried = ran + c["compiled"]
                rate = (tried - c["fail"]) / tried  # failures after compile are run failures: none without a device
                cells.append(Cell(
                    f'{c["compiled"]}/{tried} compiled <small>{pct(rate, 0)}</small>', "heat", sort=rate,
                    attrs=f'{heat(rate).strip()} title="{c["compiled"]} compiled, not run (no device), {c["fail"]} fail, {c["skip"]} skip"',
                ))
                continue
            if not ran:
                cells.append(Cell("–", "muted", attrs=f'title="{c["skip"]} skipped"' if c else ""))
                continue
            rate = c["pass"] / ran
            cells.append(Cell(
                f'{c["pass"]}/{ran} <small>{pct(rate, 0)}</small>', "heat", sort=rate,
                attrs=f'{heat(rate).strip()} title="{c["pass"]} pass, {c["fail"]} fail, {c["skip"]} skip"',
            ))
        rows.append((f'data-family="{esc(family)}"', cells))
    return Part(table("family-table", columns, rows, kind="t heatmap", sortable=True), "pass / ran per backend")


def ops(report: Report) -> Part:
    """Ops x dtypes x backends: a row per op and input dtypes, a column per backend."""
    cover = report.summary.get("op_coverage") or {}
    if not cover:
        return Part("<p>No op data.</p>")
    columns = [Column("op", "op"), Column("dtypes"), *_backend_columns(report), Column("passes on", "n")]
    rows = []
    for op, dtype, per in op_dtype_rows(report.summary):
        cells: list = [esc(op), esc(dtype)]
        full, present = _heat_cells(report, per, cells)
        cells.append(Cell(f"{full}/{present}", sort=full / present if present else -1))
        rows.append(("" if present and full == present else 'class="partial"', cells))
    everywhere = nowhere = 0
    for per in cover.values():
        ran = [c for b in report.backends if (c := per.get(b)) and c.get("cases")]
        everywhere += bool(ran) and all(c["pass"] == c["cases"] for c in ran)
        nowhere += bool(ran) and not any(c["pass"] for c in ran)
    filters = (
        '<div class="filters"><input type="search" id="op-text" placeholder="filter ops…" aria-label="op filter">'
        '<label><input type="checkbox" id="op-partial"> only ops failing somewhere</label>'
        '<span id="op-count" class="muted"></span></div>'
    )
    return Part(
        filters + table("op-table", columns, rows, kind="t heatmap", sortable=True, box="owrap"),
        f"{len(cover):,} ops (overload packets: aten.softmax holds aten.softmax.int), a row per op and its cases' input dtypes: "
        f"cases that pass / that ran, per backend; {everywhere:,} ops pass everywhere they ran, {nowhere:,} pass nowhere",
    )


def _heat_cells(report: Report, per: dict, cells: list) -> tuple[int, int]:
    """Append a pass/ran heat cell per backend to `cells`; (backends where all pass, backends that ran any)."""
    full = present = 0
    for b in report.backends:
        c = per.get(b)
        if not c or not c.get("cases"):
            cells.append(Cell("–", "muted", sort=-1))
            continue
        present += 1
        full += c["pass"] == c["cases"]
        rate = c["pass"] / c["cases"]
        cells.append(Cell(f'{c["pass"]}/{c["cases"]}', "heat", sort=rate, attrs=heat(rate).strip()))
    return full, present
