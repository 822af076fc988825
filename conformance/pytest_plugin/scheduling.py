"""An xdist scheduling policy that never splits a group of cases between workers.

It is xdist's own `load` policy with one change: a chunk sent to a worker is
extended to the end of the group its last item belongs to, so the worker
that exports and compiles a group's cases together runs all of its items.
"""

from __future__ import annotations

from xdist.scheduler import LoadScheduling

from conformance.execution.planning import group_indices, pair_of


class GroupScheduling(LoadScheduling):
    def __init__(self, config, log=None, batch_size: int = 16):
        super().__init__(config, log)
        self.batch_size = batch_size
        self._groups: list[int] | None = None

    def _send_tests(self, node, num: int) -> None:
        if self._groups is None:
            self._groups = group_indices([pair_of(n)[0] for n in self.collection], self.batch_size)
        while 0 < num < len(self.pending) and self._groups[self.pending[num]] == self._groups[self.pending[num - 1]]:
            num += 1
        super()._send_tests(node, num)
