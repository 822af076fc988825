"""The facts every section of the page shares: results by pair, backend order and colours, codes, families."""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

from conformance.report.history import PairHistories, PairHistory
from conformance.report.html.format import esc, text_colour
from conformance.report.html.style import CHANGE_FLAG, UNSTYLED, code_styles, ordered_codes
from conformance.report.html.svg import BACKEND_COLOURS
from conformance.result import Result
from conformance.taxonomy import Code


class Report:
    """What the section builders read: the summary, the results, the case snapshot, the pairs' history."""

    def __init__(self, summary: dict, results: list, cases: dict[str, dict], history: PairHistories | None = None):
        self.summary = summary
        self.cases = cases or {}
        self.history = history
        self.settings = summary.get("run", {}).get("settings") or {}
        self.results: dict[tuple[str, str], Result] = {}
        for r in results:
            r = r if isinstance(r, Result) else Result.from_dict(r)
            self.results[r.key] = r
        self.backends = self._backend_order()
        self.colours = {b: BACKEND_COLOURS[i % len(BACKEND_COLOURS)] for i, b in enumerate(self.backends)}

        changes = summary.get("changes") or {}
        # Each pair changed since the baseline: (flag, the code it failed with there).
        self.changed: dict[tuple[str, str], tuple[int, str | None]] = {}
        for key, flag in CHANGE_FLAG.items():
            for item in changes.get(key) or []:
                self.changed[(item["case"], item["backend"])] = (flag, (item.get("was") or {}).get("code"))

        codes = {c for b in (summary.get("backends") or {}).values() for c in b.get("by_code") or {}}
        codes |= {r.code or Code.UNKNOWN for r in self.results.values() if r.failed}
        # Codes only the baseline had (tonight their last failure was fixed) are named among the changes.
        codes |= {was for _, was in self.changed.values() if was}
        self.codes = ordered_codes(codes)
        self.code_index = {c: i for i, c in enumerate(self.codes)}
        self.code_style = code_styles(self.codes)

        by_family: dict[str, set[str]] = defaultdict(set)
        for case, _ in self.results:
            by_family[self.family(case)].add(case)
        self.families = sorted(by_family)  # matrix rows: by family, then case id
        self.family_members = {f: sorted(by_family[f]) for f in self.families}
        self.matrix_rows = [c for f in self.families for c in self.family_members[f]]

    def _backend_order(self) -> list[str]:
        """Backends in the order the run named them (the golden one usually first), then any others."""
        summary = self.summary
        present = set(summary.get("backends") or {}) | {b for _, b in self.results}
        order = [b for b in summary.get("run", {}).get("backends") or [] if b in present]
        for backend in [*(summary.get("matrix", {}).get("backends") or []), *sorted(present)]:
            if backend not in order:
                order.append(backend)
        return order

    def past(self, key: tuple[str, str]) -> tuple[str, int | None, int] | None:
        """A pair's history: its outcomes over the reports, since which report it fails, how often it flipped."""
        h = self.history.pairs.get(key) if self.history else None
        return _history_facts(h.outcomes) if h else None

    def family(self, case: str) -> str:
        return self.cases.get(case, {}).get("family") or "unknown"

    def chip(self, code: str) -> str:
        """A code's abbreviation on its colour (the full code on hover)."""
        abbr, colour = self.code_style.get(code, UNSTYLED)
        return f'<span class="chip" style="background:{colour};color:{text_colour(colour)}" title="{esc(code)}">{esc(abbr)}</span>'

    def code_chip(self, code: str | None) -> str:
        """A code's chip and its name; a dash for none."""
        return f"{self.chip(code)} {esc(code)}" if code else "–"

    def backend_name(self, backend: str) -> str:
        colour = self.colours.get(backend, "#888")
        return f'<span class="bn"><span class="sw" style="background:{colour}"></span>{esc(backend)}</span>'


@lru_cache(maxsize=None)
def _history_facts(outcomes: str) -> tuple[str, int | None, int]:
    # 100,000 pairs share a few hundred histories ("ppp" most): each is read once.
    h = PairHistory(outcomes)
    return outcomes, h.failing_since(), h.flips()
