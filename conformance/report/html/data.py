"""The data the page's script reads (assets/report.js): what it needs at once, and details it decodes on demand.

At 100,000 results the page cannot carry one element or one JSON object per
cell, nor every failure's diagnostics in the JSON it parses on load. So:

- The blob (`report-data`, parsed on load) holds what the matrix, its
  filters and its tooltips need: per matrix row its case; per cell an index
  into `records`, the distinct cell records (most passing cells share one);
  a record's `look` indexes `looks`, the distinct (CSS classes, text) a
  matrix cell is drawn with. The script draws only the rows in view.
- A cell's details (diagnostics, the rerun command, the bundle, timings,
  exported ops, --localize's record) are in chunks of CHUNK_CELLS cells,
  each a zlib-compressed JSON object (cell index -> fields) in base64, in a
  <script type="application/octet-stream" id="details-N"> of the page
  itself: the script inflates a chunk (DecompressionStream) when a reader
  opens one of its cells. The page stays one file that opens from file://,
  where Chromium refuses fetch() and XMLHttpRequest of a file beside it.

Field names live here and nowhere else. Each field travels under a short
key, and the blob carries the map (`keys`: name -> key), so the script
reads `get(cell, "code")` and never spells a key of its own. Every string of
the blob goes once into a string table (`strings`), fields refer to it by
index: explanations and histories repeat across thousands of cells. Chunks
hold their strings inline: deflate folds the repetition.
"""

from __future__ import annotations

import base64
import json
import re
import zlib

from conformance.localize.record import localization, summary
from conformance.report.html.context import Report
from conformance.report.html.format import clip as clip_end
from conformance.report.html.matrix import NOT_RUN, look
from conformance.report.html.style import ordered_stages
from conformance.rerun import pytest_command
from conformance.result import Result
from conformance.taxonomy import Status, Verdict

EXPLANATION_EMBEDDED = 4000  # characters of an explanation kept in the blob
# Characters of a failure's diagnostics kept: their start, where the classifier read the first error. A full
# nightly has thousands of failures, each with up to 20,000 characters; all of them are in results.jsonl.
DETAILS_EMBEDDED = 1500
CHUNK_CELLS = 2000  # cells per details chunk: one is inflated in a few ms; ~50 chunks at 100,000 results

CELL_FIELDS = (  # in the blob: the matrix, its filters, tooltips, the first lines of the details panel
    "look",  # index in `looks`: the cell's CSS classes and text in the matrix
    "code",  # failure code (string)
    "stage",  # stage it failed in (string)
    "op",  # op blamed (string)
    "verdict",  # xfail verdict (string)
    "explanation",  # one sentence (string)
    "change",  # since the baseline: 1 newly failing, 2 newly passing, 3 failing differently
    "was",  # the code it failed with in the baseline (string)
    "history",  # one character per report of `reports`: p pass, f fail, s skip, . not run (string)
    "failing_since",  # index in `reports` where the current run of failures began
    "flips",  # how often it went from pass to fail or back over `reports`
)
DETAIL_FIELDS = (  # in the chunks, decoded when the details panel opens
    "details",  # captured diagnostics, clipped (string)
    "reproduce",  # the pytest command rerunning the pair (string)
    "bundle",  # the reproducer bundle's reproduce.sh (string)
    "timings",  # seconds per stage, in the order of the blob's `stages` (numbers)
    "exported_ops",  # ops of the exported graph when they differ from the case's declared ones (strings)
    "localized",  # --localize: the op to blame, its source line and errors, in one line (string)
    "localized_case",  # --localize: the one-op case file it wrote (string)
)
ROW_FIELDS = (  # a matrix row
    "case",  # case id (string, inline)
    "family",  # index in `families`
    "kind",  # (string)
    "ops",  # declared ops (strings)
    "tags",  # (strings)
    "blamed",  # --localize on a model: per backend that traced it, [op, backend index, one-line summary]
)
KEYS = (
    {name: format(i, "x") for i, name in enumerate(CELL_FIELDS)}
    | {name: "d" + str(i) for i, name in enumerate(DETAIL_FIELDS)}
    | {name: "r" + str(i) for i, name in enumerate(ROW_FIELDS)}
)
STRING_FIELDS = {"kind", "code", "stage", "op", "verdict", "explanation", "was", "history"}  # fmt: skip


