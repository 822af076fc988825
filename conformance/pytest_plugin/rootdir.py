"""A directory given as `--artifacts DIR` must not become pytest's rootdir.

pytest finds its rootdir and configuration file before it loads plugins, so
it cannot know that DIR in `--artifacts DIR` is this plugin's option value:
it takes an existing DIR for a test path, roots the session there and reads
none of the project's settings (pytest's docs on rootdir warn about plugin
options with path values; pytest-dev/pytest#8846). `--artifacts=DIR` is read
right. So when a command line gives a path option the other way, the
process starts again with the `=` form, before anything has run or been
printed; where it cannot (pytest.main() called from Python, PYTEST_ADDOPTS),
the run stops and says which form to use.
"""

from __future__ import annotations

import os
import shlex
import sys

import pytest

from conformance import run_options

FLAGS = {flag for option in run_options.PYTEST if option.path for flag in option.flags}


def joined(args: list[str]) -> list[str]:
    """`args` with each `FLAG VALUE` that pytest reads as a path (VALUE exists) written `FLAG=VALUE`."""
    out: list[str] = []
    i = 0
    while i < len(args):
        if args[i] in FLAGS and i + 1 < len(args) and os.path.exists(args[i + 1]):
            out.append(f"{args[i]}={args[i + 1]}")
            i += 2
        else:
            out.append(args[i])
            i += 1
    return out


def _refuse(args: list[str], where: str) -> None:
    misread = [arg for arg in joined(args) if arg not in args]
    raise pytest.UsageError(
        f"{', '.join(a.replace('=', ' ', 1) for a in misread)} {where}: pytest takes an existing path for a test "
        f"path and roots the session there, reading none of this project's settings; write {', '.join(misread)}"
    )


def restart_if_misled(config: pytest.Config) -> None:
    env = shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    if joined(env) != env:
        _refuse(env, "in PYTEST_ADDOPTS")
    given = list(config.invocation_params.args)
    fixed = joined(given)
    if fixed == given:
        return
    argv = sys.orig_argv
    prefix = argv[: len(argv) - len(given)]  # the interpreter, its flags and how it started pytest
    if argv[len(prefix) :] != given:  # pytest.main() called from Python: not ours to restart
        _refuse(given, "(pytest.main)")
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [*prefix, *fixed])
