"""The JSON blob the page's script reads (assets/report.js): per matrix row its case, per cell its result.

Field names live here and nowhere else. Each field travels under a short
key made from its position in CELL_FIELDS or ROW_FIELDS, and the blob
carries the map (`keys`: name -> key), so the script reads `cell[K.code]`
and never spells a key of its own. Every string goes once into a string
table (`strings`) and cells refer to it by index: explanations, stages and
diagnostics repeat across thousands of cells.
"""

from __future__ import annotations

from conformance.localize.record import localization, summary
from conformance.report.html.context import Report
from conformance.report.html.format import clip as clip_end
from conformance.report.html.style import ordered_stages
from conformance.rerun import pytest_command
from conformance.taxonomy import Status, Verdict

EXPLANATION_EMBEDDED = 4000  # characters of an explanation kept in the blob
# Characters of a failure's diagnostics kept: their start, where the classifier read the first error. A full
# nightly has thousands of failures, each with up to 20,000 characters; all of them are in results.jsonl.
DETAILS_EMBEDDED = 1500

CELL_FIELDS = (
    "code",  # failure code (string)
    "stage",  # stage it failed in (string)
    "op",  # op blamed (string)
    "verdict",  # xfail verdict (string)
    "explanation",  # one sentence (string)
    "details",  # captured diagnostics, clipped (string)
    "reproduce",  # the pytest command rerunning the pair (string)
    "bundle",  # the reproducer bundle's reproduce.sh (string)
    "timings",  # seconds per stage, in the order of the blob's `stages` (numbers)
    "exported_ops",  # ops of the exported graph when they differ from the case's declared ones (strings)
    "change",  # since the baseline: 1 newly failing, 2 newly passing, 3 failing differently
    "was",  # the code it failed with in the baseline (string)
    "history",  # one character per report of `reports`: p pass, f fail, s skip, . not run (string)
    "failing_since",  # index in `reports` where the current run of failures began
    "flips",  # how often it went from pass to fail or back over `reports`
    "localized",  # --localize: the op to blame, its source line and errors, in one line (string)
    "localized_case",  # --localize: the one-op case file it wrote (string)
)
ROW_FIELDS = ("case", "kind", "ops", "tags")  # a matrix row's case: id, kind, declared ops, tags (strings)
KEYS = {name: format(i, "x") for i, name in enumerate(CELL_FIELDS)} | {name: "r" + str(i) for i, name in enumerate(ROW_FIELDS)}
STRING_FIELDS = {
    "kind", "code", "stage", "op", "verdict", "explanation", "details", "reproduce", "bundle", "was", "history",
    "localized", "localized_case",
}  # fmt: skip


def _head(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n... [{len(text) - limit:,} more characters: results.jsonl has them all, as has a bundle's details.txt]"


class Strings:
    """A string table: each distinct string once in the blob, fields refer to it by index."""

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


def _record(strings: Strings, fields: dict) -> dict:
    """Fields under their keys, strings as table indexes, empty ones left out."""
    out = {}
    for name, value in fields.items():
        if name in STRING_FIELDS:
            value = strings(value)
        elif isinstance(value, list) and value and isinstance(value[0], str):
            value = [strings(v) for v in value]
        if value is not None and value != []:
            out[KEYS[name]] = value
    return out


def _cell(report: Report, strings: Strings, case: str, backend: str, stage_pos: dict[str, int]) -> dict | int:
    r = report.results.get((case, backend))
    if r is None:
        return 0
    fields: dict = {
        "code": r.code if r.failed else None,
        "stage": r.stage,
        "op": r.op,
        "verdict": r.verdict,
        "explanation": clip_end(r.explanation, EXPLANATION_EMBEDDED) if r.explanation else None,
    }
    if r.failed or r.status == Status.FLAKY:
        fields["details"] = _head(r.details, DETAILS_EMBEDDED) if r.details else None
        fields["reproduce"] = pytest_command(case, backend, report.settings, no_xfail=r.verdict == Verdict.XFAIL)
        fields["bundle"] = f"{r.artifacts.rstrip('/')}/reproduce.sh" if r.artifacts else None
    if r.timings:
        t = [0] * len(stage_pos)
        for s, secs in r.timings.items():
            t[stage_pos[s]] = round(secs, 2)  # 10 ms is precise enough to see where time goes
        while t and not t[-1]:
            t.pop()
        fields["timings"] = t
    localized = localization(r)
    if localized:
        fields["localized"] = summary(localized)
        fields["localized_case"] = localized.get("case_file")
    aten = r.extras.get("aten_ops") if isinstance(r.extras, dict) else None
    if aten and list(aten) != list(report.cases.get(case, {}).get("ops") or []):
        fields["exported_ops"] = list(aten)
    change = report.changed.get((case, backend))
    if change:
        fields["change"], fields["was"] = change
    past = report.history.pairs.get((case, backend)) if report.history else None
    if past:
        fields["history"] = past.outcomes
        fields["failing_since"] = past.failing_since()
        fields["flips"] = past.flips() or None
    return _record(strings, fields)


def blob(report: Report) -> dict:
    strings = Strings()
    stages = ordered_stages({s for r in report.results.values() for s in r.timings})
    stage_pos = {s: i for i, s in enumerate(stages)}
    rows, cells = [], []
    for case in report.matrix_rows:
        info = report.cases.get(case, {})
        rows.append(_record(strings, {"kind": info.get("kind"), "ops": list(info.get("ops") or []), "tags": list(info.get("tags") or [])})
                    | {KEYS["case"]: case})
        cells += [_cell(report, strings, case, backend, stage_pos) for backend in report.backends]
    return {
        "keys": KEYS,
        "backends": report.backends,
        "families": report.families,
        "stages": stages,
        "reports": report.history.reports if report.history else [],
        "strings": strings.items,
        "rows": rows,
        "cells": cells,
    }
