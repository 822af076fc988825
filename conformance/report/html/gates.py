"""--gates: the pairs whose figures are beyond their golden ones (regressions of speed or size, their verdicts
still PASS), those better than golden beyond tolerance (a stale golden), and the diff's newly beyond."""

from __future__ import annotations

from conformance.report.html.context import Report
from conformance.report.html.format import esc
from conformance.report.html.markup import Cell, Column, Part, case_link, more, table

SHOWN = 300


def has_gates(report: Report) -> bool:
    return bool(report.summary.get("gates"))


def gate_table(report: Report, table_id: str, pairs: list[dict]) -> str:
    """One row per figure: the pair, the figure, golden, measured, the tolerance it may move by, the change."""
    columns = [
        Column("case", "case"), Column("backend"), Column("figure"), Column("golden", "n"), Column("measured", "n"),
        Column("allowed ±", "n"), Column("change", "n"),
    ]
    rows = []
    for pair in pairs[:SHOWN]:
        for f in pair["figures"]:
            change = (f["measured"] - f["golden"]) / f["golden"] if f["golden"] else 0.0
            rows.append(("", [
                case_link(pair["case"], pair["backend"]), report.backend_name(pair["backend"]), esc(f["figure"]),
                Cell(f"{f['golden']:,.6g}", sort=f["golden"]), Cell(f"{f['measured']:,.6g}", sort=f["measured"]),
                Cell(f"{f['allowed']:,.6g}", sort=f["allowed"]), Cell(f"{change:+.0%}", "bad" if change > 0 else "good", sort=change),
            ]))
    return table(table_id, columns, rows, stack=True, sortable=True) + more(SHOWN, len(pairs))


def gates(report: Report) -> Part:
    g = report.summary["gates"]
    beyond, below = g["beyond"], g["below"]
    body = (
        f'<p>{g["judged"]:,} gated pairs judged on {g["figures"]:,} figures: '
        f'<span class="bad">{len(beyond):,} beyond tolerance</span> (their verdicts stay PASS: a regression of speed or '
        f'size, not of correctness), <span class="good">{len(below):,} better than golden</span> beyond tolerance '
        f'(update the golden: <code>conformance gates update</code>); {g["unmeasured"]:,} figures not measured.</p>'
    )
    body += "<h3>Beyond tolerance</h3>" + (gate_table(report, "gates-beyond", beyond) if beyond else '<p class="muted">None.</p>')
    if below:
        body += "<h3>Better than golden beyond tolerance</h3>" + gate_table(report, "gates-below", below)
    return Part(body, "dispatches, module size, compile and run time against gate_sets/<backend>.toml (docs/gates.md)")
