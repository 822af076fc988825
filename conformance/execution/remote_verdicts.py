"""Verdicts of COMPILED pairs run elsewhere: what each bundle's remote.sh wrote, judged as a run here judges.

For each bundle under the directory (remote/layout.py) whose input sets ran
there: a set that exited nonzero is a failure at `run`, classified as a
local one is (its stderr read by the same parsers; a signal is CRASH, the
`timeout` status 124 TIMEOUT); else the outputs are compared with eager's
by run_compare's own code, with the case's tolerances from remote.json.
The Result keeps what the pair had when it was compiled (timings, extras)
and says where it ran in extras["ran_elsewhere"]. A bundle none of whose
sets ran is left out: its pair stays COMPILED.
"""

from __future__ import annotations

import functools
import json
import types
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch.utils._pytree import tree_unflatten

from conformance import result as results
from conformance.arrays import to_tensor
from conformance.classify import Classification, classify_crash, classify_text, classify_timeout
from conformance.cases.inputs import make_module
from conformance.execution.judging import Judging, compare_outputs, measure_precision
from conformance.remote import layout
from conformance.result import NUMERIC, TOOL, Result
from conformance.settings import Settings
from conformance.taxonomy import Stage
from conformance.toolchain.tools import signal_name
from conformance.toolchain.torch_mlir import unsigned_as_eager

RAN_ELSEWHERE = "ran_elsewhere"  # extras key: the devices iree-run-module listed there (run-compiled.sh's runtime.txt)
TIMEOUT_STATUS = 124  # coreutils' timeout, when it stopped the command
DEFAULT_TIMEOUT = 300.0


@dataclass
class Judged:
    results: list[Result] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)  # bundles none of whose sets ran there
    cut_short: list[str] = field(default_factory=list)  # bundles whose first set began there but never ended (no exit code)


def judge_directory(directory: Path) -> Judged:
    judged = Judged()
    info = Path(directory) / layout.RUNTIME_INFO
    devices = [line.strip() for line in info.read_text(errors="replace").splitlines() if "://" in line] if info.exists() else []
    for bundle in layout.bundles_in(directory):
        result = judge_bundle(bundle, devices)
        if result is None:
            began = layout.set_dir(bundle, layout.OUTPUTS, 0).is_dir()
            (judged.cut_short if began else judged.not_run).append(str(bundle))
        else:
            judged.results.append(result)
    return judged


def judge_bundle(bundle: Path, devices: list[str] = ()) -> Result | None:
    """The Result of the pair whose bundle this is, from what ran there; None when nothing ran."""
    manifest = layout.read_manifest(bundle)
    outputs = []
    for index in range(manifest["sets"]):
        ran = layout.set_dir(bundle, layout.OUTPUTS, index)
        if not (ran / layout.EXIT_CODE).exists():  # never ran, or cut short (judge_directory tells which): no verdict
            return None
        status = int((ran / layout.EXIT_CODE).read_text().strip())
        if status != 0:
            stderr = (ran / layout.STDERR).read_text(errors="replace") if (ran / layout.STDERR).exists() else ""
            return _failed(manifest, bundle, devices, Stage.RUN, run_failure(status, stderr, manifest, index))
        outputs.append(ran)
    judging = _judging(bundle, manifest)
    eager = _eager_view(judging, bundle)
    actual = [unsigned_as_eager(_outputs(ran, _eager_leaves(eager, index)), eager) for index, ran in enumerate(outputs)]
    failure = compare_outputs(judging, actual, lambda index, mismatch: _precision(bundle, manifest, index, mismatch))
    if failure is not None:
        found, measured = failure
        result = _failed(manifest, bundle, devices, Stage.COMPARE, found)
        if measured is not None:
            result.extras[NUMERIC] = measured.to_dict()
        return result
    passed = results.passed(manifest["case"], manifest["backend"], manifest["timings"])
    passed.extras = _extras(manifest, devices)
    return passed


def run_failure(status: int, stderr: str, manifest: dict, index: int) -> Classification:
    """How iree-run-module failed on input set `index`, as a local run stage's failure would be classified."""
    if status == TIMEOUT_STATUS:
        return classify_timeout(Stage.RUN, manifest.get("case_timeout", DEFAULT_TIMEOUT), stderr)
    if status > 128:  # the shell's way of saying a signal ended it
        return classify_crash(Stage.RUN, f"killed by signal {signal_name(status - 128)}", stderr)
    return classify_text(Stage.RUN, f"iree-run-module exited with status {status}: {stderr.strip()}")


