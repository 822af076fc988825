"""Pairs that do not give one verdict: flaky within tonight's run, and flipping from night to night."""

from __future__ import annotations

from conformance.report.html.context import Report
from conformance.report.html.format import esc
from conformance.report.html.markup import Cell, Column, Part, case_link, more, table
from conformance.execution.reruns import in_a_word

FLIPPING_SHOWN = 100
FLAKY_SHOWN = 200
OUTCOME_WORD = {"p": "pass", "f": "fail", "s": "skip", "y": "flaky", "c": "compiled, not run (no device)", ".": "not run"}


def strip(outcomes: str, reports: list[str]) -> str:
    """One small square per report, oldest first (the script draws the same in the details panel)."""
    marks = "".join(
        f'<i class="h{c if c != "." else "a"}" title="{esc(name)}: {OUTCOME_WORD.get(c, c)}"></i>' for c, name in zip(outcomes, reports)
    )
    return f'<span class="hist">{marks}</span>'


def flipping(report: Report) -> Part:
    history = report.history
    if not history or len(history.reports) < 2:
        return Part('<p class="muted">No earlier reports in this output directory: no history yet.</p>')
    pasts = ((key, report.past(key)) for key in history.pairs)
    flips = [(n, key, outcomes, since) for key, (outcomes, since, n) in pasts if n >= 2]
    flips.sort(key=lambda item: (-item[0], item[1]))
    columns = [Column("case", "case"), Column("backend"), Column("flips", "n"), Column("outcomes, oldest first"), Column("failing since")]
    rows = []
    for n, (case, backend), outcomes, since in flips[:FLIPPING_SHOWN]:
        rows.append(("", [
            Cell(case_link(case, backend), sort=case), Cell(report.backend_name(backend), sort=backend), str(n),
            Cell(strip(outcomes, history.reports), sort=outcomes), esc(history.reports[since]) if since is not None else "passes now",
        ]))
    body = table("flipping-table", columns, rows, stack=True, sortable=True) if rows else '<p class="muted">No pair flipped twice or more.</p>'
    return Part(
        body,
        f"pairs that went from pass to fail or back at least twice over the last {len(history.reports)} reports; "
        "each cell's details panel shows its own history",
    )


def flaky(report: Report) -> Part:
    """Tonight's pairs whose runs disagreed (a failure re-run with another verdict, or other output bits)."""
    pairs = report.summary.get("flaky") or []
    if not pairs:
        return Part('<p class="muted">No flaky pair: every re-run agreed with the first run.</p>')
    columns = [Column("case", "case"), Column("backend"), Column("runs, first first"), Column("what each run saw")]
    rows = [
        ("", [
            Cell(case_link(p["case"], p["backend"]), sort=p["case"]), Cell(report.backend_name(p["backend"]), sort=p["backend"]),
            esc(" / ".join(in_a_word(a) for a in p["attempts"])), esc(p["explanation"]),
        ])
        for p in pairs[:FLAKY_SHOWN]
    ]
    return Part(
        table("flaky-table", columns, rows, stack=True, sortable=True) + more(min(len(pairs), FLAKY_SHOWN), len(pairs)),
        "pairs whose runs disagreed, each run in a fresh process: no verdict to trust, none written into an xfail set "
        "(a strict pytest run fails on them unless their xfail entry expects a failure they showed)",
    )
