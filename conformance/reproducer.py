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
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

COMMANDS = "commands.json"
REPLAY = "replay.json"


@dataclass
class Reproducer:
    """How to replay one stage with public tools, outside this framework.

    `files` maps a file name to a function writing it; `commands` run in a
    directory holding those files (e.g. torch-mlir-opt, iree-compile).
    """

    files: dict[str, Callable[[Path], None]]
    commands: list[list[str]]
    # Commands replaying what `commands` do from the stage's source, where those run a product of it
    # (a COMPILED pair's bundle runs a module that holds a batch; its replay compiles the case alone).
    replay: list[list[str]] = field(default_factory=list)


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
    if reproducer.replay:
        (target / REPLAY).write_text(json.dumps(reproducer.replay))


def staged_commands(folder: Path, name: str = COMMANDS) -> list[list[str]]:
    """The commands of a staged reproducer (see stage_reproducer); name=REPLAY: its replay, [] when it has none."""
    path = folder / name
    return json.loads(path.read_text()) if path.exists() else []


REPLAY_SCRIPT = "reproduce.sh"


def replay_script(title: str, commands: list[list[str]], seconds: int, tool_path: str) -> str:
    """reproduce.sh: `commands` run in the script's folder, each stopped after `seconds` as the run stopped it.

    `title` says what it replays; `tool_path` is the PATH of the machine that
    wrote it (its public tools), put before the user's own.
    """
    lines = [
        "#!/bin/sh",
        f"# Replays {title}.",
        "# The tools of the machine that wrote this bundle; adjust PATH if you moved it.",
        f'export PATH="{tool_path}:$PATH"',
        "export TOSA_MODEL_NO_BACKTRACE=1  # else the reference model attaches gdb on a fatal error",
        "set -e  # the first command that fails ends the script, with its status",
        'cd "$(dirname "$0")"',
        f"# Each command is stopped after the run's case timeout ({seconds} s), as the run stopped it: a hang ends (status 124).",
        "step() {",
        f'    timeout --foreground -k 10 {seconds} "$@" && return 0 || status=$?',
        f'    [ "$status" -ne 124 ] || echo "reproduce.sh: $1 was still running after {seconds} s: stopped (the hang reproduces)" >&2',
        '    return "$status"',
        "}",
        *("step " + shlex.join(command) for command in commands),
    ]
    return "\n".join(lines) + "\n"


def write_replay_script(folder: Path, title: str, commands: list[list[str]], seconds: int, tool_path: str) -> Path:
    path = folder / REPLAY_SCRIPT
    path.write_text(replay_script(title, commands, seconds, tool_path))
    path.chmod(0o755)
    return path