def _precision(bundle: Path, manifest: dict, index: int, mismatch):
    """A numeric mismatch measured against the case's program in float64, as a local run measures it; the
    program is the registry's (remote.json says where the run took its cases). None where the case is not found."""
    if manifest["statistical"]:
        return None
    source = manifest.get("case_source")
    case = _registry_case(manifest["case"], json.dumps(source, sort_keys=True)) if source else None
    if case is None:
        return None
    inputs = [_tensor(bundle, layout.INPUTS, index, i) for i in range(len(list((bundle / layout.INPUTS / f"set{index}").iterdir())))]
    return measure_precision(case, make_module(case, source["seed"]), inputs, mismatch)


def _registry_case(case_id: str, source: str):
    """The case `case_id` from the registry a run's settings name (JSON: case_paths, default_cases, suites), or None."""
    from conformance.cases.registry import RegistryError

    try:
        return _registry(source)[case_id]
    except RegistryError:
        return None


@functools.cache
def _registry(source: str):
    """The registry of the run that compiled the pairs, loaded once (most of the time measuring takes)."""
    from conformance.cases.registry import Registry, sources_of

    named = json.loads(source)
    settings = Settings(case_paths=named["case_paths"], default_cases=named["default_cases"], suites=named["suites"])
    return Registry.load(sources_of(settings), settings.suites)


def _outputs(ran: Path, eager: list):
    """One set's outputs as the Python runtime hands them back: one value alone, several as a tuple.

    A .bin holds bare bytes (a dtype iree-run-module writes no .npy of): read as eager's
    counterpart's dtype, in its shape when the size agrees (flat otherwise: a shape mismatch).
    """
    files = sorted((f for f in ran.iterdir() if f.suffix in (".npy", ".bin")), key=lambda f: int(f.stem))
    values = []
    for f in files:
        if f.suffix == ".npy":
            values.append(to_tensor(np.load(f, allow_pickle=False)))
            continue
        like = eager[int(f.stem)] if int(f.stem) < len(eager) else None
        flat = torch.frombuffer(bytearray(f.read_bytes()), dtype=torch.uint8)
        if hasattr(like, "dtype"):
            flat = flat.view(like.dtype)
            flat = flat.reshape(like.shape) if flat.numel() == like.numel() else flat
        values.append(flat)
    return values[0] if len(values) == 1 else tuple(values)


def _eager_leaves(eager, index: int) -> list:
    """Eager's counterpart of each output of input set `index`, in the module's order: updated inputs, then outputs."""
    from torch.utils._pytree import tree_flatten

    mutated = [eager.inputs[0][i] if i is not None else None for i in eager.extras["mutations"]]
    return mutated + tree_flatten(eager.expected[index])[0]


def _judging(bundle: Path, manifest: dict) -> Judging:
    structure = layout.read_structure(bundle)
    expected = [
        tree_unflatten([_tensor(bundle, layout.EXPECTED, index, j) if leaf is None else leaf for j, leaf in enumerate(leaves)], spec)
        for index, (spec, leaves) in enumerate(zip(structure["specs"], structure["leaves"]))
    ]
    mutated = [i for i in manifest["mutations"] if i is not None]
    after = [{i: _tensor(bundle, layout.AFTER, index, i) for i in mutated} for index in range(manifest["sets"])] if mutated else []
    return Judging(
        expected, after, manifest["mutations"], manifest["rtol"], manifest["atol"], manifest["statistical"],
        manifest["values"], manifest["reference"], manifest["sizes"], list(manifest["extras"].get("aten_ops") or ()),
        manifest["ops"],
    )


def _eager_view(judging: Judging, bundle: Path):
    """What unsigned_as_eager reads of a CaseRun: eager's first outputs and the dtypes of the inputs it updated."""
    inputs = {i: _tensor(bundle, layout.INPUTS, 0, i) for i in judging.mutations if i is not None}
    first = [inputs.get(i) for i in range(max(inputs, default=-1) + 1)]
    return types.SimpleNamespace(inputs=[first], expected=judging.expected, extras={"mutations": judging.mutations})


def _tensor(bundle: Path, folder: str, index: int, number: int) -> torch.Tensor:
    stem = layout.set_dir(bundle, folder, index) / str(number)
    if stem.with_suffix(".npy").exists():
        return to_tensor(np.load(stem.with_suffix(".npy"), allow_pickle=False))
    return torch.load(stem.with_suffix(".pt"))


def _extras(manifest: dict, devices: list[str]) -> dict:
    return {**manifest["extras"], RAN_ELSEWHERE: devices}


def _failed(manifest: dict, bundle: Path, devices: list[str], stage: str, found: Classification) -> Result:
    result = results.failed(
        manifest["case"], manifest["backend"], stage=str(stage), code=str(found.code), op=found.op,
        explanation=found.explanation, details=found.details, timings=manifest["timings"],
    )
    result.extras = {**_extras(manifest, devices), TOOL: manifest["tool" if stage == Stage.RUN else "compare_tool"]}
    result.artifacts = str(bundle)
    return result
