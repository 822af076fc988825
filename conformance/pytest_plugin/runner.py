"""Results for pytest items, computed a group at a time in a supervised child.

Each pytest process (or xdist worker) owns one Engine. When an item asks
for its result, the runner computes the whole job the item belongs to, so
the cases of a group share one export per case and one compile per backend;
the other items of the job then find their results waiting. What is done
with a result (judging, --localize, the rerun command) is the Run's
(run/session.py), as for `conformance nightly`.
"""

from __future__ import annotations

from pathlib import Path

from conformance.cases.spec import Case
from conformance.execution.engine import Engine
from conformance.execution.planning import Pair, group_indices, plan_jobs
from conformance.result import Result
from conformance.run.session import Run


class ItemRunner:
    def __init__(self, run: Run, localize_root: Path | None = None):
        self.run = run
        self.localize_root = localize_root  # --localize: failing cases of several ops are localized, their workspaces here
        self.cases: dict[str, Case] = {}
        self.engine = Engine(run.settings)
        self.results: dict[Pair, Result] = {}
        self.job_of: dict[Pair, list[Pair]] = {}

    def plan(self, items) -> None:
        """Cut the session's items (in run order) into jobs, as xdist's scheduler groups them."""
        pairs = [(item.case.id, item.backend.name) for item in items]
        self.run.plan_budgets(pairs)  # a pair pinned TIMEOUT is confirmed in seconds, as in a nightly
        heavy = self.run.run_alone(self.cases.values())
        batch_size = self.run.settings.batch_size
        groups: dict[int, list[Pair]] = {}
        for pair, group in zip(pairs, group_indices([p[0] for p in pairs], batch_size)):
            groups.setdefault(group, []).append(pair)
        for group_pairs in groups.values():
            for job in plan_jobs(group_pairs, batch_size, heavy):
                for pair in job:
                    self.job_of[pair] = job

    def result_for(self, item) -> Result:
        pair = (item.case.id, item.backend.name)
        if pair not in self.results:
            job = [p for p in self.job_of.get(pair, [pair]) if p not in self.results]
            for result in self.engine.run(job):
                self.results[result.key] = result
        result = self.results.pop(pair)
        if self.localize_root is not None:
            self.run.localize(result, item.case, self.localize_root)
        return result

    def close(self) -> None:
        self.engine.close()