def _head(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n... [{len(text) - limit:,} more characters: results.jsonl has them all, as has a bundle's details.txt]"


class Table:
    """Distinct values in order of first use, each referred to by its index."""

    def __init__(self):
        self.items: list = []
        self.index: dict = {}

    def __call__(self, value, key=None) -> int:
        key = value if key is None else key
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.items)
            self.items.append(value)
        return i


def _record(strings: Table, fields: dict) -> dict:
    """Fields under their keys, empty ones left out, strings as table indexes."""
    out = {}
    for name, value in fields.items():
        if value is None or value == "" or value == []:
            continue
        if name in STRING_FIELDS:
            value = strings(value)
        elif isinstance(value, list) and isinstance(value[0], str):
            value = [strings(v) for v in value]
        out[KEYS[name]] = value
    return out


def _cell(report: Report, strings: Table, looks: Table, r: Result | None, case: str, backend: str) -> dict:
    """The blob's record of a cell: how it looks, and what a tooltip and the filters read."""
    shown = look(report, r, report.changed.get((case, backend)))
    fields: dict = {"look": looks(shown)}
    if r is None:
        return _record(strings, fields)
    fields |= {
        "code": r.code if r.failed else None,
        "stage": r.stage,
        "op": r.op,
        "verdict": r.verdict,
        "explanation": clip_end(r.explanation, EXPLANATION_EMBEDDED) if r.explanation else None,
    }
    change = report.changed.get((case, backend))
    if change:
        fields["change"], fields["was"] = change
    past = report.past((case, backend))
    if past:
        fields["history"], fields["failing_since"], fields["flips"] = past
        fields["flips"] = fields["flips"] or None
    return _record(strings, fields)


def _details(report: Report, r: Result, stage_pos: dict[str, int]) -> dict:
    """A cell's fields the details panel decodes when it opens (strings inline: the chunk is compressed)."""
    out: dict = {}
    if r.failed or r.status == Status.FLAKY:
        if r.details:
            out[KEYS["details"]] = _head(r.details, DETAILS_EMBEDDED)
        out[KEYS["reproduce"]] = pytest_command(r.case, r.backend, report.settings, no_xfail=r.verdict == Verdict.XFAIL)
        if r.artifacts:
            out[KEYS["bundle"]] = f"{r.artifacts.rstrip('/')}/reproduce.sh"
    if r.timings:
        t = [0] * len(stage_pos)
        for s, secs in r.timings.items():
            t[stage_pos[s]] = round(secs, 2)  # 10 ms is precise enough to see where time goes
        while t and not t[-1]:
            t.pop()
        if t:
            out[KEYS["timings"]] = t
    localized = localization(r)
    if localized:
        out[KEYS["localized"]] = summary(localized)
        if localized.get("case_file"):
            out[KEYS["localized_case"]] = localized["case_file"]
    aten = r.extras.get("aten_ops") if isinstance(r.extras, dict) else None
    if aten and list(aten) != list(report.cases.get(r.case, {}).get("ops") or []):
        out[KEYS["exported_ops"]] = list(aten)
    return out


def _blamed(report: Report, case: str) -> list[list]:
    """The ops --localize blamed on a model, per backend that traced it: [op, backend index, summary]."""
    found = []
    for j, backend in enumerate(report.backends):
        record = localization(report.results.get((case, backend)))
        if record and "error" not in record:
            found.append([record["op"], j, summary(record)])
    return found


class PageData:
    """The blob and the compressed detail chunks of one page."""

    def __init__(self, report: Report):
        strings, looks, records = Table(), Table(), Table()
        looks(NOT_RUN)
        stages = ordered_stages({s for r in report.results.values() for s in r.timings})
        stage_pos = {s: i for i, s in enumerate(stages)}
        family_index = {f: i for i, f in enumerate(report.families)}
        rows, cells, details = [], [], []
        for case in report.matrix_rows:
            info = report.cases.get(case, {})
            row = {"family": family_index[report.family(case)], "kind": info.get("kind"), "ops": list(info.get("ops") or []),
                   "tags": list(info.get("tags") or []), "blamed": _blamed(report, case)}
            rows.append(_record(strings, row) | {KEYS["case"]: case})
            for backend in report.backends:
                r = report.results.get((case, backend))
                record = _cell(report, strings, looks, r, case, backend)
                cells.append(records(record, tuple(record.items())))
                details.append(_details(report, r, stage_pos) if r else None)
        self.blob = {
            "keys": KEYS,
            "backends": report.backends,
            "families": report.families,
            "stages": stages,
            "reports": report.history.reports if report.history else [],
            "strings": strings.items,
            "looks": looks.items,
            "records": records.items,
            "rows": rows,
            "cells": cells,
            "chunk_cells": CHUNK_CELLS,
        }
        self.chunks = [_pack({str(k): d for k, d in enumerate(details[at : at + CHUNK_CELLS], at) if d})
                       for at in range(0, len(details), CHUNK_CELLS)]


def _pack(data: dict) -> str:
    """JSON, deflated (zlib, as DecompressionStream('deflate') reads it), in base64: ASCII that no HTML can break."""
    return base64.b64encode(zlib.compress(json.dumps(data, separators=(",", ":")).encode(), 6)).decode("ascii")


def unpack(text: str) -> dict:
    """A chunk's JSON again (what the script does in the browser)."""
    return json.loads(zlib.decompress(base64.b64decode(text)))


def read_page(page: str) -> tuple[dict[str, dict], dict[tuple[str, str], dict]]:
    """What report.js reads of a page, by field name: per case its row, per (case, backend) its cell with its details.

    Strings are resolved, a cell's `look` is (classes, text), a row's
    `blamed` names its backends. For tests and tools reading a report.html.
    """
    start = page.index('id="report-data">') + len('id="report-data">')
    blob = json.loads(page[start : page.index("</script>", start)])
    details: dict[int, dict] = {}
    for block in re.findall(r'<script type="application/octet-stream" id="details-\d+">([^<]*)</script>', page):
        details |= {int(k): v for k, v in unpack(block).items()}
    names = {key: name for name, key in blob["keys"].items()}
    backends, strings = blob["backends"], blob["strings"]

    def named(record: dict) -> dict:
        out = {}
        for key, value in record.items():
            name = names[key]
            if name in STRING_FIELDS:
                value = strings[value]
            elif name in ("ops", "tags"):  # the blob's lists of strings (a chunk's are inline)
                value = [strings[v] for v in value]
            out[name] = value
        return out

    rows, cells = {}, {}
    for i, row in enumerate(blob["rows"]):
        row = named(row)
        row["family"] = blob["families"][row["family"]]
        row["blamed"] = [[op, backends[j], said] for op, j, said in row.get("blamed", [])]
        rows[row["case"]] = row
        for j, backend in enumerate(backends):
            at = i * len(backends) + j
            cell = named(blob["records"][blob["cells"][at]]) | named(details.get(at, {}))
            cell["look"] = tuple(blob["looks"][cell["look"]])
            cells[(row["case"], backend)] = cell
    return rows, cells
