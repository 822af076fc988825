"""Resuming an interrupted run with the options it was started with.

run.json records the run's options under "run_options": each option's value
by its dest, in a plain form (backends as a list of specs, paths absolute,
the shard as I/N). `--resume DIR` takes back every option the command line
leaves out. One it gives must agree with the run if it changes results
(options.RESULT_OPTIONS, and the backends' own options): a report holds one
run, never the halves of two. The others (options.HOW_OPTIONS: -j, the
compile cache, --artifacts) only change how the rest is run, and may differ.

The nightly command declares the recorded options with None as their
default, so that "not given" can be told from "given the default value";
`fill_defaults` puts the real defaults in for a new run.
"""

from __future__ import annotations

import copy
import os
import shlex
from pathlib import Path

from conformance import content
from conformance import run_options as ro
from conformance.nightly.options import HOW_OPTIONS, RESULT_OPTIONS, SHARD, shard
from conformance.report_dir import RUN, read_json

KEY = "run_options"
RECORDED = RESULT_OPTIONS + HOW_OPTIONS


class ResumeError(Exception):
    """The command line contradicts the run it resumes; the message names each option."""


def unset_defaults(parser) -> None:
    """Make None the default of every recorded option: None then means "not given"."""
    parser.set_defaults(**{option.dest: None for option in RECORDED})


def fill_defaults(args, options) -> None:
    """Give each option still None (not given, not restored) its real default."""
    for option in options:
        if getattr(args, option.dest, None) is None:
            setattr(args, option.dest, copy.copy(option.default))


def record(args, options) -> dict:
    """What run.json keeps of the options, to restore them on --resume."""
    return {option.dest: plain(option, getattr(args, option.dest, None)) for option in options}


def recorded(directory: Path) -> dict | None:
    """The options a run recorded; None for a run.json written before they were."""
    return read_json(directory, RUN).get(KEY)


def recorded_backends(directory: Path) -> list[str]:
    """The backends run.json names (every run.json has them, options recorded or not)."""
    return list(read_json(directory, RUN).get("backends") or [])


def restore(args, kept: dict, options, result_options, directory) -> None:
    """Take back from `kept` (run.json's record) every option not given; refuse a given one that
    changes results and differs from the run's, naming both values."""
    conflicts = []
    for option in options:
        if option.dest not in kept:
            continue  # an option the run could not record (added since): its default applies
        given = getattr(args, option.dest, None)
        if given is None:
            setattr(args, option.dest, from_plain(option, kept[option.dest]))
        elif option in result_options and plain(option, given) != kept[option.dest]:
            conflicts.append(f"the run used {shown(option, kept[option.dest])}; you gave {shown(option, plain(option, given))}")
    if conflicts:
        raise ResumeError(
            f"--resume {directory}: {'; '.join(conflicts)} (leave such options out: a resumed run takes the run's own; "
            "or start a new run)"
        )


# -- values as run.json keeps them ---------------------------------------------

# What a path option left out stands for: its value is compared with a given one.
_IMPLIED = {ro.XFAIL_DIR.dest: lambda: str(content.DEFAULT_XFAIL_DIR), ro.CACHE_DIR.dest: ro.default_cache_dir}


def plain(option, value):
    """`value` in a form JSON keeps and two runs compare: backends a list, paths absolute, the shard I/N."""
    if option is ro.BACKEND:
        return [_absolute_spec(spec) for spec in ro.parse_backends(value)] if value else None
    if option is SHARD:
        return str(value) if value else None
    if option.path:
        if value is None and option.dest in _IMPLIED:
            value = _IMPLIED[option.dest]()
        if isinstance(value, (list, tuple)):
            return [_absolute(v) for v in value]
        return _absolute(value) if value else value
    if isinstance(value, tuple):
        return list(value)
    return value


def from_plain(option, value):
    if option is SHARD and value:
        return shard(value)
    return copy.copy(value)


def _absolute(path: str) -> str:
    # --cases also takes a module name: only what exists on disk is a path.
    return os.path.abspath(path) if os.path.exists(path) else path


def _absolute_spec(spec: str) -> str:
    """A backend spec `path/to/file.py:ATTR` with the file's path absolute; others as they are."""
    target, sep, attr = spec.rpartition(":")
    if sep and target.endswith(".py") and os.path.exists(target):
        return f"{os.path.abspath(target)}:{attr}"
    return spec


def shown(option, value) -> str:
    """How the option reads on a command line: `--backend eager,tosa`, `-k 'not mul'`, `no --tag`."""
    flag = option.flags[0]
    if value is None or value == [] or value is False:
        return f"no {flag}"
    if value is True:
        return flag
    if option is ro.BACKEND:
        return f"{flag} {','.join(value)}"
    if isinstance(value, list):
        return " ".join(f"{flag} {shlex.quote(str(v))}" for v in value)
    if isinstance(value, float):
        return f"{flag} {value:g}"
    return f"{flag} {shlex.quote(str(value))}"
