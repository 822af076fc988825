"""The page around the sections: head, Content-Security-Policy, nav, details panel, the data and the script."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from conformance.report.html.context import Report
from conformance.report.html.data import PageData
from conformance.report.html.format import esc
from conformance.report.html.overview import header
from conformance.report.html.sections import Section, sections_of
from conformance.report.html.style import code_css

ASSETS = Path(__file__).parent.parent / "assets"

PANEL = (
    '<aside id="panel" hidden aria-live="polite"><button type="button" id="panel-close" aria-label="close">×</button>'
    '<h3 id="panel-title"></h3><dl id="panel-body"></dl></aside>'
)


def json_for_script(data) -> str:
    """JSON that is safe inside <script type="application/json">: no `<`, `>`, `&` can close the tag."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))  # ASCII: U+2028/9 come out escaped too
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, escaped)
    return text


def _section(report: Report, section: Section) -> str:
    part = section.build(report)
    sub = f' <span class="sub">{esc(part.sub)}</span>' if part.sub else ""
    return f'<section id="{esc(section.id)}"><h2>{esc(section.title)}{sub}</h2>{part.body}</section>'


def render_page(report: Report) -> str:
    script = (ASSETS / "report.js").read_text()
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    css = (ASSETS / "report.css").read_text() + code_css(report.codes, report.code_style)
    sections = sections_of(report)
    data = PageData(report)
    # Data blocks (a type the browser does not run): base64 of compressed JSON, read by the script on demand.
    chunks = "".join(f'<script type="application/octet-stream" id="details-{i}">{c}</script>\n' for i, c in enumerate(data.chunks))
    nav = "".join(f'<a href="#{esc(s.id)}">{esc(s.title)}</a>' for s in sections)
    body = [
        header(report),
        f'<nav aria-label="sections">{nav}</nav>',
        "<main>",
        *(_section(report, s) for s in sections),
        "</main>",
        PANEL,
        f'<script type="application/json" id="report-data">{json_for_script(data.blob)}</script>',
        chunks,
        f"<script>{script}</script>",
    ]
    csp = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )
    started = report.summary.get("run", {}).get("started") or ""
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
