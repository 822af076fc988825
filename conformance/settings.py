"""Settings of a run: everything a supervised child needs to rebuild the run's world.

A child process loads the registry and the backends itself from these, so
they are plain data (JSON) and nothing else crosses the process boundary.
Plain data used by every layer, so it sits at the bottom and imports nothing
of ours but the export modes: `cases.registry.sources_of(settings)` turns
its case paths into sources.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from typing import Any

from conformance.export_modes import DEFAULT_EXPORT_MODE

DEFAULT_CASE_TIMEOUT = 300.0
DEFAULT_MEMORY_LIMIT_MB = 3072
DEFAULT_MEMORY_KILL_MB = 8192
DEFAULT_BATCH = 16
DEFAULT_RERUNS = 1


@dataclass
class Settings:
    backends: list[str] = field(default_factory=list)  # --backend specs
    case_paths: list[str] = field(default_factory=list)  # extra case dirs or modules
    default_cases: bool = True  # include the project's own cases/ directory
    suites: list[str] = field(default_factory=lambda: ["default"])
    seed: int = 0
    case_timeout: float = DEFAULT_CASE_TIMEOUT  # seconds without progress before TIMEOUT
    # Shorter silence limits of some pairs, from their history ("case\tbackend" -> seconds: execution/budgets.py)
    budgets: dict[str, float] = field(default_factory=dict)
    memory_limit_mb: int = DEFAULT_MEMORY_LIMIT_MB  # a child above this is replaced between jobs
    memory_kill_mb: int = DEFAULT_MEMORY_KILL_MB  # a child (with its compilers) above this is killed at once
    memory_budgets: dict[str, int] = field(default_factory=dict)  # lower kill limits (MB) of known runaways (budgets.py)
    batch_size: int = DEFAULT_BATCH  # op cases compiled together by batching backends
    lanes: int = 1  # children at work at once on this machine (-j, xdist's workers): their compilers' threads follow
    export_mode: str = DEFAULT_EXPORT_MODE  # for cases that do not name one
    artifacts: str | None = None  # reproducer bundles go here when set
    reruns: int = DEFAULT_RERUNS  # a failure is run again this often, each time in a fresh child: differing verdicts are FLAKY
    check_determinism: bool = False  # passing pairs run twice too, their outputs compared bit for bit
    compile_only: bool = False  # pairs a backend can run elsewhere (Backend.remote_run) stop COMPILED, not run here
    time_runs: int = 0  # --gates: a gated pair's run stage is timed this many more times, the median kept (gates/timing.py)
    timed_cases: list[str] = field(default_factory=list)  # gated beyond the default choice: the cases the gates files name
    keep_outputs: str | None = None  # every pair's outputs are saved here, pass or fail (conformance localize reads them)
    cache_dir: str | None = None  # compile cache; None disables it
    cache_limit_mb: int = 4096  # compiled artifacts kept, least recently used evicted first
    options: dict[str, Any] = field(default_factory=dict)  # backend options, e.g. custom_ops
    sys_path: list[str] = field(default_factory=lambda: list(sys.path))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        return cls(**data)
