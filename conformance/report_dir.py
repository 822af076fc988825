"""A report directory on disk: the one place its file names live, and the results store.

    DIR/
      run.json        how the run was made (content: run/record.py), written before any work
      cases.json      what the reports need of each case (content: run/record.py)
      results.jsonl   one Result per line, appended and flushed as each pair finishes: ResultsFile
      summary.json    the digest of the results (report/summary.py)
      report.md       the same as tables (report/markdown.py)
      report.html     one page (report/html/)
      localized/      --localize: a workspace per failing model (localize/)
      reduced/        reductions of its failures, when `conformance reduce --output-dir DIR/reduced` put them there

A run killed at any moment (Ctrl-C, SIGKILL) keeps every finished result,
and `--resume` reads them back; a last line cut off by the kill is ignored
on reading. The writers and readers of these files (both front ends, the
reports, merge, resume, shards' --durations) take the names from here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Iterator

from conformance.result import Result

RUN = "run.json"
CASES = "cases.json"
RESULTS = "results.jsonl"
SUMMARY = "summary.json"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
LOCALIZED = "localized"
REDUCED = "reduced"  # `conformance reduce --output-dir DIR/reduced`: reductions an issue file shows (report/issues/)

# How each JSON file is indented: run.json and summary.json are read by people, cases.json is long.
_INDENT = {RUN: 1, CASES: 0, SUMMARY: 1}


class ResultsFile:
    """results.jsonl of a report directory, appended one Result at a time and flushed at once."""

    def __init__(self, directory: Path):
        self.path = Path(directory) / RESULTS
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = None

    def append(self, result: Result) -> None:
        if self._file is None:
            self._file = open(self.path, "a", encoding="utf-8")
        self._file.write(result.to_json() + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read_results(path: Path) -> Iterator[Result]:
    """The Results of a results.jsonl (or of a report directory holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                break  # cut off mid-write by a kill
            yield Result.from_json(line)


def latest(results: Iterable[Result]) -> list[Result]:
    """One Result per pair, the last one written winning (a resumed run may repeat a pair)."""
    by_key = {}
    for r in results:
        by_key[r.key] = r
    return list(by_key.values())


def has_results(directory: Path) -> bool:
    """Whether `directory` is a report directory: it holds a results.jsonl."""
    return (Path(directory) / RESULTS).exists()


def report_dirs(output_dir: Path) -> list[Path]:
    """Report directories under `output_dir` (timestamped names sort by time), oldest first."""
    if not Path(output_dir).is_dir():
        return []
    return sorted(p for p in Path(output_dir).iterdir() if p.is_dir() and has_results(p))


def read_json(directory: Path, name: str, default: Any = None) -> Any:
    """One of the directory's JSON files (RUN, CASES, SUMMARY), or `default` when it has none."""
    path = Path(directory) / name
    return json.loads(path.read_text()) if path.exists() else default


def write_json(directory: Path, name: str, data: Any) -> None:
    (Path(directory) / name).write_text(json.dumps(data, indent=_INDENT[name], sort_keys=True))
