"""From a results directory and a group's name to its issue file: the steps in order.

A group is named as `conformance triage` and the reports show it: its id (a
digest of its key, the same every night; a unique prefix will do) or its
number (#, largest group first, counted over the whole results directory).
"""

from __future__ import annotations

from pathlib import Path

from conformance.report.issues import commands as cmd
from conformance.report.issues.evidence import EvidenceError, smallest
from conformance.report.issues.markdown import render
from conformance.report.issues.replay import replay
from conformance.report.triage import Group

FILE = "issue-{id}.md"


def pick(groups: list[Group], names: list[str]) -> list[Group]:
    """The groups `names` name (ids, id prefixes or numbers); EvidenceError listing the groups for an unknown one."""
    picked = []
    for name in names:
        found = _one(groups, name.strip().lstrip("#"))
        if found is None:
            listing = "\n".join(f"  #{n} {g.id}  {g.count} x {g.code_label} {g.op or '-'} ({g.tool})" for n, g in enumerate(groups[:30], 1))
            more = f"\n  ... and {len(groups) - 30} more (conformance triage --limit N)" if len(groups) > 30 else ""
            raise EvidenceError(f"no root-cause group {name!r} in this results directory: name one by its id or its #:\n{listing}{more}"
                                if groups else f"no root-cause group {name!r}: this results directory has no failures")
        if found not in picked:
            picked.append(found)
    return picked


def _one(groups: list[Group], name: str) -> Group | None:
    if name.isdigit() and len(name) < 8 and 1 <= int(name) <= len(groups):
        return groups[int(name) - 1]
    matches = [g for g in groups if g.id.startswith(name.lower())] if name else []
    return matches[0] if len(matches) == 1 else None


def issue_markdown(group: Group, results_dir: Path, cases: dict, versions: dict, *, replayed: bool = True) -> str:
    """The group's issue file; EvidenceError when the results directory holds no bundle of it."""
    shown = smallest(group, results_dir, cases)
    text_files = [f.name for f in shown.bundle.ir_files()]
    commands = cmd.as_run(shown.bundle.commands, shown.bundle.path, set(text_files))
    outputs = replay(commands, shown.bundle.path, text_files) if replayed and commands.lines else None
    return render(group, shown, commands, versions, results_dir, outputs)


def write(group: Group, text: str, output: Path) -> Path:
    output.mkdir(parents=True, exist_ok=True)
    path = output / FILE.format(id=group.id)
    path.write_text(text, encoding="utf-8")
    return path


__all__ = ["EvidenceError", "FILE", "issue_markdown", "pick", "write"]
