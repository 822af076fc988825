"""The matrix: one row per case, one coloured cell per backend, drawn by the script (only the rows in view)."""

from __future__ import annotations

from collections import Counter

from conformance.report.html.context import Report
from conformance.report.html.format import esc
from conformance.report.html.markup import Part
from conformance.report.html.style import CHANGE_CLASS, STATUS_CLASS, VERDICT_CLASS
from conformance.result import Result
from conformance.taxonomy import Code, Status, Verdict

VERDICT_LEGEND = [
    ("f k0 vx", "", "XFAIL: fails as its xfail set says"),
    ("f k0 vf", "", "FAIL: fails, not in the xfail set"),
    ("f k0 vc", "", "CHANGED: fails, not as listed"),
    ("p vp", "XP", "XPASS: passes, but listed"),
    ("p nf", "", "newly failing"),
    ("p np", "", "newly passing"),
    ("p nc", "", "failing differently"),
]
FLAKY_TEXT = "FLK"
OUTCOME_FILTERS = [
    ("", "any outcome"), ("p", "pass"), ("f", "fail"), ("s", "skip"), ("cp", "compiled, not run (no device)"),
    ("u", "unexpected (FAIL, CHANGED, XPASS)"),
    ("y", "flaky"), ("vx", "XFAIL"), ("vp", "XPASS"), ("vc", "CHANGED"), ("vf", "FAIL verdict"), ("n", "changed since the baseline"),
    ("nf", "newly failing"), ("d", "backends disagree"),
]


NOT_RUN = ("na", "·")  # how a pair the run did not make looks


def look(report: Report, r: Result | None, change: tuple[int, str | None] | None) -> tuple[str, str]:
    """How a cell is drawn: its CSS classes (status, failure code, verdict, change since the baseline) and its text."""
    if r is None:
        return NOT_RUN
    cls = [STATUS_CLASS.get(r.status, "na")]
    text = ""
    if r.failed:
        code = r.code or Code.UNKNOWN
        cls.append(f"k{report.code_index.get(code, 0)}")
        text = report.code_style[code][0]
    elif r.status == "skip":
        text = "–"
    elif r.status == Status.FLAKY:
        text = FLAKY_TEXT
    elif r.status == Status.COMPILED:
        text = "C"
    if r.verdict in VERDICT_CLASS:
        cls.append(VERDICT_CLASS[r.verdict])
        if r.verdict == Verdict.XPASS:
            text = "XP"
    if change:
        cls.append(CHANGE_CLASS[change[0]])
    return " ".join(cls), text


def _legend(report: Report) -> str:
    items = [
        '<span class="lgi"><span class="lg p"></span>pass</span>',
        '<span class="lgi"><span class="lg s">–</span>skip (not applicable)</span>',
        f'<span class="lgi"><span class="lg y">{FLAKY_TEXT}</span>flaky (its runs disagree)</span>',
        '<span class="lgi"><span class="lg cp">C</span>compiled for its target, not run: no such device here</span>',
        '<span class="lgi"><span class="lg na">·</span>not run</span>',
    ]
    for code in report.codes:
        items.append(f'<span class="lgi"><span class="lg k{report.code_index[code]}">{esc(report.code_style[code][0])}</span>{esc(code)}</span>')
    verdicts = "".join(f'<span class="lgi"><span class="lg {cls}">{text}</span>{esc(label)}</span>' for cls, text, label in VERDICT_LEGEND)
    return f'<div class="legend-row">{"".join(items)}</div><div class="legend-row">{verdicts}</div>'


def _filters(report: Report) -> str:
    fam_opts = "".join(f'<option value="{i}">{esc(f)}</option>' for i, f in enumerate(report.families))
    be_opts = "".join(f'<option value="{i}">{esc(b)}</option>' for i, b in enumerate(report.backends))
    code_opts = "".join(f'<option value="k{report.code_index[c]}">{esc(c)}</option>' for c in report.codes)
    outcome_opts = "".join(f'<option value="{v}">{esc(label)}</option>' for v, label in OUTCOME_FILTERS)
    return (
        '<div class="filters">'
        '<input type="search" id="f-text" placeholder="filter: case, op, code, explanation…" aria-label="text filter">'
        f'<select id="f-family" aria-label="family"><option value="">all families</option>{fam_opts}</select>'
        f'<select id="f-backend" aria-label="backend"><option value="">all backends</option>{be_opts}</select>'
        f'<select id="f-outcome" aria-label="outcome">{outcome_opts}<optgroup label="failure code">{code_opts}</optgroup></select>'
        '<button type="button" id="f-reset">reset</button><span id="f-count" class="muted"></span></div>'
    )


def matrix(report: Report) -> Part:
    """The head and the legend; the script draws the rows in view from the page's data (data.py), as the reader scrolls."""
    nb = len(report.backends)
    head = '<tr><th><span class="cid">case</span></th>' + "".join(f'<th class="bh">{report.backend_name(b)}</th>' for b in report.backends) + "</tr>"
    # The case column is as wide as the longest id (monospace: ch), at most what the style sheet allows: the
    # same width whichever rows are drawn.
    longest = max((len(c) for c in report.matrix_rows), default=4)
    counts = Counter(r.status for r in report.results.values())
    return Part(
        _filters(report) + _legend(report)
        + f'<div class="mwrap"><table class="mx" id="matrix-table" style="--case-ch:{longest + 1}ch"><thead>{head}</thead>'
        "<tbody></tbody></table></div>"
        '<noscript><p class="muted">The matrix is drawn by the page\'s script: JavaScript is off.</p></noscript>',
        f"{len(report.matrix_rows):,} cases × {nb} backends: {counts['pass']:,} pass, {counts['fail']:,} fail, "
        f"{counts['skip']:,} skip, {counts['flaky']:,} flaky" + (f", {counts['compiled']:,} compiled, not run" if counts["compiled"] else "")
        + ". Hover a cell for its explanation, click it for details.",
    )
