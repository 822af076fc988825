"""The top of the page: the header line, overview cards, the pass-rate trend, the per-backend table."""

from __future__ import annotations

from collections import Counter

from conformance.report.html.context import Report
from conformance.report.html.format import esc, pct, seconds
from conformance.report.html.markup import Cell, Column, Part, table
from conformance.report.html.style import VERDICT_ORDER
from conformance.report.html.svg import sparkline, status_bars, trend_chart
from conformance.taxonomy import Verdict


def header(report: Report) -> str:
    s, run = report.summary, report.summary.get("run", {})
    m = s.get("matrix", {})
    baseline = (s.get("changes") or {}).get("baseline")
    facts = [
        f"started {esc(run.get('started') or '?')}",
        f"wall time {seconds(run.get('wall_seconds'))}",
        f"{m.get('cases', 0):,} cases × {len(report.backends)} backends = {m.get('results', 0):,} results",
        f"baseline {esc(baseline)}" if baseline else "no baseline",
    ]
    return f'<header class="top"><h1>Conformance report</h1><div class="meta">{" · ".join(facts)}</div></header>'


def _card(report: Report, backend: str, b: dict, regressed: int, fixed: int) -> str:
    history = report.summary.get("history") or []
    st = b["by_status"]
    ran = st.get("pass", 0) + st.get("fail", 0) + st.get("flaky", 0)
    flaky = f" · {st['flaky']:,} flaky" if st.get("flaky") else ""
    spark = sparkline([h.get("pass_rate", {}).get(backend) for h in history], report.colours[backend])
    deltas = []
    if regressed:
        deltas.append(f'<span class="bad">▼ {regressed} newly failing</span>')
    if fixed:
        deltas.append(f'<span class="good">▲ {fixed} newly passing</span>')
    return (
        f'<div class="card" data-backend="{esc(backend)}">'
        f'<div class="card-name">{report.backend_name(backend)}</div>'
        f'<div class="card-rate" data-rate="{"" if b["pass_rate"] is None else b["pass_rate"]}">{pct(b["pass_rate"])}</div>'
        f'<div class="card-line">{st.get("pass", 0):,} / {ran:,} ran pass · {st.get("fail", 0):,} fail · '
        f'{st.get("skip", 0):,} skip{flaky}</div>'
        + (f'<div class="card-line">{st["compiled"]:,} compiled, not run (no device) · compile rate '
           f'{pct(b.get("compile_rate"))}</div>' if st.get("compiled") else "")
        + (f'<div class="card-line bad">{b["unknown"]} UNKNOWN</div>' if b.get("unknown") else "")
        + (f'<div class="card-line">{" ".join(deltas)}</div>' if deltas else "")
        + spark
        + "</div>"
    )


def overview(report: Report) -> Part:
    s = report.summary
    changes = s.get("changes") or {}
    regress = Counter(i["backend"] for i in changes.get("newly_failing") or [])
    fixed = Counter(i["backend"] for i in changes.get("newly_passing") or [])
    verdicts = Counter()
    for b in s.get("backends", {}).values():
        verdicts.update(b.get("by_verdict") or {})
    cards = [
        _card(report, backend, s["backends"][backend], regress[backend], fixed[backend])
        for backend in report.backends
        if s.get("backends", {}).get(backend)
    ]
    stats = [
        ("cases", f"{s.get('matrix', {}).get('cases', 0):,}"),
        ("results", f"{s.get('matrix', {}).get('results', 0):,}"),
        ("UNKNOWN failures", f"{s.get('unknown', 0):,}"),
        ("root-cause groups", f"{len(s.get('root_causes') or []):,}"),
    ]
    if changes.get("baseline"):
        stats += [
            ("newly failing", f"{len(changes.get('newly_failing') or []):,}"),
            ("newly passing", f"{len(changes.get('newly_passing') or []):,}"),
        ]
    flaky = len(s.get("flaky") or [])
    if flaky:
        stats.append(("flaky pairs (runs disagree)", f"{flaky:,}"))
    if verdicts:
        strict = sum(verdicts[v] for v in VERDICT_ORDER if Verdict(v).is_failure)
        stats.append(("strict-run failures (FAIL, CHANGED, XPASS)", f"{strict:,}"))
    stat_html = "".join(f'<div class="stat"><div class="stat-v">{v}</div><div class="stat-k">{esc(k)}</div></div>' for k, v in stats)
    return Part(f'<div class="stats">{stat_html}</div><div class="cards">{"".join(cards)}</div>')


