"""One (case, backend) pair as a job carries it through the backend's stages.

Every part of a job works on these: the stage walk hands each stage's value
to the next, run-and-compare reads the compiled value, the compile cache
skips a pair ahead or stores its artifact, and the emitter turns a finished
pair into its Result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.backends.protocol import CaseRun


@dataclass
class Item:
    """One (case, backend) pair on its way through the backend's stages."""

    case_id: str
    run: CaseRun
    value: Any = None
    timings: dict[str, float] = field(default_factory=dict)
    done: bool = False
    resume_at: int = 0  # index of the next stage to run (a cache hit skips ahead)
    case_key: str | None = None  # compile-cache keys, when the backend caches (compile_cache_store.py)
    lowered_key: str | None = None
    exported_key: str | None = None
    ir_key: str | None = None
    refused_key: str | None = None
    lowered_from_cache: bool = False  # its value is the lowered IR the cache kept: the stages before compile did not run
    exported_from_cache: bool = False  # its value is the exported program the cache kept: the export stage did not run
