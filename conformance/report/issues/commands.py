"""A bundle's commands as the reader of an issue runs them: in an empty folder, with the IR saved from
the issue, and the inputs written inline where they are small enough to read.

iree-run-module takes a tensor as text (`--input=2x3xf32=1 2 3 4 5 6`), so a
case whose inputs and expected outputs are small needs no file beside the
IR; larger ones, and every binary the TOSA reference model reads, are named
as attachments.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import numpy as np

INLINE_ELEMENTS = 64  # a tensor up to this size is written into the command; larger ones are attached
# numpy dtype -> iree-run-module's element type (the types its text parser reads exactly)
IREE_TYPES = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64"}
_NPY_FLAG = re.compile(r"^(--(?:input|expected_output))=@(.+\.npy)$")
# What a tool needs besides PATH: the TOSA reference model attaches gdb on a fatal error unless told not to.
ENVIRONMENT = {"tosa_reference_model": {"TOSA_MODEL_NO_BACKTRACE": "1"}}


@dataclass
class Commands:
    lines: list[list[str]]  # each command, as run from the folder holding the files
    attachments: list[str]  # bundle files the commands read that the issue cannot hold as text (paths relative to it)
    environment: dict[str, str]  # variables the tools need


def as_run(commands: list[list[str]], bundle: Path, text_files: set[str]) -> Commands:
    """`commands` with their small .npy arguments inline; the other files they name become attachments
    (`text_files`, the IR the issue quotes, are saved from the issue instead)."""
    lines, attachments, environment = [], [], {}
    for command in commands:
        line, named = [], []
        for arg in command:
            flag = _NPY_FLAG.match(arg)
            if flag and (bundle / flag.group(2)).is_file():
                inline = iree_text(bundle / flag.group(2))
                if inline is not None:
                    line.append(f"{flag.group(1)}={inline}")
                    continue
            line.append(arg)
            named.append(arg)
        environment.update(ENVIRONMENT.get(command[0], {}))
        lines.append(line)
        for arg in named[1:]:
            for name in _file_names(arg):
                if name not in text_files and name not in attachments and (bundle / name).is_file():
                    attachments.append(name)
    return Commands(lines, attachments, environment)


def iree_text(path: Path) -> str | None:
    """An .npy as iree-run-module's text form (`2x3xf32=1 2 3 4 5 6`), or None when too large or of another type."""
    array = np.load(path)
    kind = IREE_TYPES.get(array.dtype.name)
    if kind is None or array.size > INLINE_ELEMENTS:
        return None
    shape = "x".join(str(d) for d in array.shape)
    values = " ".join(_number(v) for v in array.reshape(-1))
    return f"{shape}x{kind}={values}" if shape else f"{kind}={values}"


def _number(value) -> str:
    if isinstance(value, np.floating):
        return str(value)  # numpy's shortest text that reads back to the same value of this width
    return str(int(value))


def _file_names(arg: str) -> list[str]:
    """Files an argument names: `model.mlir`, `--tosa_file=x`, `--ifm_file a.npy,b.npy`, `@inputs/set0/0.npy`."""
    value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
    return [part.lstrip("@") for part in value.split(",") if part and not part.startswith("-")]


def shell_lines(commands: Commands) -> list[str]:
    """The commands as shell lines, a variable a tool needs set before them."""
    lines = [f"export {name}={shlex.quote(value)}" for name, value in commands.environment.items()]
    return lines + [shlex.join(line) for line in commands.lines]
