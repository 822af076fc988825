"""The matrix: one row per case, one coloured cell per backend; the script fills the details panel."""

from __future__ import annotations

from collections import Counter

from conformance.localize.record import localization, summary
from conformance.report.html.context import Report
from conformance.report.html.format import esc
from conformance.report.html.markup import Part
from conformance.report.html.style import CHANGE_CLASS, STATUS_CLASS, VERDICT_CLASS
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


def _cell(report: Report, case: str, backend: str) -> str:
    r = report.results.get((case, backend))
    if r is None:
        return '<td class="na">·</td>'
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
    change = report.changed.get((case, backend))
    if change:
        cls.append(CHANGE_CLASS[change[0]])
    return f'<td class="{" ".join(cls)}">{text}</td>'


def _localized(report: Report, case: str) -> str:
    """A model row names the op --localize blamed on each backend (its cell's panel has the rest)."""
    found = []
    for backend in report.backends:
        record = localization(report.results.get((case, backend)))
        if record and "error" not in record:
            found.append(f'<span class="loc" title="{esc(summary(record))}">→ {esc(record["op"])} '
                         f'<span class="muted">[{esc(backend)}]</span></span>')
    return "".join(found)


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
    nb = len(report.backends)
    body, i = [], 0
    for fi, fam in enumerate(report.families):
        members = report.family_members[fam]
        body.append(f'<tr class="fh" data-f="{fi}"><th colspan="{nb + 1}">{esc(fam)} <span>{len(members):,}</span></th></tr>')
        for case in members:
            cells = "".join(_cell(report, case, b) for b in report.backends)
            body.append(f'<tr data-i="{i}" data-f="{fi}"><th>{esc(case)}{_localized(report, case)}</th>{cells}</tr>')
            i += 1
    head = "<tr><th>case</th>" + "".join(f'<th class="bh">{report.backend_name(b)}</th>' for b in report.backends) + "</tr>"
    counts = Counter(r.status for r in report.results.values())
    return Part(
        _filters(report) + _legend(report)
        + f'<div class="mwrap"><table class="mx" id="matrix-table"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table></div>',
        f"{len(report.matrix_rows):,} cases × {nb} backends: {counts['pass']:,} pass, {counts['fail']:,} fail, "
        f"{counts['skip']:,} skip, {counts['flaky']:,} flaky" + (f", {counts['compiled']:,} compiled, not run" if counts["compiled"] else "")
        + ". Hover a cell for its explanation, click it for details.",
    )
