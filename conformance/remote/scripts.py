"""The shell scripts of a directory of COMPILED pairs: POSIX sh, iree-run-module and coreutils, nothing else.

remote.sh runs one pair: each input set's command under `timeout` (the
run's case timeout: a hang ends, exit code 124), its outputs as .npy, its
exit code and stderr beside them, stopping at the first set that fails as
a run here stops; where the runtime lists no device of the module's driver
it runs nothing (status 75), and the pair stays COMPILED. run-compiled.sh runs every pair of the directory ($JOBS at a time). The
runtime is $IREE_RUN_MODULE, else DIR/bin/iree-run-module, else the one on PATH.
"""

from __future__ import annotations

import math
import shlex

from conformance.remote.layout import DIRECTORY_SCRIPT, EXIT_CODE, OUTPUTS, PAIR_SCRIPT, RUNTIME_INFO, STDERR, STDOUT

TOOL = "iree-run-module"  # the first word of each command a backend's remote_run gives
NO_DEVICE = 75  # remote.sh's status when the runtime lists no device of the module's driver (EX_TEMPFAIL)


def pair_script(case: str, backend: str, commands: list[list[str]], case_timeout: float) -> str:
    """remote.sh of one pair: `commands` (one per input set, run in the bundle) with their outputs kept."""
    sets = []
    for index, command in enumerate(commands):
        if command[0] != TOOL:
            raise ValueError(f"{case}[{backend}]: a command to run elsewhere must start with {TOOL}, not {command[0]!r}")
        sets.append(f"one_set set{index} {shlex.join(command[1:])}")
    drivers = {arg.removeprefix("--device=").split(":")[0] for command in commands for arg in command if arg.startswith("--device=")}
    # No device of the module's driver here: run nothing (a module that cannot load is no verdict), so the pair stays COMPILED.
    check = [line for driver in sorted(drivers) for line in _device_check(case, backend, driver)]
    return "\n".join([
        "#!/bin/sh",
        f"# Runs {case}[{backend}] (its compiled module.vmfb) on each input set with {TOOL} alone, no Python.",
        f"# Each set's outputs, exit code and stderr go to {OUTPUTS}/setN/; the first set that fails ends it.",
        f"# Run it in this folder (or ../../{DIRECTORY_SCRIPT} for every pair); `conformance verdicts-from` judges the outputs.",
        f'RUN="${{IREE_RUN_MODULE:-{TOOL}}}"',
        f'LIMIT="${{CASE_TIMEOUT:-{math.ceil(case_timeout)}}}"  # seconds per set, as the run that compiled it allowed',
        'command -v "$RUN" >/dev/null 2>&1 || { echo "remote.sh: $RUN not found: put it on PATH or set IREE_RUN_MODULE" >&2; exit 127; }',
        *check,
        f"rm -rf {OUTPUTS}",
        f"one_set() {{  # $1: the set's folder in {OUTPUTS}/; then {TOOL}'s arguments",
        f'    out="{OUTPUTS}/$1"',
        "    shift",
        '    mkdir -p "$out"',
        f'    timeout -k 10 "$LIMIT" "$RUN" "$@" >"$out/{STDOUT}" 2>"$out/{STDERR}"',
        "    status=$?",
        f'    echo "$status" >"$out/{EXIT_CODE}"',
        '    return "$status"',
        "}",
        " &&\n".join(sets),
        "",
    ])


def _device_check(case: str, backend: str, driver: str) -> list[str]:
    return [
        # run-compiled.sh lists every device once; alone, the pair asks the runtime itself
        f'devices="${{DEVICES_LISTED-$("$RUN" --list_devices={driver} 2>/dev/null)}}"',
        'case "$devices" in',
        f"    *{driver}://*) ;;",
        f'    *) echo "remote.sh: {case}[{backend}] not run: $RUN lists no {driver} device here" >&2; exit {NO_DEVICE} ;;',
        "esac",
    ]


def directory_script() -> str:
    """run-compiled.sh: every pair of the directory, $JOBS at a time (default one after another)."""
    return "\n".join([
        "#!/bin/sh",
        f"# Runs every compiled pair below this folder (each <case>/<backend>/{PAIR_SCRIPT}) with IREE's runtime alone:",
        f"# {TOOL} and coreutils, no Python. The runtime: $IREE_RUN_MODULE, else bin/{TOOL} here, else PATH's.",
        "# Then, on a machine with conformance: conformance verdicts-from THIS_FOLDER (docs/remote-run.md).",
        'cd "$(dirname "$0")" || exit 2',
        f'if [ -z "$IREE_RUN_MODULE" ] && [ -x bin/{TOOL} ]; then IREE_RUN_MODULE="$PWD/bin/{TOOL}"; fi',
        f'IREE_RUN_MODULE="${{IREE_RUN_MODULE:-{TOOL}}}"',
        'if ! command -v "$IREE_RUN_MODULE" >/dev/null 2>&1; then',
        f'    echo "{DIRECTORY_SCRIPT}: no {TOOL}: put it on PATH, set IREE_RUN_MODULE, or copy it to $PWD/bin/" >&2',
        "    exit 2",
        "fi",
        'DEVICES_LISTED=$("$IREE_RUN_MODULE" --list_devices 2>&1)  # once: each remote.sh runs only where its device is',
        f'printf "%s\\n" "$DEVICES_LISTED" >{RUNTIME_INFO}  # which devices ran them, for verdicts-from',
        "export IREE_RUN_MODULE DEVICES_LISTED",
        'JOBS="${JOBS:-1}"  # pairs at a time: a GPU has room for several runtimes, each mostly waiting on its start',
        f'case "$JOBS" in ""|*[!0-9]*|0) echo "{DIRECTORY_SCRIPT}: JOBS must be a whole number of pairs at a time, not \'$JOBS\'" >&2; exit 2 ;; esac',
        "rm -rf .statuses && mkdir .statuses || exit 2",
        "pairs=0",
        f"for script in */*/{PAIR_SCRIPT}; do",
        '    [ -f "$script" ] || continue',
        "    pairs=$((pairs + 1))",
        f'    ( ( cd "$(dirname "$script")" && . ./{PAIR_SCRIPT} ); echo $? >".statuses/$pairs" ) &',
        '    [ $((pairs % JOBS)) -ne 0 ] || wait',
        "done",
        "wait",
        "failing=0",
        "absent=0",
        "for status in .statuses/*; do",
        '    [ -f "$status" ] || continue',
        '    read -r code <"$status"',
        '    case "$code" in',
        "        0) ;;",
        f"        {NO_DEVICE}) absent=$((absent + 1)) ;;",
        "        *) failing=$((failing + 1)) ;;",
        "    esac",
        "done",
        "rm -rf .statuses",
        f'echo "{DIRECTORY_SCRIPT}: ran $((pairs - absent)) of $pairs pairs, $failing with a set that exited nonzero; '
        '$absent not run for lack of their device; judge them with: conformance verdicts-from $PWD"',
        f'[ "$absent" -lt "$pairs" ] || exit {NO_DEVICE}',
        "",
    ])
