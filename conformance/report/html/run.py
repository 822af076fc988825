"""The bottom of the page: sections backends contribute (the custom-op audit), and how the run was made."""

from __future__ import annotations

import json

from conformance.report.html.context import Report
from conformance.report.html.format import esc, seconds
from conformance.report.html.markup import Part


def extra(index: int):
    """The builder of the backend-contributed section number `index` of summary["sections"]."""

    def build(report: Report) -> Part:
        # "html" is produced by our own code (a backend's report section) and is already escaped.
        return Part(f'<div class="extra-body">{report.summary["sections"][index].get("html") or ""}</div>')

    return build


def _facts(items) -> str:
    return "<dl class=kv>" + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in items) + "</dl>"


def run(report: Report) -> Part:
    s, run = report.summary, report.summary.get("run", {})
    run_items = [
        ("started", run.get("started")),
        ("finished", run.get("finished")),
        ("wall time", seconds(run.get("wall_seconds"))),
        ("backends", ", ".join(run.get("backends") or report.backends)),
        ("shards", ", ".join(run.get("shards") or []) or "–"),
    ] + [(f"setting {k}", v if isinstance(v, str) else json.dumps(v)) for k, v in sorted(report.settings.items())]
    toolchain = [(k, v if v else "not installed") for k, v in (s.get("toolchain") or {}).items()]
    machine = list((s.get("machine") or {}).items())
    return Part(
        f'<div class="cols"><div><h3>Run</h3>{_facts(run_items)}</div><div><h3>Toolchain</h3>{_facts(toolchain)}</div>'
        f"<div><h3>Machine</h3>{_facts(machine)}</div></div>"
    )