def trend(report: Report) -> Part:
    history = list(report.summary.get("history") or [])
    if not history:
        run = report.summary.get("run", {})
        rates = {b: v["pass_rate"] for b, v in report.summary.get("backends", {}).items()}
        history = [{"report": "this run", "started": run.get("started"), "pass_rate": rates}]
    legend = []
    for backend in report.backends:
        known = [r for r in (h.get("pass_rate", {}).get(backend) for h in history) if r is not None]
        delta = ""
        if len(known) >= 2:
            d = 100 * (known[-1] - known[-2])
            cls = "good" if d > 0 else "bad" if d < 0 else "muted"
            arrow = "▲" if d > 0 else "▼" if d < 0 else "="
            delta = f' <span class="{cls}">{arrow} {d:+.1f} pts</span>'
        legend.append(f"<li>{report.backend_name(backend)} <b>{pct(known[-1] if known else None)}</b>{delta}</li>")
    return Part(
        f'<div class="chart-row">{trend_chart(history, report.backends, report.colours)}<ul class="legend">{"".join(legend)}</ul></div>',
        f'{len(history)} report{"s" if len(history) != 1 else ""}, oldest left, this run right',
    )


def _count(key: str, n: int) -> Cell:
    return Cell(f"{n:,}", attrs=f'data-k="{esc(key)}"')  # data-k: which count, for tests and scripts


# Verdicts that only repeat a status column (SKIP is skip, FLAKY is flaky, COMPILED is compiled but for the
# stale entries XPASS counts): the table shows the status.
SAME_AS_STATUS = {Verdict.SKIP, Verdict.FLAKY, Verdict.COMPILED}


def backends(report: Report) -> Part:
    """The counts per backend (one row each, a card on a phone), their failure codes, the status bars."""
    bs = report.summary.get("backends", {})
    verdicts = [v for v in VERDICT_ORDER if v not in SAME_AS_STATUS and any((b.get("by_verdict") or {}).get(v) for b in bs.values())]
    # Pairs compiled for a device not here: their own column and rate, only when a backend has some.
    compiled = any(b["by_status"].get("compiled") for b in bs.values())
    flaky = any(b["by_status"].get("flaky") for b in bs.values())
    counted = ("pass", "fail", "skip", *(["flaky"] if flaky else []), *(["compiled"] if compiled else []))
    columns = [
        Column("backend"), Column("total", "n"), *(Column(k, "n") for k in counted),
        Column("pass rate", "n"), *([Column("compile rate", "n")] if compiled else []),
        Column("UNKNOWN", "n"), *(Column(v, "n") for v in verdicts),
    ]
    rows, bars = [], []
    for backend in report.backends:
        b = bs.get(backend)
        if not b:
            continue
        st = b["by_status"]
        rows.append((f'data-backend="{esc(backend)}"', [
            report.backend_name(backend), _count("total", b["total"]),
            *(_count(k, st.get(k, 0)) for k in counted),
            Cell(f"<b>{pct(b['pass_rate'])}</b>", attrs='data-k="pass_rate"'),
            *([Cell(pct(b.get("compile_rate")), attrs='data-k="compile_rate"')] if compiled else []),
            _count("unknown", b.get("unknown", 0)),
            *(_count(v, (b.get("by_verdict") or {}).get(v, 0)) for v in verdicts),
        ]))
        bars.append((backend, st.get("pass", 0), st.get("fail", 0), st.get("skip", 0), b["pass_rate"], st.get("compiled", 0)))
    said = "pass rate = pass / (pass + fail + flaky); skips are cases not applicable to the backend"
    if compiled:
        said += ("; compiled = compiled for the backend's target, not run for lack of such a device (no pass rate then); "
                 "compile rate = (pass + compiled + failed only when run) / (pass + fail + compiled)")
    return Part(
        table("backend-table", columns, rows, stack=True, sortable=True) + _codes(report)
        + f'<div class="chart-row">{status_bars(bars)}</div>',
        said,
    )


def _codes(report: Report) -> str:
    """Failures per backend and code: a column per code (its chip; the full names under the table)."""
    bs = report.summary.get("backends", {})
    codes = [c for c in report.codes if any((b.get("by_code") or {}).get(c) for b in bs.values())]
    if not codes:
        return ""
    columns = [Column("backend"), *(Column(c, "n", report.chip(c)) for c in codes)]
    rows = []
    for backend in report.backends:
        by_code = (bs.get(backend) or {}).get("by_code") or {}
        if backend in bs:
            rows.append((f'data-backend="{esc(backend)}"', [
                Cell(report.backend_name(backend), sort=backend),
                # each count carries its chip too: a phone shows them as cards of "chip count", without the header
                *(Cell(f"{report.chip(c)} {by_code[c]:,}", sort=by_code[c], attrs=f'data-k="{esc(c)}"') if by_code.get(c)
                  else Cell("–", "muted zero", sort=0) for c in codes),
            ]))
    legend = " ".join(f'<span class="lgi">{report.code_chip(c)}</span>' for c in codes)
    return (
        "<h3>Failure codes</h3>" + table("code-table", columns, rows, stack=True, kind="t counts")
        + f'<div class="legend-row">{legend}</div>'
    )
