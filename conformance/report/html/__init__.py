"""report.html: the nightly report as one self-contained page (no network at all).

The page is rendered here, server side, into plain HTML and inline SVG. Where
things live:

    sections.py   the table of sections (anchor, title, builder), in page order; the nav is made from it
    overview.py   header, overview cards, pass-rate trend, per-backend counts and failure codes
    changes.py    changes since the baseline, root-cause groups
    matrix.py     the cases x backends matrix: its head, legend and filters, how a cell looks
    coverage.py   pass rate per family and per op (heatmaps)
    timing.py     time per stage, the slowest pairs
    stability.py  pairs that flip from night to night
    run.py        backend-contributed sections, the run's settings, toolchain, machine
    data.py       the JSON blob the script reads, the detail chunks it inflates on demand, their field names
    page.py       head, Content-Security-Policy, nav, details panel
    context.py    Report: the facts all builders share; markup.py, style.py, format.py, svg.py: helpers

The page must hold every suite on every backend, some 100,000 results
(benchmarks/report_scale.py builds and times one), so what grows with the
results is neither an element each nor JSON parsed on load, beyond what a
reader sees at once. The sections are plain HTML. The matrix is drawn by a
small inline script (../assets/report.js) from a JSON blob, only the rows in
view; the blob also holds, deduplicated, what a tooltip and the filters read
(outcome, code, op, explanation, history). What the details panel shows
beyond that (diagnostics, the command reproducing the pair, its bundle,
timings) is in compressed chunks inside the page, inflated when a cell of
the chunk is opened (data.py says how).

Everything from tool output is escaped: HTML text and attributes with
html.escape; the JSON blob with <, >, & (and U+2028/9) as \\u escapes so it
cannot close its <script> tag (the chunks are base64); the script only ever
sets textContent. A Content-Security-Policy allows the page's own script (by
hash) and nothing else: no network, no injected script, even if escaping
were ever missed.
"""

from __future__ import annotations

from conformance.report.history import PairHistories
from conformance.report.html.context import Report
from conformance.report.html.page import render_page
from conformance.result import Result


def render(summary: dict, results: list[Result], cases: dict[str, dict], history: PairHistories | None = None) -> str:
    """The whole report.html document for a run's summary, its results, its case snapshot and its pairs' history."""
    return render_page(Report(summary, results, cases, history))
