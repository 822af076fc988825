"""The report directory as a run writes it (what each file is: report_dir.py).

run.json and cases.json come first, before any work, so that a run killed
outright stays resumable; each Result is appended the moment it is known;
run.json is written again when the run stops (wall seconds summed over the
sessions of a resumed run); the reports (summary.json, report.md,
report.html) are built last. `conformance nightly` writes as it runs,
`pytest --report-dir` once its session ends; either way through here.
"""

from __future__ import annotations

from pathlib import Path

from conformance.report_dir import CASES, RUN, ResultsFile, write_json
from conformance.result import Result
from conformance.run.record import case_snapshot, utc_now


class ReportWriter:
    def __init__(self, directory: Path, record: dict):
        """`record`: run.json's content (run/record.run_record, or the run.json of the run resumed)."""
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.record = record
        self.results = ResultsFile(self.directory)

    def start(self, cases) -> None:
        """cases.json and run.json, before any pair runs."""
        self.start_from(case_snapshot(cases))

    def start_from(self, snapshot: dict[str, dict]) -> None:
        """The same from the cases' records (a run answered from the verdict store has no Case objects)."""
        write_json(self.directory, CASES, snapshot)
        write_json(self.directory, RUN, self.record)

    def add(self, result: Result) -> None:
        """results.jsonl, flushed at once (a later line of the same pair wins: report_dir.latest)."""
        self.results.append(result)

    def close(self) -> None:
        self.results.close()

    def stop(self, seconds: float, *, finished: bool, peak_rss_mb: float | None = None) -> None:
        """run.json again: this session's `seconds` added, `finished` stamped when the run is whole."""
        self.close()
        self.record["wall_seconds"] = round(self.record.get("wall_seconds", 0.0) + seconds, 1)
        if peak_rss_mb is not None:
            self.record["peak_rss_mb"] = max(self.record.get("peak_rss_mb", 0.0), peak_rss_mb)
        if finished:
            self.record["finished"] = utc_now()
        write_json(self.directory, RUN, self.record)

    def build(self, baseline: Path | None) -> dict:
        """summary.json, report.md and report.html from what the directory holds; returns the summary."""
        from conformance.report.build import build_reports

        return build_reports(self.directory, baseline)
