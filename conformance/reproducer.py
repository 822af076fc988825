"""A stage's reproducer: how to replay it with public tools, and where it waits on disk.

A stage declares its reproducer (CaseRun.reproduce) before its risky part.
With --artifacts on it is written at once into the pair's staging folder,

    <staging>/stages/<stage>/
        <files>          what the commands read, e.g. model.mlir
        commands.json    the commands, run in this folder

so that a stage which then crashes or hangs the process still leaves it
behind; bundles.py turns the failing stage's folder into the bundle.

A leaf module: the Backend protocol uses it, and it uses nothing of ours.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

COMMANDS = "commands.json"


@dataclass
class Reproducer:
    """How to replay one stage with public tools, outside this framework.

    `files` maps a file name to a function writing it; `commands` run in a
    directory holding those files (e.g. torch-mlir-opt, iree-compile).
    """

    files: dict[str, Callable[[Path], None]]
    commands: list[list[str]]


def staged_stage(staging: Path, stage: str) -> Path:
    """The folder holding `stage`'s staged reproducer."""
    return staging / "stages" / stage


def stage_reproducer(staging: Path, stage: str, reproducer: Reproducer) -> None:
    """Write a stage's replay files and commands now, before the stage can crash."""
    target = staged_stage(staging, stage)
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name, write in reproducer.files.items():
        write(target / name)
    (target / COMMANDS).write_text(json.dumps(reproducer.commands))


def staged_commands(folder: Path) -> list[list[str]]:
    """The commands of a staged reproducer (see stage_reproducer)."""
    return json.loads((folder / COMMANDS).read_text())
