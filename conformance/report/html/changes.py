"""What to act on: changes since the baseline, and failures grouped by root cause."""

from __future__ import annotations

from conformance.report.html.context import Report
from conformance.report.html.format import clip, esc
from conformance.report.html.gates import gate_table
from conformance.report.html.markup import Cell, Column, Part, case_link, cell_anchor, more, table

CHANGES_SHOWN = 300
ROOT_CAUSES_SHOWN = 300
EXPLANATION_SHOWN = 400  # characters of an explanation in tables (the details panel shows it whole)


def _failing(report: Report, title: str, items: list[dict], table_id: str) -> str:
    if not items:
        return f'<h3>{title}</h3><p class="muted">None.</p>'
    columns = [Column("case", "case"), Column("backend"), Column("now"), Column("op"), Column("was"), Column("explanation", "expl")]
    rows = []
    for i in items[:CHANGES_SHOWN]:
        was = i.get("was") or {}
        rows.append(("", [
            case_link(i["case"], i["backend"]), report.backend_name(i["backend"]), report.code_chip(i.get("code")),
            esc(i.get("op") or "–"), report.code_chip(was.get("code")) if was else "PASS",
            esc(clip(i.get("explanation"), EXPLANATION_SHOWN)),
        ]))
    return f"<h3>{title} ({len(items):,})</h3>" + table(table_id, columns, rows, stack=True) + more(CHANGES_SHOWN, len(items))


def _passing(report: Report, items: list[dict]) -> str:
    if not items:
        return '<h3>Newly passing</h3><p class="muted">None.</p>'
    columns = [Column("case", "case"), Column("backend"), Column("was"), Column("op")]
    rows = [
        ("", [case_link(i["case"], i["backend"]), report.backend_name(i["backend"]),
              report.code_chip((i.get("was") or {}).get("code")), esc((i.get("was") or {}).get("op") or "–")])
        for i in items[:CHANGES_SHOWN]
    ]
    return f"<h3>Newly passing ({len(items):,})</h3>" + table("newly-passing", columns, rows, stack=True) + more(CHANGES_SHOWN, len(items), "more")


def changes(report: Report) -> Part:
    ch = report.summary.get("changes") or {}
    if not ch.get("baseline"):
        return Part("<p>No baseline: this is the first report in its directory (or the run was made with --baseline none).</p>")
    nf, np_, changed = ch.get("newly_failing") or [], ch.get("newly_passing") or [], ch.get("changed") or []
    gated = ch.get("newly_beyond_gates") or []
    return Part(
        f'<p>Baseline <b>{esc(ch["baseline"])}</b>: <span class="bad">{len(nf):,} newly failing</span> (regressions), '
        f'<span class="good">{len(np_):,} newly passing</span>, {len(changed):,} failing differently; '
        f'{ch.get("added", 0):,} new (case, backend) pairs, {ch.get("removed", 0):,} gone.</p>'
        + _failing(report, "Newly failing", nf, "newly-failing")
        + _failing(report, "Failing differently", changed, "changed")
        + _passing(report, np_)
        + (f"<h3>Newly beyond gate tolerance, still passing ({len(gated):,})</h3>" + gate_table(report, "newly-beyond-gates", gated) if gated else "")
    )


def root_causes(report: Report) -> Part:
    groups = report.summary.get("root_causes") or []
    if not groups:
        return Part("<p>No failures.</p>")
    biggest = max(g["count"] for g in groups)
    columns = [
        Column("#", "n"), Column("count", "n"), Column("code"), Column("op", "op"), Column("tool"), Column("backends"),
        Column("example", "case"), Column("explanation", "expl"), Column("cases"),
    ]
    rows = []
    for n, g in enumerate(groups[:ROOT_CAUSES_SHOWN], 1):
        ex = g.get("example") or {}
        cases = g.get("cases") or []
        listing = (
            f'<details><summary>{len(cases):,} case{"s" if len(cases) != 1 else ""}</summary>'
            f'<div class="caselist">{" ".join(esc(c) for c in cases)}</div></details>'
        )
        bar = f'<span class="cbar" style="width:{max(2, round(60 * g["count"] / biggest))}px"></span>'
        kind = f'<div class="muted">{esc(g["kind"])}</div>' if g.get("kind") else ""
        backends = "<br>".join(f"{report.backend_name(name)} {count:,}" for name, count in (g.get("backends") or {}).items())
        ident = f'<div class="muted"><code title="conformance issue {esc(g["id"])} --results .">{esc(g["id"])}</code></div>' if g.get("id") else ""
        rows.append(("", [
            Cell(f"{n}{ident}", sort=n), Cell(f"{bar}{g['count']:,}", sort=g["count"]), report.code_chip(g["code"]) + kind,
            esc(g.get("op") or "–"), esc(g.get("tool") or "–"), backends,
            f'<a href="{esc(cell_anchor(ex.get("case", ""), ex.get("backend", "")))}">{esc(ex.get("case"))}</a>'
            f'<div class="muted">{esc(ex.get("backend") or "")}, stage {esc(ex.get("stage") or "?")}</div>',
            esc(clip(ex.get("explanation"), EXPLANATION_SHOWN)), listing,
        ]))
    total = sum(g["count"] for g in groups)
    return Part(
        table("root-cause-table", columns, rows, stack=True) + more(ROOT_CAUSES_SHOWN, len(groups), "smaller groups (all of them are in summary.json)"),
        f"{len(groups):,} groups of {total:,} failures by (stage, code, op, the tool that failed), across the backends sharing "
        "the tool, largest first: one fix usually clears a whole group. An issue file for the tool's tracker: "
        "conformance issue ID --results . in the report's directory (a run with --artifacts; docs/filing-issues.md)",
    )
