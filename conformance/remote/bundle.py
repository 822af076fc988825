"""A COMPILED pair's staging folder turned into a bundle that runs elsewhere (layout.py names its files).

The run stage staged what running it elsewhere needs (execution/elsewhere.py):
the module, remote.json, structure.pkl and one command per input set. Here
they join the case's inputs and eager's outputs in the pair's bundle, the
commands become remote.sh, and the directory gets run-compiled.sh; the
backend's replay of the case alone (its IR, compiled and checked by the
toolchain's own tools) becomes reproduce.sh. A
module compiled in a batch serves every case of it: it is kept once, under
DIR/.modules/ by its digest, each pair's module.vmfb a hard link to it.
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
from pathlib import Path

from conformance.remote.layout import DIRECTORY_SCRIPT, EXPECTED, INPUTS, MODULE, MODULES, PAIR_SCRIPT, STAGE
from conformance.remote.scripts import directory_script, pair_script
from conformance.reproducer import COMMANDS, REPLAY, REPLAY_SCRIPT, staged_commands, staged_stage, write_replay_script


def finalize(artifacts: Path, staging: Path, bundle: Path, case: str, backend: str, explanation: str, case_timeout: float,
             tool_path: str) -> Path | None:
    """The bundle of a COMPILED pair whose run stage staged how to run it elsewhere; None when it did not.

    `tool_path`: the PATH of this machine's public tools, for its reproduce.sh (the case replayed alone).
    """
    staged = staged_stage(staging, STAGE)
    if not staged.exists():
        return None
    shutil.rmtree(bundle, ignore_errors=True)
    bundle.mkdir(parents=True)
    for folder in (INPUTS, EXPECTED):
        if (staging / folder).exists():
            shutil.move(str(staging / folder), bundle / folder)
    for item in staged.iterdir():
        if item.name not in (COMMANDS, REPLAY):
            shutil.move(str(item), bundle / item.name)
    if (bundle / MODULE).exists():
        keep_once(Path(artifacts), bundle / MODULE)
    script = bundle / PAIR_SCRIPT
    script.write_text(pair_script(case, backend, staged_commands(staged), case_timeout))
    script.chmod(0o755)
    replay = staged_commands(staged, REPLAY)
    if replay:
        title = f"{case}[{backend}] with the toolchain's own tools: the case compiled alone, run against eager's outputs"
        write_replay_script(bundle, title, replay, math.ceil(case_timeout), tool_path)
    (bundle / "README.txt").write_text(_readme(case, backend, explanation, bool(replay)))
    write_directory_script(Path(artifacts))
    return bundle


def keep_once(artifacts: Path, module: Path) -> None:
    """Replace `module` by a hard link to its one copy in DIR/.modules/ (a copy where links are refused)."""
    digest = hashlib.sha256(module.read_bytes()).hexdigest()
    kept = artifacts / MODULES / f"{digest}{module.suffix}"
    if not kept.exists():
        kept.parent.mkdir(parents=True, exist_ok=True)
        partial = kept.with_name(f"{kept.name}.{os.getpid()}.partial")  # lanes write side by side: whole files only
        shutil.copyfile(module, partial)
        os.replace(partial, kept)
    module.unlink()
    try:
        os.link(kept, module)
    except OSError:
        shutil.copyfile(kept, module)


def write_directory_script(artifacts: Path) -> None:
    path = artifacts / DIRECTORY_SCRIPT
    text = directory_script()
    if path.exists() and path.read_text() == text:
        return
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_text(text)
    partial.chmod(0o755)
    os.replace(partial, path)


def _readme(case: str, backend: str, explanation: str, replay: bool) -> str:
    text = (
        f"case {case}, backend {backend}: COMPILED\n{explanation}\n\n"
        f"To run it on a machine with the device and IREE's runtime (iree-run-module; no Python needed):\n"
        f"sh ../../{DIRECTORY_SCRIPT} runs every pair of this directory, or `sh {PAIR_SCRIPT}` in this folder this one.\n"
        "Each input set's outputs, exit code and stderr land in outputs/setN/; back on a machine with conformance,\n"
        "`conformance verdicts-from DIR` judges them against expected/ (eager's outputs) with the case's tolerances\n"
        "(remote.json) and writes a report directory that `conformance merge` combines with the run's own.\n"
    )
    if replay:
        text += (
            f"\nTo report a failure to the toolchain's developers: {REPLAY_SCRIPT} compiles input.mlir (the case's own IR)\n"
            "alone with iree-compile and the run's flags, then runs it with iree-run-module, which checks each output\n"
            "against expected/ with the case's tolerances; it exits with the status of the first command that fails.\n"
            "The compile needs iree-compile, the run the device: where they are on two machines, run its lines apart.\n"
        )
    return text
