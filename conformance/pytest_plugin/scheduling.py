"""An xdist scheduling policy that never splits a group of cases between workers.

It is xdist's `loadscope` policy with each group of cases as a scope (the
customisation xdist's own `loadgroup` policy makes): a worker is handed
whole groups, so the worker that exports and compiles a group's cases
together runs all of its items. The groups are planning.group_indices over
the collection order, which the workers' ItemRunner uses too.
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

from conformance.execution.planning import group_indices, pair_of


class GroupScheduling(LoadScopeScheduling):
    def __init__(self, config, log=None, *, batch_size: int):
        super().__init__(config, log)
        self.batch_size = batch_size
        self._scope_of: dict[str, str] = {}

    def _split_scope(self, nodeid: str) -> str:
        # First called once the collection is known (schedule() sets it).
        if not self._scope_of:
            groups = group_indices([pair_of(n)[0] for n in self.collection], self.batch_size)
            self._scope_of = {n: f"group {g}" for n, g in zip(self.collection, groups)}
        return self._scope_of[nodeid]
