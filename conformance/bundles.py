"""Reproducer bundles: one folder per failing (case, backend) under --artifacts DIR (and per COMPILED one: remote/).

    DIR/<case>/<backend>/
        README.txt       case, backend, stage, code, explanation; how to replay
        reproduce.sh     the exact public-tool commands (torch-mlir-opt, iree-compile, ...)
        <stage input>    e.g. input.mlir: the IR entering the failing stage
        inputs/          the case's inputs as .npy (one folder per input set; .pt where NumPy has no such dtype)
        expected/        the reference's outputs (eager's, or the suite's stored ones), the same way
        raw/             bfloat16 and float8 outputs as bare bytes, for tools that read no .npy of them
        details.txt      every diagnostic captured

A stage says how to replay itself (CaseRun.reproduce) before its risky part;
with --artifacts on, that is written to a staging folder at once (see
reproducer.py), so a stage that crashes or hangs the process still leaves its
bundle behind: the supervisor finalises those, the child finalises the rest.
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
from pathlib import Path

import numpy as np

from conformance.paths import pair_dir
from conformance.remote import bundle as remote_bundle
from conformance.rerun import rerun_command
from conformance.settings import Settings
from conformance.reproducer import COMMANDS, REPLAY_SCRIPT, staged_commands, staged_stage, write_replay_script
from conformance.result import Result
from conformance.taxonomy import Status
from conformance.toolchain.tools import public_tool_path

STAGING = ".staging"


def staging_dir(artifacts: str | Path, case: str, backend: str) -> Path:
    return pair_dir(Path(artifacts) / STAGING, case, backend)


def bundle_dir(artifacts: str | Path, case: str, backend: str) -> Path:
    return pair_dir(artifacts, case, backend)


def stage_case_data(staging: Path, case_run) -> None:
    """The inputs and the reference's outputs, before any backend stage runs."""
    from torch.utils._pytree import tree_flatten

    for index, (inputs, expected) in enumerate(zip(case_run.inputs, case_run.expected)):
        for folder, tensors in (("inputs", inputs), ("expected", tree_flatten(expected)[0])):
            target = staging / folder / f"set{index}"
            target.mkdir(parents=True, exist_ok=True)
            for i, t in enumerate(tensors):
                if hasattr(t, "detach"):
                    save_tensor(t, target / str(i))


def save_tensor(t, stem: Path) -> None:
    """`stem`.npy, byte for byte; `stem`.pt (torch.save) for a dtype NumPy cannot hold (fp8, complex32, quantized)."""
    import torch

    from conformance.arrays import to_numpy

    try:
        array = to_numpy(t)
    except (TypeError, RuntimeError):
        torch.save(t.detach().clone(), stem.with_suffix(".pt"))
        return
    np.save(stem.with_suffix(".npy"), array)


def finalize(settings: Settings, result: Result) -> Path | None:
    """Turn the staging folder of a failed pair into its bundle (under settings.artifacts); return the bundle's path."""
    artifacts = settings.artifacts
    staging = staging_dir(artifacts, result.case, result.backend)
    bundle = bundle_dir(artifacts, result.case, result.backend)
    if not result.failed:
        kept = None
        if result.status == Status.COMPILED:  # to be run elsewhere, when its run stage said how (remote/)
            kept = remote_bundle.finalize(artifacts, staging, bundle, result.case, result.backend, result.explanation,
                                          settings.case_timeout, public_tool_path())
        _remove_staging(staging)
        return kept
    shutil.rmtree(bundle, ignore_errors=True)
    bundle.mkdir(parents=True)
    for folder in ("inputs", "expected"):
        if (staging / folder).exists():
            shutil.move(str(staging / folder), bundle / folder)
    # A wrong answer is replayed by running the module: the run stage's reproducer.
    replay = staged_stage(staging, result.stage or "")
    if not replay.exists() and result.stage == "compare":
        replay = staged_stage(staging, "run")
    commands: list[list[str]] = []
    if replay.exists():
        commands = staged_commands(replay)
        for item in replay.iterdir():
            if item.name != COMMANDS:
                shutil.move(str(item), bundle / item.name)
    _write_script(bundle, result, commands, settings)
    (bundle / "details.txt").write_text(result.details or "(no diagnostics captured)\n")
    (bundle / "README.txt").write_text(_readme(result, bool(commands)))
    _remove_staging(staging)
    return bundle


def _remove_staging(staging: Path) -> None:
    """Remove a pair's staging folder, and its parents once they are empty."""
    shutil.rmtree(staging, ignore_errors=True)
    for parent in (staging.parent, staging.parent.parent):
        try:
            parent.rmdir()
        except OSError:
            break


def _write_script(bundle: Path, result: Result, commands: list[list[str]], settings: Settings) -> None:
    seconds = math.ceil(settings.case_timeout)
    title = f"{result.case}[{result.backend}]: {result.code} at stage {result.stage}"
    if commands:
        write_replay_script(bundle, title, commands, seconds, public_tool_path())
        return
    # No public tool runs this stage on its own (torch.export, the FX import, eager): rerun the
    # case, from where the run ran (its --cases paths may be relative), failing as a failure
    # (--no-xfail: else an expected failure passes quietly as XFAIL).
    lines = [
        "#!/bin/sh",
        f"# Replays {title}.",
        f'export PATH="{public_tool_path()}:$PATH"  # the tools of the machine that wrote this bundle',
        f"cd {shlex.quote(os.getcwd())}",
        f"exec {rerun_command(result.case, result.backend, settings)}",
    ]
    path = bundle / REPLAY_SCRIPT
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o755)


def _readme(result: Result, has_commands: bool) -> str:
    op = f" ({result.op})" if result.op else ""
    how = (
        "reproduce.sh replays the failing stage with public tools on the files here, each command\n"
        "stopped after the run's case timeout; it exits with the status of the first that fails."
        if has_commands
        else "This stage has no public-tool equivalent; reproduce.sh reruns the case through conformance\n"
        "(pytest --no-xfail: it fails even where the xfail set expects the failure)."
    )
    return (
        f"case {result.case}, backend {result.backend}, stage {result.stage}, code {result.code}{op}\n"
        f"{result.explanation}\n\n{how}\n"
        "inputs/setN/I.npy are the case's inputs and expected/setN/J.npy the reference's outputs (input set N;\n"
        "I.pt and J.pt, read with torch.load, for dtypes NumPy cannot hold).\n"
        "details.txt holds every diagnostic the tools printed.\n"
    )
