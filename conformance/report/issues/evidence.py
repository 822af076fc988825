"""What a results directory holds for one root-cause group, as an issue file needs it.

The case an issue shows is the group's smallest: a reduction of a member when
`conformance reduce` wrote one under the results directory (DIR/reduced/
CASE/BACKEND/reduced.json, `--output-dir DIR/reduced`), else the member with
the fewest ATen ops, then the fewest files to attach (inputs too large to
write inline), then the fewest input elements, then the shortest IR.
Only members with a bundle (the run's --artifacts) can be shown: a bundle
holds the IR handed to the failing tool, the public-tool commands
(reproduce.sh) and what the tool printed (details.txt); see bundles.py.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from conformance.bundles import bundle_dir
from conformance.paths import pair_dir
from conformance.report.triage import Group
from conformance.report_dir import REDUCED
from conformance.result import Result

# A bundle's own files; the rest is what the replayed tool reads (input.mlir, model.tosa, ...).
BUNDLE_OWN = {"README.txt", "reproduce.sh", "details.txt", "inputs", "expected"}
REDUCED_RECORD = "reduced.json"  # reduce/reducer.py's RECORD (not imported: report/ stays below reduce/)


class EvidenceError(Exception):
    """The results directory cannot make an issue file for the group; the message says what is missing."""


@dataclass
class Bundle:
    """One failing pair's reproducer bundle, read back."""

    path: Path
    commands: list[list[str]]  # the public-tool commands of reproduce.sh, in order
    rerun: str | None  # reproduce.sh's conformance command, for a stage no public tool runs alone
    files: list[Path]  # what the commands read, beside inputs/ and expected/
    printed: str  # details.txt: what the tools printed during the run

    @classmethod
    def read(cls, path: Path) -> Bundle:
        script = (path / "reproduce.sh").read_text()
        commands, rerun = [], None
        for line in script.splitlines():
            if line.startswith("step "):
                commands.append(shlex.split(line[len("step "):]))
            elif line.startswith("exec "):
                rerun = line[len("exec "):]
        files = sorted(p for p in path.iterdir() if p.name not in BUNDLE_OWN)
        details = path / "details.txt"
        return cls(path, commands, rerun, files, details.read_text(errors="replace") if details.exists() else "")

    def ir_files(self) -> list[Path]:
        return [f for f in self.files if f.suffix == ".mlir"]

    def input_elements(self) -> int:
        total = 0
        for npy in (self.path / "inputs").rglob("*.npy"):
            total += int(np.prod(np.load(npy, mmap_mode="r").shape))
        return total

    def ir_bytes(self) -> int:
        return sum(f.stat().st_size for f in self.ir_files())

    def attachments(self) -> int:
        """How many files a reader would have to attach besides the IR the issue quotes (none: it is self-contained)."""
        from conformance.report.issues.commands import as_run

        return len(as_run(self.commands, self.path, {f.name for f in self.ir_files()}).attachments)

    def size(self, ops: int) -> tuple:
        """What makes a case smaller to read: fewer ATen ops, nothing to attach, fewer input elements, shorter IR."""
        return (ops, self.attachments(), self.input_elements(), self.ir_bytes())


@dataclass
class Shown:
    """The case an issue shows: a member of the group, or a reduction of one."""

    result: Result  # the member's Result (for a reduction: the member it was reduced from)
    bundle: Bundle
    reduction: dict | None = None  # reduced.json, when the case shown is a reduction
    size: tuple = field(default_factory=tuple)  # Bundle.size: smaller is shown first

    @property
    def case(self) -> str:
        return self.reduction["case_id"] if self.reduction else self.result.case

    @property
    def backend(self) -> str:
        return self.result.backend


def find_bundle(result: Result, results_dir: Path) -> Path | None:
    """The pair's bundle: where the run wrote it, or the same place under the results directory (moved there)."""
    candidates = []
    if result.artifacts:
        recorded = Path(result.artifacts)
        candidates.append(recorded if recorded.is_absolute() else results_dir / recorded)
        candidates.append(results_dir / recorded.parent.parent.name / recorded.parent.name / recorded.name)
    for root in ("artifacts", "bundles"):
        candidates.append(bundle_dir(results_dir / root, result.case, result.backend))
    return next((c for c in candidates if (c / "reproduce.sh").is_file()), None)


def find_reduction(result: Result, results_dir: Path) -> tuple[dict, Path] | None:
    """(reduced.json, its bundle) when `conformance reduce` left a confirmed reduction of the pair under DIR/reduced."""
    workspace = pair_dir(results_dir / REDUCED, result.case, result.backend)
    record_path = workspace / REDUCED_RECORD
    if not record_path.is_file():
        return None
    record = json.loads(record_path.read_text())
    if not record.get("confirmed"):
        return None
    # Its paths are where reduce wrote them: a workspace moved under the results directory has them beside it.
    case_file = Path(record.get("case_file") or "")
    if not case_file.is_file():
        record["case_file"] = str(workspace / "case" / case_file.name)
    candidates = [Path(record["bundle"])] if record.get("bundle") else []
    candidates.append(bundle_dir(workspace / "bundles", record["case_id"], record["backend"]))
    bundle = next((c for c in candidates if (c / "reproduce.sh").is_file()), None)
    return (record, bundle) if bundle else None


def aten_op_count(result: Result, cases: dict) -> int:
    ops = (result.extras or {}).get("aten_ops") or cases.get(result.case, {}).get("ops") or []
    return len(ops)


def smallest(group: Group, results_dir: Path, cases: dict) -> Shown:
    """The group's case to show (see the module's doc); EvidenceError when no member has a bundle."""
    reduced, shown = [], []
    for result in group.members:
        found = find_reduction(result, results_dir)
        if found:
            record, path = found
            bundle = Bundle.read(path)
            reduced.append(Shown(result, bundle, record, bundle.size(len(record.get("ops") or []))))
        path = find_bundle(result, results_dir)
        if path:
            bundle = Bundle.read(path)
            shown.append(Shown(result, bundle, None, bundle.size(aten_op_count(result, cases))))
    for candidates in (reduced, shown):
        if candidates:
            return min(candidates, key=lambda s: (s.size, s.case, s.backend))
    raise EvidenceError(
        f"no reproducer bundle for any of the group's {group.count} failures (looked where results.jsonl says they are, "
        f"and under {results_dir}/artifacts): an issue file quotes the IR handed to the tool and the tool's command from "
        "a bundle, which a run writes with --artifacts DIR; rerun the group's cases with it, e.g. `conformance nightly "
        f"--backend {','.join(group.backends)} -k '{' or '.join(group.cases[:3])}' --artifacts DIR/artifacts ...`"
    )
