"""The results store: results.jsonl, appended as each (case, backend) finishes.

One JSON Result per line, flushed at once: a run killed at any moment
(Ctrl-C, SIGKILL) keeps every finished result, and `--resume` reads them
back. A last line cut off by the kill is ignored on reading.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from conformance.result import Result

RESULTS = "results.jsonl"


class ResultsFile:
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


def report_dirs(output_dir: Path) -> list[Path]:
    """Report directories under `output_dir` (timestamped names sort by time), oldest first."""
    if not Path(output_dir).is_dir():
        return []
    return sorted(p for p in Path(output_dir).iterdir() if p.is_dir() and (p / RESULTS).exists())
