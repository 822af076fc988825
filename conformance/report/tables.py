"""Plain-text tables of results, shared by the pytest summary and the reports."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable

from tabulate import tabulate

from conformance.result import Result
from conformance.taxonomy import Verdict

VERDICTS = [v.value for v in Verdict]


def outcome(result: Result) -> str:
    """The verdict when the result was judged against an xfail set, else its status."""
    return result.verdict or result.status.upper()


def backend_rows(results: Iterable[Result]) -> tuple[list[str], list[list]]:
    """Per backend: counts by outcome, then its failure codes, most frequent first."""
    counts: dict[str, Counter] = defaultdict(Counter)
    codes: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        counts[r.backend][outcome(r)] += 1
        if r.code:
            codes[r.backend][r.code] += 1
    columns = [v for v in VERDICTS if any(c[v] for c in counts.values())]
    rows = []
    for backend in sorted(counts):
        c = counts[backend]
        top = ", ".join(f"{code} {n}" for code, n in codes[backend].most_common())
        rows.append([backend, sum(c.values()), *(c[v] for v in columns), top or "-"])
    return ["backend", "total", *columns, "failure codes"], rows


def backend_table(results: Iterable[Result], fmt: str = "simple") -> str:
    headers, rows = backend_rows(results)
    return tabulate(rows, headers=headers, tablefmt=fmt)
