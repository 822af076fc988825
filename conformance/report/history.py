"""What the reports beside this one say: the pass-rate trend, and each pair's outcome night after night.

A report directory's siblings in its output directory are the earlier
nights (timestamped names sort by time). The trend reads their small
summary.json; the per-pair history reads the results.jsonl of at most the
last PAIR_HISTORY_REPORTS of them, keeping one character per pair and
report, so a page shows since when a pair fails and how often it flipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from conformance.report_dir import RESULTS, SUMMARY, report_dirs

PAIR_HISTORY_REPORTS = 30  # the nights a pair's history looks back on, this one included

# One character per (pair, report): what the pair did that night.
OUTCOME_CHAR = {"pass": "p", "fail": "f", "skip": "s", "flaky": "y", "compiled": "c"}  # c: compiled, not run (no device)
ABSENT = "."  # the report did not run the pair


def earlier_reports(directory: Path) -> list[Path]:
    """The report directories beside `directory` that came before it, oldest first."""
    directory = Path(directory)
    return [d for d in report_dirs(directory.parent) if d.name < directory.name and d.resolve() != directory.resolve()]


def pass_rate_history(directory: Path) -> list[dict]:
    """Pass rates of the reports beside `directory`, oldest first, up to and without it."""
    past = []
    for other in earlier_reports(directory):
        path = other / SUMMARY
        if path.exists():
            summary = json.loads(path.read_text())
            past.append(
                {
                    "report": other.name,
                    "started": summary["run"].get("started"),
                    "pass_rate": {b: s["pass_rate"] for b, s in summary["backends"].items()},
                }
            )
    return past


@dataclass(frozen=True)
class PairHistory:
    """One pair's outcomes over the reports, oldest first, this run last: e.g. "pp.ffsf"."""

    outcomes: str

    def failing_since(self) -> int | None:
        """Index of the report where the pair's current run of failures began (None when it does not fail now).

        Nights that did not run the pair or skipped it do not break the run; a pass or a compile (no device) does.
        """
        if not self.outcomes.endswith("f"):
            return None
        since = len(self.outcomes) - 1
        for i in range(len(self.outcomes) - 1, -1, -1):
            if self.outcomes[i] in "pc":
                break
            if self.outcomes[i] == "f":
                since = i
        return since

    def flips(self) -> int:
        """How often the pair went from pass to fail or back (skips and absences ignored)."""
        ran = [c for c in self.outcomes if c in "pf"]
        return sum(a != b for a, b in zip(ran, ran[1:]))


@dataclass
class PairHistories:
    reports: list[str]  # report names, oldest first, this run last
    pairs: dict[tuple[str, str], PairHistory]


def _outcomes(path: Path) -> dict[tuple[str, str], str]:
    """(case, backend) -> outcome character of one results.jsonl, the last line of a pair winning."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                break  # cut off mid-write by a kill
            r = json.loads(line)
            out[(r["case"], r["backend"])] = OUTCOME_CHAR.get(r["status"], ABSENT)
    return out


def pair_histories(directory: Path, results, limit: int = PAIR_HISTORY_REPORTS) -> PairHistories:
    """Each pair of `results` (this run, in `directory`) with its outcomes in the last `limit` reports."""
    directory = Path(directory)
    past = earlier_reports(directory)[-(limit - 1) :] if limit > 1 else []
    nights = [_outcomes(d / RESULTS) for d in past]
    pairs = {}
    for r in results:
        key = (r.case, r.backend)
        tonight = OUTCOME_CHAR.get(r.status, ABSENT)
        pairs[key] = PairHistory("".join(night.get(key, ABSENT) for night in nights) + tonight)
    return PairHistories([d.name for d in past] + [directory.name], pairs)
