"""The verdict store on disk, under the compile cache's directory: `<cache-dir>/verdicts/`.

    selections/ab/<key>.json  a command line's choice of cases -> the cases (as cases.json has them),
                              the backends' names, and every source tree they came from with its digest
    results/ab/<key>.json     a pair's result as it came from its child, before judging

A selection is keyed by what decides which cases a command chooses (the
options that select, the case paths and the directory they are read from,
the installed case plugins, conformance's code and the versions: OpInfo's
samples come from torch) and holds the trees it was read from; it is good
while every tree still has its digest. A result is keyed by everything its
selection's trees hold, the settings that shape results, the backend spec,
the case id, conformance's code and every version (the host CPU's model
included).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from conformance import content
from conformance.digests import code_digest, digest, tree_digest
from conformance.execution.compile_cache_store import read_json, toolchain, write_atomically
from conformance.result import ENDED_BY, FROM_VERDICT_STORE, MACHINE_FREE_ENDINGS, Result
from conformance.taxonomy import Code, Status
from conformance.warm.fingerprint import case_entry_points, defining_tree

FORMAT = 2  # 2: the backends' environment variables
# Settings that decide which cases load, and those that shape a pair's result (the rest: where output goes, limits).
SOURCE_SETTINGS = ("case_paths", "default_cases", "suites")
RESULT_SETTINGS = (*SOURCE_SETTINGS, "seed", "export_mode", "reruns", "check_determinism", "compile_only", "batch_size", "options")
# Failures that may be the machine's or the moment's: a diagnostic no parser knows (an infrastructure
# error among them), a tool not installed here; a hang or a crash unless what ended it says nothing of
# the machine (a flood of output, a signal such as SIGSEGV: result.ENDED_BY), not a budget, the memory
# watchdog or a SIGKILL.
NOT_STORED = {Code.UNKNOWN, Code.TOOL_MISSING}


def storable(result: Result) -> bool:
    if result.status in (Status.PASS, Status.SKIP):
        return True
    if result.status != Status.FAIL or result.code in NOT_STORED:
        return False
    return result.code not in (Code.TIMEOUT, Code.CRASH) or result.extras.get(ENDED_BY) in MACHINE_FREE_ENDINGS


def usable(settings) -> bool:
    """Whether a run may answer from the store: it has a cache, and writes nothing a stored result lacks
    (reproducer bundles, kept outputs) and measures nothing (--gates times the run stage)."""
    return bool(settings.cache_dir) and not settings.artifacts and not settings.keep_outputs and not settings.time_runs


@dataclass
class Selection:
    cases: dict[str, dict]  # case id -> its record (cases.json), in the order chosen
    backends: dict[str, str]  # --backend spec -> the backend's name
    trees: dict[str, str]  # every source tree of the cases and backends -> its digest
    environment: dict[str, list[str]]  # --backend spec -> the variables its results depend on (Backend.environment)

    def pair_key(self, settings, spec: str, case_id: str) -> str:
        shaping = {name: getattr(settings, name) for name in RESULT_SETTINGS}
        variables = {name: os.environ.get(name) for name in self.environment.get(spec, ())}
        return digest(FORMAT, code_digest(), toolchain(), self.trees, shaping, spec, variables, case_id)

    def record(self) -> dict:
        return {"cases": list(self.cases.items()), "backends": self.backends, "trees": self.trees, "environment": self.environment}


class VerdictStore:
    def __init__(self, cache_dir: str | Path):
        self.root = Path(cache_dir) / "verdicts"

    def _path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / f"{key}.json"

    # -- selections --------------------------------------------------------------------------

    @staticmethod
    def selection_key(settings, specs: list[str] | None, keyword: str | None, tags, skip_tags) -> str:
        """`specs` None: the default backends (the shipped matrix)."""
        sources = {name: getattr(settings, name) for name in SOURCE_SETTINGS}
        return digest(FORMAT, code_digest(), toolchain(), sources, os.getcwd(), str(content.PROJECT_ROOT), case_entry_points(),
                      specs, keyword, sorted(tags or ()), sorted(skip_tags or ()))

    def remember(self, key: str, loaded, chosen, backends: dict[str, object]) -> Selection | None:
        """Record the choice under `key` (selection_key); what selection_of says."""
        selection = self.selection_of(loaded, chosen, backends)
        if selection is not None:
            write_atomically(self._path("selections", key), json.dumps(selection.record()).encode())
        return selection

    @staticmethod
    def selection_of(loaded, chosen, backends: dict[str, object]) -> Selection | None:
        """The choice of a run: `loaded`, every case of the registry (their trees), `chosen` in order,
        `backends` by spec. None when a case or backend comes from no tree (a plugin's list): nothing is stored."""
        trees = {str(content.DEFAULT_CASES_DIR), str(content.DEFAULT_BACKENDS_DIR)}
        for case in loaded:
            if not case.origin:
                return None
            trees.add(str(Path(case.origin).resolve()))
        for backend in backends.values():
            tree = defining_tree(backend)
            if tree is None:
                return None
            trees.add(tree)
        digests = {tree: tree_digest(tree) for tree in sorted(trees)}  # None: a checkout without cases/ or backends/
        return Selection({c.id: c.record() for c in chosen}, {spec: b.name for spec, b in backends.items()}, digests,
                         {spec: list(b.environment) for spec, b in backends.items()})

    def selection(self, key: str) -> Selection | None:
        """The recorded choice, while every tree it came from is as it was."""
        record = read_json(self._path("selections", key))
        if record is None or any(tree_digest(tree) != d for tree, d in record["trees"].items()):
            return None
        return Selection(dict(record["cases"]), record["backends"], record["trees"], record["environment"])

    # -- results -----------------------------------------------------------------------------

    def put(self, key: str, result: Result) -> None:
        if storable(result) and not result.extras.get(FROM_VERDICT_STORE):
            data = result.to_dict() | {"verdict": None}
            write_atomically(self._path("results", key), json.dumps(data, sort_keys=True).encode())

    def get(self, key: str) -> Result | None:
        """The stored result, marked as answered from the store (result.FROM_VERDICT_STORE)."""
        record = read_json(self._path("results", key))
        if record is None:
            return None
        result = Result.from_dict(record)
        result.extras[FROM_VERDICT_STORE] = True
        return result

