"""Writing a report directory's summary.json, report.md and report.html from its results."""

from __future__ import annotations

from pathlib import Path

from conformance.report import markdown
from conformance.report.diff import changes
from conformance.report.history import pair_histories, pass_rate_history
from conformance.report.summary import build_summary
from conformance.report_dir import CASES, REPORT_HTML, REPORT_MD, RUN, SUMMARY, latest, read_json, read_results, write_json


def build_reports(directory: Path, baseline: Path | None) -> dict:
    directory = Path(directory)
    results = latest(read_results(directory))
    run = read_json(directory, RUN, {})
    cases = read_json(directory, CASES, {})
    base = latest(read_results(baseline)) if baseline else None
    diff = changes(results, base, baseline.name if baseline else None)
    summary = build_summary(results, run, cases, diff, pass_rate_history(directory))
    summary["history"].append(
        {"report": directory.name, "started": run.get("started"), "pass_rate": {b: s["pass_rate"] for b, s in summary["backends"].items()}}
    )
    summary["sections"] = extra_sections(results)
    write_json(directory, SUMMARY, summary)
    (directory / REPORT_MD).write_text(markdown.render(summary), encoding="utf-8")
    from conformance.report import html

    page = html.render(summary, results, cases, pair_histories(directory, results))
    (directory / REPORT_HTML).write_text(page, encoding="utf-8")
    return summary


def extra_sections(results) -> list[dict]:
    """Report sections contributed by backends' own tooling (the custom-op audit)."""
    from conformance.custom_ops.audit import report_section

    section = report_section(results)
    return [section] if section else []
