"""report.html: the nightly report as one self-contained page (no network at all).

The page is rendered here, server side, into plain HTML and inline SVG. Where
things live:

    sections.py   the table of sections (anchor, title, builder), in page order; the nav is made from it
    overview.py   header, overview cards, pass-rate trend, per-backend table
    changes.py    changes since the baseline, root-cause groups
    matrix.py     the cases x backends matrix, its legend and filters
    coverage.py   pass rate per family and per op (heatmaps)
    timing.py     time per stage, the slowest pairs
    stability.py  pairs that flip from night to night
    run.py        backend-contributed sections, the run's settings, toolchain, machine
    data.py       the JSON blob the script reads, and its field names (the one list, shared with the script)
    page.py       head, Content-Security-Policy, nav, details panel
    context.py    Report: the facts all builders share; markup.py, style.py, format.py, svg.py: helpers

The matrix's cells carry their outcome as CSS classes (status, failure
code, xfail verdict, change since the baseline). The per-result facts a
reader wants on hover or click (explanation, diagnostics, the command
reproducing it, its history over past reports, timings) travel once,
deduplicated, in a JSON blob that a small inline script (../assets/report.js)
reads to fill a details panel, set tooltips, filter the matrix and sort tables.

Everything from tool output is escaped: HTML text and attributes with
html.escape; the JSON blob with <, >, & (and U+2028/9) as \\u escapes so it
cannot close its <script> tag; the script only ever sets textContent. A
Content-Security-Policy allows the page's own script (by hash) and nothing
else: no network, no injected script, even if escaping were ever missed.
"""

from __future__ import annotations

from conformance.report.history import PairHistories
from conformance.report.html.context import Report
from conformance.report.html.page import render_page
from conformance.result import Result


def render(summary: dict, results: list[Result], cases: dict[str, dict], history: PairHistories | None = None) -> str:
    """The whole report.html document for a run's summary, its results, its case snapshot and its pairs' history."""
    return render_page(Report(summary, results, cases, history))
