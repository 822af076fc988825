"""report.html: the nightly report as one self-contained page (no network at all).

The page is rendered here, server side, into plain HTML and inline SVG: the
matrix of cases x backends is a compact table whose cells carry their outcome
as CSS classes (status, failure code, xfail verdict, change since the
baseline). The per-result facts a reader wants on hover or click (explanation,
stage, op, timings, reproducer path) travel once, deduplicated, in a JSON blob
that a small inline script (assets/report.js) reads to fill a details panel,
set tooltips and filter the matrix. The full `details` of results are not
embedded: they are in results.jsonl and the reproducer bundles.

Everything from tool output is escaped: HTML text and attributes with
html.escape; the JSON blob with <, >, & (and U+2028/9) as \\u escapes so it
cannot close its <script> tag; the script only ever sets textContent. A
Content-Security-Policy allows the page's own script (by hash) and nothing
else: no network, no injected script, even if escaping were ever missed.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import quote

from conformance.report.html_svg import (
    BACKEND_COLOURS,
    esc,
    pct,
    seconds,
    sparkline,
    stage_bars,
    stage_colours,
    status_bars,
    trend_chart,
)
from conformance.result import Result
from conformance.taxonomy import Code, Stage, Verdict

ASSETS = Path(__file__).with_name("assets")
ROOT_CAUSES_SHOWN = 300
CHANGES_SHOWN = 300
EXPLANATION_SHOWN = 400  # characters of an explanation in tables (the matrix panel shows it whole)
EXPLANATION_EMBEDDED = 4000  # characters of an explanation kept in the JSON blob

# Failure codes: abbreviation shown in a matrix cell, and its colour. Hues
# group the kinds: purple frontend, orange unsupported, red compiler, dark red
# runtime, pink numerics, brown the case or the environment, black UNKNOWN.
CODE_STYLE: dict[str, tuple[str, str]] = {
    Code.EXPORT_UNSUPPORTED: ("EXP", "#8e6bbf"),
    Code.DYNAMIC_SHAPE_UNSUPPORTED: ("DYN", "#a58bd0"),
    Code.TYPE_REFINEMENT: ("TRF", "#6f4fa8"),
    Code.UNSUPPORTED_OP: ("UOP", "#f28e2b"),
    Code.ILLEGAL_TYPE: ("ITY", "#f5a95b"),
    Code.CUSTOM_OP_UNCONVERTIBLE: ("CUC", "#d9771a"),
    Code.VERIFIER_ERROR: ("VER", "#e15759"),
    Code.COMPILER_ERROR: ("CMP", "#c9383a"),
    Code.RUNTIME_ERROR: ("RUN", "#9c2f2f"),
    Code.CRASH: ("CRS", "#5e1414"),
    Code.TIMEOUT: ("TMO", "#b05a7a"),
    Code.NUMERIC_MISMATCH: ("NUM", "#d64f9e"),
    Code.SHAPE_MISMATCH: ("SHP", "#c75ba8"),
    Code.DTYPE_MISMATCH: ("DTY", "#a9478f"),
    Code.NAN_MISMATCH: ("NAN", "#ef9dcc"),
    Code.STRUCTURE_MISMATCH: ("STR", "#8f3a70"),
    Code.CASE_ERROR: ("CAS", "#9c755f"),
    Code.NONDETERMINISTIC_REFERENCE: ("NDR", "#b59a86"),
    Code.TOOLCHAIN_SKEW: ("SKW", "#8c6d31"),
    Code.TOOL_MISSING: ("TMS", "#a39a96"),
    Code.UNKNOWN: ("UNK", "#222222"),
}
FALLBACK_CODE_COLOURS = ["#5f6b7a", "#7d5a50", "#4b6a88", "#6b5b95", "#807040"]
STATUS_CLASS = {"pass": "p", "fail": "f", "skip": "s"}
VERDICT_CLASS = {Verdict.XFAIL: "vx", Verdict.XPASS: "vp", Verdict.CHANGED: "vc", Verdict.FAIL: "vf"}
VERDICT_ORDER = [v.value for v in Verdict]
NEW_CLASS = {1: "nf", 2: "np", 3: "nc"}  # newly failing, newly passing, failing differently
STAGE_ORDER = [s.value for s in Stage]


def render(summary: dict, results: list[Result], cases: dict[str, dict]) -> str:
    """The whole report.html document for a run's summary, its results and its case snapshot."""
    return _Page(summary, results, cases or {}).render()


