"""Programs through the Engine: a batch of them on some backends, each Result named after its program.

One Runner keeps one Engine (one supervised child, warm) for its life: each
batch is written into the slots and run as one job, so the IREE backends
compile the batch's programs together (--batch-size at a time) and a crash
or hang costs only the guilty program (the engine splits the batch).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from conformance.execution.engine import Engine
from conformance.programs import slots
from conformance.programs.program import Program
from conformance.result import Result
from conformance.settings import Settings


class Runner:
    def __init__(self, settings: Settings, backends: list[str], workspace: Path, capacity: int,
                 rtol: float | None, atol: float | None, export_mode: str | None = None, prefix: str = slots.PREFIX):
        """`backends`: the backends' names as Results give them (the specs are settings.backends)."""
        self.backends = backends
        self.capacity = capacity
        self.prefix = prefix
        self.tolerances = (rtol, atol)
        self.export_mode = export_mode
        self.directory = slots.prepare(workspace, capacity, prefix, rtol, atol, export_mode)
        # Only the slots: no registry of thousands to load, no re-run (the caller judges the same way again).
        self.settings = dataclasses.replace(
            settings, case_paths=[str(self.directory)], default_cases=False, suites=["default"],
            reruns=0, check_determinism=False, compile_only=False, artifacts=None, keep_outputs=None,
        )
        self.engine = Engine(self.settings)
        self.jobs = 0

    def run(self, programs: list[Program], backends: list[str] | None = None) -> list[list[Result]]:
        """For each program, its Results (one per backend: all, or those named), each Result's case the slot it ran in."""
        found: list[list[Result]] = []
        for start in range(0, len(programs), self.capacity):
            found += self._run(programs[start : start + self.capacity], backends or self.backends)
        return found

    def _run(self, batch: list[Program], backends: list[str]) -> list[list[Result]]:
        for index, program in enumerate(batch):
            if (program.rtol, program.atol) != self.tolerances or program.export_mode != self.export_mode:
                raise ValueError("a slot runs programs with the runner's tolerances and export mode only")
            slots.fill(self.directory, index, program)
        ids = [slots.slot_id(self.prefix, index) for index in range(len(batch))]
        pairs = [(case, backend) for case in ids for backend in backends]
        by_pair = {r.key: r for r in self.engine.run(pairs)}
        self.jobs += 1
        return [[by_pair[(case, backend)] for backend in backends] for case in ids]

    def close(self) -> None:
        self.engine.close()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *_) -> None:
        self.close()


def confirm(settings: Settings, specs: list[str], directory: Path, pairs: list[tuple[str, str]], bundles: Path) -> dict:
    """Run written case files from `directory` in a fresh child, bundles on: {pair: Result}.

    The file, not the program in memory, is what a user runs: this shows it
    fails as found, and leaves the reproducer bundle of each failure.
    """
    run = dataclasses.replace(settings, backends=specs, case_paths=[str(directory)], default_cases=False,
                              suites=["default"], artifacts=str(bundles))
    engine = Engine(run)
    try:
        return {r.key: r for r in engine.run(pairs)}
    finally:
        engine.close()