def _json_for_script(data) -> str:
    """JSON that is safe inside <script type="application/json">: no `<`, `>`, `&` can close the tag."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))  # ASCII: U+2028/9 come out escaped too
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, escaped)
    return text


def _clip(text: str | None, limit: int) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cell_anchor(case: str, backend: str) -> str:
    return "#cell=" + quote(case, safe="") + "|" + quote(backend, safe="")


def _heat(rate: float | None) -> str:
    """A background for a pass rate: a clear green at 100%, then yellow to red down to 50% and below.

    Most rates sit between 50% and 100%, so the scale spends its hues there.
    """
    if rate is None:
        return ""
    if rate >= 1:
        return ' style="background:hsl(125,55%,78%)"'
    hue = round(95 * max(0.0, (rate - 0.5) / 0.5) ** 1.3)
    return f' style="background:hsl({hue},78%,{84 if hue > 30 else 86}%)"'


def _text_colour(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return "#111" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "#fff"


class _Strings:
    """A string table: each distinct string once in the JSON, cells refer to it by index."""

    def __init__(self):
        self.items: list[str] = []
        self.index: dict[str, int] = {}

    def __call__(self, value: str | None) -> int | None:
        if value is None or value == "":
            return None
        i = self.index.get(value)
        if i is None:
            i = self.index[value] = len(self.items)
            self.items.append(value)
        return i


class _Page:
    def __init__(self, summary: dict, results: list, cases: dict[str, dict]):
        self.summary = summary
        self.cases = cases
        self.results: dict[tuple[str, str], Result] = {}
        for r in results:
            r = r if isinstance(r, Result) else Result.from_dict(r)
            self.results[(r.case, r.backend)] = r
        # Backends in the order the run named them (the golden one usually first), then any others.
        present = set(summary.get("backends") or {}) | {b for _, b in self.results}
        order = [b for b in summary.get("run", {}).get("backends") or [] if b in present]
        for backend in [*(summary.get("matrix", {}).get("backends") or []), *sorted(present)]:
            if backend not in order:
                order.append(backend)
        self.backends: list[str] = order
        self.colours = {b: BACKEND_COLOURS[i % len(BACKEND_COLOURS)] for i, b in enumerate(order)}
        codes = {c for b in (summary.get("backends") or {}).values() for c in b.get("by_code") or {}}
        codes |= {r.code or Code.UNKNOWN for r in self.results.values() if r.failed}
        # Codes only the baseline had (tonight their last failure was fixed) are named in "newly passing".
        changes = summary.get("changes") or {}
        codes |= {(i.get("was") or {}).get("code") for key in ("newly_passing", "changed") for i in changes.get(key) or []} - {None}
        self.codes = sorted(codes, key=lambda c: (list(CODE_STYLE).index(c) if c in CODE_STYLE else len(CODE_STYLE), c))
        self.code_index = {c: i for i, c in enumerate(self.codes)}
        self.code_style = self._code_styles()
        by_family: dict[str, set[str]] = defaultdict(set)
        for case, _ in self.results:
            by_family[self.family(case)].add(case)
        self.matrix_families = sorted(by_family)  # matrix rows: by family, then case id
        self.family_members = {f: sorted(by_family[f]) for f in self.matrix_families}
        self.matrix_rows = [c for f in self.matrix_families for c in self.family_members[f]]
        self.new: dict[tuple[str, str], tuple[int, str | None]] = {}
        for flag, key in ((1, "newly_failing"), (2, "newly_passing"), (3, "changed")):
            for item in changes.get(key) or []:
                self.new[(item["case"], item["backend"])] = (flag, (item.get("was") or {}).get("code"))

    # ---------------------------------------------------------------- helpers

    def _code_styles(self) -> dict[str, tuple[str, str]]:
        styles, used, extra = {}, {a for a, _ in CODE_STYLE.values()}, 0
        for code in self.codes:
            if code in CODE_STYLE:
                styles[code] = CODE_STYLE[code]
                continue
            abbr = "".join(w[:1] for w in code.split("_") if w)[:3].upper() or code[:3].upper()
            while abbr in used:
                abbr = (abbr[:2] + str(extra))[:3]
                extra += 1
            used.add(abbr)
            styles[code] = (abbr, FALLBACK_CODE_COLOURS[len(styles) % len(FALLBACK_CODE_COLOURS)])
        return styles

    def family(self, case: str) -> str:
        return self.cases.get(case, {}).get("family") or "unknown"

    def code_chip(self, code: str | None, count: int | None = None) -> str:
        if not code:
            return "–"
        abbr, colour = self.code_style.get(code, ("?", "#777777"))
        n = f" {count}" if count is not None else ""
        return (
            f'<span class="chip" style="background:{colour};color:{_text_colour(colour)}" title="{esc(code)}">'
            f"{esc(abbr)}</span> {esc(code)}{n}"
        )

    def backend_name(self, backend: str) -> str:
        colour = self.colours.get(backend, "#888")
        return f'<span class="bn"><span class="sw" style="background:{colour}"></span>{esc(backend)}</span>'

    # ---------------------------------------------------------------- page

    def render(self) -> str:
        script = (ASSETS / "report.js").read_text()
        digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
        css = (ASSETS / "report.css").read_text() + self._code_css()
        started = self.summary.get("run", {}).get("started") or ""
        body = [
            self._header(),
            '<nav aria-label="sections">'
            + "".join(
                f'<a href="#{a}">{t}</a>'
                for a, t in (
                    ("overview", "Overview"), ("trend", "Trend"), ("backends", "Backends"), ("changes", "Changes"),
                    ("root-causes", "Root causes"), ("families", "Families"), ("matrix", "Matrix"),
                    ("ops", "Op coverage"), ("stages", "Stage times"),
                    *((f"extra-{n}", esc(x.get("title"))) for n, x in enumerate(self.summary.get("sections") or [])),
                    ("run", "Run"),
                )
            )
            + "</nav>",
            "<main>",
            self._overview(),
            self._trend(),
            self._backends(),
            self._changes(),
            self._root_causes(),
            self._families(),
            self._matrix(),
            self._ops(),
            self._stages(),
            self._extra_sections(),
            self._run(),
            "</main>",
            '<aside id="panel" hidden aria-live="polite"><button type="button" id="panel-close" '
            'aria-label="close">×</button><h3 id="panel-title"></h3><dl id="panel-body"></dl></aside>',
            f'<script type="application/json" id="report-data">{_json_for_script(self._data())}</script>',
            f"<script>{script}</script>",
        ]
        csp = (
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
            f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
        )
        page = (
            "<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>Conformance report {esc(started)}</title>"
            f"<style>{css}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
        )
        # Pure ASCII, whatever encoding the file is written in: the script, the style and the JSON
        # are ASCII already (so untouched), text and attributes get character references.
        return page.encode("ascii", "xmlcharrefreplace").decode("ascii")

    def _code_css(self) -> str:
        rules = []
        for code in self.codes:
            i = self.code_index[code]
            colour = self.code_style[code][1]
            rules.append(f".mx td.k{i},.lg.k{i}{{background-color:{colour};color:{_text_colour(colour)}}}")
        return "\n" + "\n".join(rules) + "\n"

    # ---------------------------------------------------------------- header and overview

    def _header(self) -> str:
        s, run = self.summary, self.summary.get("run", {})
        m = s.get("matrix", {})
        baseline = (s.get("changes") or {}).get("baseline")
        facts = [
            f"started {esc(run.get('started') or '?')}",
            f"wall time {seconds(run.get('wall_seconds'))}",
            f"{m.get('cases', 0):,} cases × {len(self.backends)} backends = {m.get('results', 0):,} results",
            f"baseline {esc(baseline)}" if baseline else "no baseline",
        ]
        return (
            '<header class="top"><h1>Conformance report</h1>'
            f'<div class="meta">{" · ".join(facts)}</div></header>'
        )

    def _overview(self) -> str:
        s = self.summary
        changes = s.get("changes") or {}
        regress = Counter(i["backend"] for i in changes.get("newly_failing") or [])
        fixed = Counter(i["backend"] for i in changes.get("newly_passing") or [])
        history = s.get("history") or []
        verdicts = Counter()
        for b in s.get("backends", {}).values():
            verdicts.update(b.get("by_verdict") or {})
        strict = sum(verdicts[v] for v in VERDICT_ORDER if Verdict(v).is_failure)
        cards = []
        for backend in self.backends:
            b = s.get("backends", {}).get(backend)
            if not b:
                continue
            st = b["by_status"]
            ran = st.get("pass", 0) + st.get("fail", 0)
            spark = sparkline([h.get("pass_rate", {}).get(backend) for h in history], self.colours[backend])
            deltas = []
            if regress[backend]:
                deltas.append(f'<span class="bad">▼ {regress[backend]} newly failing</span>')
            if fixed[backend]:
                deltas.append(f'<span class="good">▲ {fixed[backend]} newly passing</span>')
            cards.append(
                f'<div class="card" data-backend="{esc(backend)}">'
                f'<div class="card-name">{self.backend_name(backend)}</div>'
                f'<div class="card-rate" data-rate="{"" if b["pass_rate"] is None else b["pass_rate"]}">{pct(b["pass_rate"])}</div>'
                f'<div class="card-line">{st.get("pass", 0):,} / {ran:,} ran pass · {st.get("fail", 0):,} fail · '
                f'{st.get("skip", 0):,} skip</div>'
                + (f'<div class="card-line bad">{b["unknown"]} UNKNOWN</div>' if b.get("unknown") else "")
                + (f'<div class="card-line">{" ".join(deltas)}</div>' if deltas else "")
                + spark
                + "</div>"
            )
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
        if verdicts:
            stats.append(("strict-run failures (FAIL, CHANGED, XPASS)", f"{strict:,}"))
        stat_html = "".join(
            f'<div class="stat"><div class="stat-v">{v}</div><div class="stat-k">{esc(k)}</div></div>' for k, v in stats
        )
        return (
            '<section id="overview"><h2>Overview</h2>'
            f'<div class="stats">{stat_html}</div><div class="cards">{"".join(cards)}</div></section>'
        )

    def _trend(self) -> str:
        history = list(self.summary.get("history") or [])
        if not history:
            run = self.summary.get("run", {})
            history = [
                {
                    "report": "this run",
                    "started": run.get("started"),
                    "pass_rate": {b: v["pass_rate"] for b, v in self.summary.get("backends", {}).items()},
                }
            ]
        legend = []
        for backend in self.backends:
            rates = [h.get("pass_rate", {}).get(backend) for h in history]
            known = [r for r in rates if r is not None]
            delta = ""
            if len(known) >= 2:
                d = 100 * (known[-1] - known[-2])
                cls = "good" if d > 0 else "bad" if d < 0 else "muted"
                arrow = "▲" if d > 0 else "▼" if d < 0 else "="
                delta = f' <span class="{cls}">{arrow} {d:+.1f} pts</span>'
            legend.append(
                f'<li>{self.backend_name(backend)} <b>{pct(known[-1] if known else None)}</b>{delta}</li>'
            )
        return (
            f'<section id="trend"><h2>Pass rate trend <span class="sub">{len(history)} report'
            f'{"s" if len(history) != 1 else ""}, oldest left, this run right</span></h2>'
            f'<div class="chart-row">{trend_chart(history, self.backends, self.colours)}'
            f'<ul class="legend">{"".join(legend)}</ul></div></section>'
        )

    def _backends(self) -> str:
        bs = self.summary.get("backends", {})
        verdicts = [v for v in VERDICT_ORDER if any((b.get("by_verdict") or {}).get(v) for b in bs.values())]
        head = (
            "<tr><th>backend</th><th class=n>total</th><th class=n>pass</th><th class=n>fail</th><th class=n>skip</th>"
            "<th class=n>pass rate</th><th class=n>UNKNOWN</th>"
            + "".join(f"<th class=n>{esc(v)}</th>" for v in verdicts)
            + "<th>failure codes</th></tr>"
        )
        rows, bars = [], []
        for backend in self.backends:
            b = bs.get(backend)
            if not b:
                continue
            st = b["by_status"]
            codes = sorted((b.get("by_code") or {}).items(), key=lambda kv: (-kv[1], kv[0]))
            rows.append(
                f'<tr data-backend="{esc(backend)}"><td>{self.backend_name(backend)}</td>'
                f'<td class="n" data-k="total">{b["total"]:,}</td><td class="n" data-k="pass">{st.get("pass", 0):,}</td>'
                f'<td class="n" data-k="fail">{st.get("fail", 0):,}</td><td class="n" data-k="skip">{st.get("skip", 0):,}</td>'
                f'<td class="n" data-k="pass_rate"><b>{pct(b["pass_rate"])}</b></td>'
                f'<td class="n" data-k="unknown">{b.get("unknown", 0):,}</td>'
                + "".join(f'<td class="n" data-k="{esc(v)}">{(b.get("by_verdict") or {}).get(v, 0):,}</td>' for v in verdicts)
                + f'<td class="codes">{"".join(f"<span>{self.code_chip(c, n)}</span>" for c, n in codes) or "–"}</td></tr>'
            )
            bars.append((backend, st.get("pass", 0), st.get("fail", 0), st.get("skip", 0), b["pass_rate"]))
        return (
            '<section id="backends"><h2>Pass rate per backend <span class="sub">pass rate = pass / (pass + fail); '
            "skips are cases not applicable to the backend</span></h2>"
            f'<table class="t" id="backend-table"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
            f'<div class="chart-row">{status_bars(bars)}</div></section>'
        )

    # ---------------------------------------------------------------- changes and root causes

    def _changes(self) -> str:
        ch = self.summary.get("changes") or {}
        if not ch.get("baseline"):
            return (
                '<section id="changes"><h2>Changes since the baseline</h2>'
                "<p>No baseline: this is the first report in its directory (or the run was made with --baseline none).</p></section>"
            )
        nf, np_, changed = ch.get("newly_failing") or [], ch.get("newly_passing") or [], ch.get("changed") or []
        parts = [
            '<section id="changes"><h2>Changes since the baseline</h2>',
            f'<p>Baseline <b>{esc(ch["baseline"])}</b>: <span class="bad">{len(nf):,} newly failing</span> (regressions), '
            f'<span class="good">{len(np_):,} newly passing</span>, {len(changed):,} failing differently; '
            f'{ch.get("added", 0):,} new (case, backend) pairs, {ch.get("removed", 0):,} gone.</p>',
        ]

        def failing_table(title: str, items: list[dict], table_id: str) -> str:
            if not items:
                return f'<h3>{title}</h3><p class="muted">None.</p>'
            rows = []
            for i in items[:CHANGES_SHOWN]:
                was = i.get("was") or {}
                rows.append(
                    f'<tr><td class="case"><a href="{esc(_cell_anchor(i["case"], i["backend"]))}">{esc(i["case"])}</a></td>'
                    f'<td>{self.backend_name(i["backend"])}</td><td>{self.code_chip(i.get("code"))}</td>'
                    f'<td>{esc(i.get("op") or "–")}</td><td>{self.code_chip(was.get("code")) if was else "PASS"}</td>'
                    f'<td class="expl">{esc(_clip(i.get("explanation"), EXPLANATION_SHOWN))}</td></tr>'
                )
            more = f'<p class="muted">… and {len(items) - CHANGES_SHOWN:,} more (all in summary.json).</p>' if len(items) > CHANGES_SHOWN else ""
            return (
                f'<h3>{title} ({len(items):,})</h3><table class="t" id="{table_id}"><thead><tr><th>case</th><th>backend</th>'
                f'<th>now</th><th>op</th><th>was</th><th>explanation</th></tr></thead><tbody>{"".join(rows)}</tbody></table>{more}'
            )

        parts.append(failing_table("Newly failing", nf, "newly-failing"))
        parts.append(failing_table("Failing differently", changed, "changed"))
        if np_:
            rows = "".join(
                f'<tr><td class="case"><a href="{esc(_cell_anchor(i["case"], i["backend"]))}">{esc(i["case"])}</a></td>'
                f'<td>{self.backend_name(i["backend"])}</td><td>{self.code_chip((i.get("was") or {}).get("code"))}</td>'
                f'<td>{esc((i.get("was") or {}).get("op") or "–")}</td></tr>'
                for i in np_[:CHANGES_SHOWN]
            )
            more = f'<p class="muted">… and {len(np_) - CHANGES_SHOWN:,} more.</p>' if len(np_) > CHANGES_SHOWN else ""
            parts.append(
                f'<h3>Newly passing ({len(np_):,})</h3><table class="t" id="newly-passing"><thead><tr><th>case</th>'
                f"<th>backend</th><th>was</th><th>op</th></tr></thead><tbody>{rows}</tbody></table>{more}"
            )
        else:
            parts.append('<h3>Newly passing</h3><p class="muted">None.</p>')
        parts.append("</section>")
        return "".join(parts)

    def _root_causes(self) -> str:
        groups = self.summary.get("root_causes") or []
        if not groups:
            return '<section id="root-causes"><h2>Root causes</h2><p>No failures.</p></section>'
        biggest = max(g["count"] for g in groups)
        rows = []
        for n, g in enumerate(groups[:ROOT_CAUSES_SHOWN], 1):
            ex = g.get("example") or {}
            cases = g.get("cases") or []
            listing = (
                f'<details><summary>{len(cases):,} case{"s" if len(cases) != 1 else ""}</summary>'
                f'<div class="caselist">{" ".join(esc(c) for c in cases)}</div></details>'
            )
            rows.append(
                f'<tr><td class="n">{n}</td><td class="n"><span class="cbar" style="width:{max(2, round(60 * g["count"] / biggest))}px"></span>'
                f'{g["count"]:,}</td><td>{self.backend_name(g["backend"])}</td><td>{self.code_chip(g["code"])}</td>'
                f'<td class="op">{esc(g.get("op") or "–")}</td>'
                f'<td class="case"><a href="{esc(_cell_anchor(ex.get("case", ""), g["backend"]))}">{esc(ex.get("case"))}</a>'
                f'<div class="muted">stage {esc(ex.get("stage") or "?")}</div></td>'
                f'<td class="expl">{esc(_clip(ex.get("explanation"), EXPLANATION_SHOWN))}</td><td>{listing}</td></tr>'
            )
        more = (
            f'<p class="muted">… and {len(groups) - ROOT_CAUSES_SHOWN:,} smaller groups (all of them are in summary.json).</p>'
            if len(groups) > ROOT_CAUSES_SHOWN
            else ""
        )
        total = sum(g["count"] for g in groups)
        return (
            f'<section id="root-causes"><h2>Root causes <span class="sub">{len(groups):,} groups of {total:,} failures by '
            "(backend, code, op), largest first: one fix usually clears a whole group</span></h2>"
            '<table class="t" id="root-cause-table"><thead><tr><th>#</th><th class=n>count</th><th>backend</th><th>code</th>'
            "<th>op</th><th>example</th><th>explanation</th><th>cases</th></tr></thead>"
            f'<tbody>{"".join(rows)}</tbody></table>{more}</section>'
        )

    # ---------------------------------------------------------------- families, matrix, ops

    def _families(self) -> str:
        fams = self.summary.get("families") or {}
        distinct: dict[str, set] = defaultdict(set)
        for case, _ in self.results:
            distinct[self.family(case)].add(case)
        head = "<tr><th>family</th><th class=n>cases</th>" + "".join(f"<th class=n>{self.backend_name(b)}</th>" for b in self.backends) + "</tr>"
        rows = []
        for family, per in fams.items():
            cells = []
            for b in self.backends:
                c = per.get(b)
                ran = (c["pass"] + c["fail"]) if c else 0
                if not c or not ran:
                    title = f' title="{c["skip"]} skipped"' if c else ""
                    cells.append(f'<td class="n muted"{title}>–</td>')
                    continue
                rate = c["pass"] / ran
                cells.append(
                    f'<td class="n heat"{_heat(rate)} title="{c["pass"]} pass, {c["fail"]} fail, {c["skip"]} skip">'
                    f'{c["pass"]}/{ran} <small>{pct(rate, 0)}</small></td>'
                )
            rows.append(
                f'<tr data-family="{esc(family)}"><td>{esc(family)}</td><td class="n">{len(distinct.get(family, ())):,}</td>'
                f'{"".join(cells)}</tr>'
            )
        return (
            '<section id="families"><h2>Pass rate per family <span class="sub">pass / ran per backend</span></h2>'
            f'<table class="t heatmap" id="family-table"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table></section>'
        )

    def _matrix(self) -> str:
        nb = len(self.backends)
        families = self.matrix_families
        body, i = [], 0
        for fi, fam in enumerate(families):
            members = self.family_members[fam]
            body.append(f'<tr class="fh" data-f="{fi}"><th colspan="{nb + 1}">{esc(fam)} <span>{len(members):,}</span></th></tr>')
            for case in members:
                cells = []
                for backend in self.backends:
                    r = self.results.get((case, backend))
                    if r is None:
                        cells.append('<td class="na">·</td>')
                        continue
                    cls = [STATUS_CLASS.get(r.status, "na")]
                    text = ""
                    if r.failed:
                        code = r.code or Code.UNKNOWN
                        cls.append(f"k{self.code_index.get(code, 0)}")
                        text = self.code_style.get(code, ("?", ""))[0]
                    elif r.status == "skip":
                        text = "–"
                    if r.verdict in VERDICT_CLASS:
                        cls.append(VERDICT_CLASS[r.verdict])
                        if r.verdict == Verdict.XPASS:
                            text = "XP"
                    flag = self.new.get((case, backend))
                    if flag:
                        cls.append(NEW_CLASS[flag[0]])
                    cells.append(f'<td class="{" ".join(cls)}">{text}</td>')
                body.append(f'<tr data-i="{i}" data-f="{fi}"><th>{esc(case)}</th>{"".join(cells)}</tr>')
                i += 1
        head = "<tr><th>case</th>" + "".join(f'<th class="bh">{self.backend_name(b)}</th>' for b in self.backends) + "</tr>"

        legend = [
            '<span class="lgi"><span class="lg p"></span>pass</span>',
            '<span class="lgi"><span class="lg s">–</span>skip (not applicable)</span>',
            '<span class="lgi"><span class="lg na">·</span>not run</span>',
        ]
        for code in self.codes:
            abbr = self.code_style[code][0]
            legend.append(f'<span class="lgi"><span class="lg k{self.code_index[code]}">{esc(abbr)}</span>{esc(code)}</span>')
        verdict_legend = [
            '<span class="lgi"><span class="lg f k0 vx"></span>XFAIL: fails as its xfail set says</span>',
            '<span class="lgi"><span class="lg f k0 vf"></span>FAIL: fails, not in the xfail set</span>',
            '<span class="lgi"><span class="lg f k0 vc"></span>CHANGED: fails, not as listed</span>',
            '<span class="lgi"><span class="lg p vp">XP</span>XPASS: passes, but listed</span>',
            '<span class="lgi"><span class="lg p nf"></span>newly failing</span>',
            '<span class="lgi"><span class="lg p np"></span>newly passing</span>',
            '<span class="lgi"><span class="lg p nc"></span>failing differently</span>',
        ]
        fam_opts = "".join(f'<option value="{i}">{esc(f)}</option>' for i, f in enumerate(families))
        be_opts = "".join(f'<option value="{i}">{esc(b)}</option>' for i, b in enumerate(self.backends))
        code_opts = "".join(f'<option value="k{self.code_index[c]}">{esc(c)}</option>' for c in self.codes)
        outcome_opts = (
            '<option value="">any outcome</option><option value="p">pass</option><option value="f">fail</option>'
            '<option value="s">skip</option><option value="u">unexpected (FAIL, CHANGED, XPASS)</option>'
            '<option value="vx">XFAIL</option><option value="vp">XPASS</option><option value="vc">CHANGED</option>'
            '<option value="vf">FAIL verdict</option><option value="n">changed since the baseline</option>'
            '<option value="nf">newly failing</option><option value="d">backends disagree</option>'
            f'<optgroup label="failure code">{code_opts}</optgroup>'
        )
        counts = Counter(r.status for r in self.results.values())
        return (
            f'<section id="matrix"><h2>Matrix <span class="sub">{len(self.matrix_rows):,} cases × {nb} backends: '
            f'{counts["pass"]:,} pass, {counts["fail"]:,} fail, {counts["skip"]:,} skip. '
            "Hover a cell for its explanation, click it for details.</span></h2>"
            '<div class="filters">'
            '<input type="search" id="f-text" placeholder="filter: case, op, code, explanation…" aria-label="text filter">'
            f'<select id="f-family" aria-label="family"><option value="">all families</option>{fam_opts}</select>'
            f'<select id="f-backend" aria-label="backend"><option value="">all backends</option>{be_opts}</select>'
            f'<select id="f-outcome" aria-label="outcome">{outcome_opts}</select>'
            '<button type="button" id="f-reset">reset</button><span id="f-count" class="muted"></span></div>'
            f'<div class="legend-row">{"".join(legend)}</div><div class="legend-row">{"".join(verdict_legend)}</div>'
            f'<div class="mwrap"><table class="mx" id="matrix-table"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table></div>'
            "</section>"
        )

    def _ops(self) -> str:
        cover = self.summary.get("op_coverage") or {}
        if not cover:
            return '<section id="ops"><h2>Op coverage</h2><p>No op data.</p></section>'
        head = (
            "<tr><th>ATen op</th>"
            + "".join(f"<th class=n>{self.backend_name(b)}</th>" for b in self.backends)
            + "<th class=n>passes on</th></tr>"
        )
        rows, everywhere, nowhere = [], 0, 0
        for op, per in cover.items():
            cells, full, present = [], 0, 0
            for b in self.backends:
                c = per.get(b)
                if not c or not c.get("cases"):
                    cells.append('<td class="n muted">–</td>')
                    continue
                present += 1
                full += c["pass"] == c["cases"]
                rate = c["pass"] / c["cases"]
                cells.append(f'<td class="n heat"{_heat(rate)}>{c["pass"]}/{c["cases"]}</td>')
            everywhere += present > 0 and full == present
            nowhere += present > 0 and not any((per.get(b) or {}).get("pass") for b in self.backends)
            cls = "" if present and full == present else ' class="partial"'
            rows.append(f'<tr{cls}><td class="op">{esc(op)}</td>{"".join(cells)}<td class="n">{full}/{present}</td></tr>')
        return (
            f'<section id="ops"><h2>Op coverage <span class="sub">{len(cover):,} ATen ops: cases using the op that pass / '
            f"that ran, per backend; {everywhere:,} pass everywhere they ran, {nowhere:,} pass nowhere</span></h2>"
            '<div class="filters"><input type="search" id="op-text" placeholder="filter ops…" aria-label="op filter">'
            '<label><input type="checkbox" id="op-partial"> only ops failing somewhere</label>'
            '<span id="op-count" class="muted"></span></div>'
            f'<div class="owrap"><table class="t heatmap" id="op-table"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table></div>'
            "</section>"
        )

    # ---------------------------------------------------------------- stages, extra sections, run

    def _stages(self) -> str:
        bs = self.summary.get("backends", {})
        present = {s for b in bs.values() for s in b.get("stage_seconds", {})}
        stages = [s for s in STAGE_ORDER if s in present] + sorted(present - set(STAGE_ORDER))
        if not stages:
            return '<section id="stages"><h2>Time per stage</h2><p>No timings.</p></section>'
        colours = stage_colours(stages)
        rows, bars = [], []
        for backend in self.backends:
            b = bs.get(backend)
            if not b:
                continue
            secs = b.get("stage_seconds", {})
            total = sum(secs.values())
            rows.append(
                f'<tr data-backend="{esc(backend)}"><td>{self.backend_name(backend)}</td>'
                + "".join(f'<td class="n">{secs[s]:,.1f}</td>' if s in secs else '<td class="n muted">–</td>' for s in stages)
                + f'<td class="n"><b>{total:,.1f}</b></td></tr>'
            )
            bars.append((backend, secs))
        legend = "".join(f'<span class="lgi"><span class="sw" style="background:{colours[s]}"></span>{esc(s)}</span>' for s in stages)
        return (
            '<section id="stages"><h2>Time per stage <span class="sub">seconds summed over cases, per backend</span></h2>'
            f'<div class="legend-row">{legend}</div><div class="chart-row">{stage_bars(bars, stages, colours)}</div>'
            '<table class="t" id="stage-table"><thead><tr><th>backend</th>'
            + "".join(f"<th class=n>{esc(s)}</th>" for s in stages)
            + f'<th class=n>total</th></tr></thead><tbody>{"".join(rows)}</tbody></table></section>'
        )

    def _extra_sections(self) -> str:
        out = []
        for n, extra in enumerate(self.summary.get("sections") or []):
            # "html" is produced by our own code (a backend's report section) and is already escaped.
            out.append(
                f'<section class="extra" id="extra-{n}"><h2>{esc(extra.get("title"))}</h2>'
                f'<div class="extra-body">{extra.get("html") or ""}</div></section>'
            )
        return "".join(out)

    def _run(self) -> str:
        s, run = self.summary, self.summary.get("run", {})

        def dl(items) -> str:
            return "<dl class=kv>" + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in items) + "</dl>"

        settings = run.get("settings") or {}
        run_items = [
            ("started", run.get("started")),
            ("finished", run.get("finished")),
            ("wall time", seconds(run.get("wall_seconds"))),
            ("backends", ", ".join(run.get("backends") or self.backends)),
            ("shards", ", ".join(run.get("shards") or []) or "–"),
        ] + [(f"setting {k}", json.dumps(v) if not isinstance(v, str) else v) for k, v in sorted(settings.items())]
        toolchain = [(k, v if v else "not installed") for k, v in (s.get("toolchain") or {}).items()]
        machine = list((s.get("machine") or {}).items())
        return (
            '<section id="run"><h2>Run, toolchain, machine</h2><div class="cols">'
            f"<div><h3>Run</h3>{dl(run_items)}</div><div><h3>Toolchain</h3>{dl(toolchain)}</div>"
            f"<div><h3>Machine</h3>{dl(machine)}</div></div></section>"
        )

    # ---------------------------------------------------------------- the JSON blob

    def _data(self) -> dict:
        """What the script needs: per matrix row its case facts, per cell the result's facts (strings deduplicated)."""
        strings = _Strings()
        stage_set = {s for r in self.results.values() for s in r.timings}
        stages = [s for s in STAGE_ORDER if s in stage_set] + sorted(stage_set - set(STAGE_ORDER))
        stage_pos = {s: i for i, s in enumerate(stages)}
        rows, cells = [], []
        for case in self.matrix_rows:
            info = self.cases.get(case, {})
            row = [case, strings(info.get("kind")), [strings(o) for o in info.get("ops") or []], [strings(t) for t in info.get("tags") or []]]
            rows.append(row)
            for backend in self.backends:
                r = self.results.get((case, backend))
                if r is None:
                    cells.append(0)
                    continue
                cell: dict = {}
                for key, value in (
                    ("c", r.code if r.failed else None),
                    ("g", r.stage),
                    ("o", r.op),
                    ("v", r.verdict),
                    ("e", _clip(r.explanation, EXPLANATION_EMBEDDED) if r.explanation else None),
                    ("a", r.artifacts),
                ):
                    i = strings(value)
                    if i is not None:
                        cell[key] = i
                if r.timings:
                    t = [0] * len(stages)
                    for s, secs in r.timings.items():
                        t[stage_pos[s]] = round(secs, 2)  # 10 ms is precise enough to see where time goes
                    while t and not t[-1]:
                        t.pop()
                    if t:
                        cell["t"] = t
                aten = r.extras.get("aten_ops") if isinstance(r.extras, dict) else None
                if aten and list(aten) != list(info.get("ops") or []):
                    cell["x"] = [strings(o) for o in aten]
                flag = self.new.get((case, backend))
                if flag:
                    cell["n"] = flag[0]
                    if flag[1]:
                        cell["w"] = strings(flag[1])
                cells.append(cell)
        return {
            "backends": self.backends,
            "families": self.matrix_families,
            "stages": stages,
            "strings": strings.items,
            "rows": rows,
            "cells": cells,
        }
