"""The Arm TOSA reference model as a backend: serialize with tosa-opt, run tosa_reference_model.

torch-mlir's TOSA backend contract is TOSA plus a few ops of other dialects
(VerifyTosaBackendContract.cpp: `arith.constant`, `arith.extsi`,
`tensor.cast` where their types are legal), and its output does hold tensor
`arith.constant`s (zeros_like, new_ones, gather indices, ...). IREE takes
them; tosa-opt's serializer knows TOSA ops only ("unsupported tosa operator
arith.constant") and has no pass converting them. So the lowering ends by
turning each tensor `arith.constant` into the `tosa.const` holding the same
value: the TOSA torch-mlir's contract means, in the only form the reference
tools read. Validation then judges its element type like any TOSA constant.

tosa-tools lives in a virtualenv of its own; toolchain/tools.py says where.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from conformance.backends.protocol import CaseRun, StageFailure
from conformance.taxonomy import Code
from conformance.arrays import to_numpy, to_tensor
from conformance.toolchain.lowerings import TOSA
from conformance.toolchain.mlir import parse_ir, walk, write_ir_once
from conformance.toolchain.tools import ToolError, run_tool, tosa_tools_prefixes, tosa_tools_site
from conformance.toolchain.torch_mlir import TorchMlirBackend, unsigned_as_eager

NO_INPUTS_DESC = "desc.json"  # the test descriptor a run without inputs is given (see run)
INSTALL_HINT = (
    "install tosa-tools into a virtualenv of its own with `make install` (it runs "
    "`python -m venv .venv/tosa-tools && .venv/tosa-tools/bin/pip install tosa-tools==2026.8.0`), "
    "or point $CONFORMANCE_TOSA_TOOLS at such a prefix"
)


def find_tool(name: str) -> str:
    """A tosa-tools native binary.

    The wheel ships the real binaries in site-packages/bin and puts console
    shims of the same names in the venv's bin that only re-launch them; we call
    the binaries themselves (one process, not a Python start-up plus one).
    """
    for prefix in tosa_tools_prefixes():
        site = tosa_tools_site(prefix)
        for candidate in ([site / "bin" / name] if site else []) + [prefix / "bin" / name]:
            if candidate.is_file():
                return str(candidate)
    if os.environ.get("CONFORMANCE_TOSA_TOOLS"):
        where = os.environ["CONFORMANCE_TOSA_TOOLS"]
        raise StageFailure(Code.TOOL_MISSING, f"{name} is not in $CONFORMANCE_TOSA_TOOLS ({where}): {INSTALL_HINT}")
    found = shutil.which(name)
    if found:
        return found
    raise StageFailure(Code.TOOL_MISSING, f"{name} was not found: {INSTALL_HINT}")


@dataclass
class Serialized:
    flatbuffer: Path
    outputs: list[str]  # the tensor name of each result, in order (names may repeat)


def _main(lowered):
    return next(op for op in lowered.regions[0].blocks[0].operations if op.operation.name == "func.func")


def dynamic_signature(lowered) -> list[str]:
    """@main's arguments and results whose type has a dynamic dim: `argument 0: tensor<?x4xf32>`, ...

    The reference model runs static shapes only (TOSA 1.0 levels). tosa-opt's level check
    rejects a dynamic dim where an op uses it, but not in the function's signature: a graph
    that returns its input (clone, contiguous, a flip of a size-1 dim) serializes with -1 dims,
    and the model then aborts (std::length_error), rejects the input's size, or writes an
    output whose .npy header holds the -1.
    """
    from torch_mlir import ir

    function = _main(lowered).attributes["function_type"].value
    found = []
    for kind, types in (("argument", function.inputs), ("result", function.results)):
        for i, t in enumerate(types):
            if isinstance(t, ir.RankedTensorType) and not t.has_static_shape:
                found.append(f"{kind} {i}: {t}")
    return found


def output_names(lowered) -> list[str]:
    """The flatbuffer's name for each result of @main, as tosa-opt's serializer assigns them.

    A returned argument keeps its input's name (TosaInput_i); op results are
    TosaOutput_k, numbered by first appearance of each distinct value.
    """
    from torch_mlir import ir

    main = _main(lowered)
    names, numbered = [], {}
    for value in main.regions[0].blocks[-1].operations[-1].operands:
        if isinstance(value, ir.BlockArgument):
            names.append(f"TosaInput_{value.arg_number}")
        else:
            names.append(numbered.setdefault(value, f"TosaOutput_{len(numbered)}"))
    return names


class TosaReferenceBackend(TorchMlirBackend):
    """torch-mlir TOSA -> tosa-opt --tosa-serialize -> tosa_reference_model."""

    description = "torch-mlir TOSA -> tosa-opt --tosa-serialize -> Arm TOSA reference model"
    stages = ("export", "import", "contract", "lower", "compile", "run")
    lowering = TOSA
    cache_stage = "compile"
    compiler_tools = ("tosa-tools",)  # tosa-opt serializes
    runtime_tools = ("tosa-tools",)  # tosa_reference_model runs

    def lower(self, contract, case_run: CaseRun):
        lowered = super().lower(contract, case_run)
        tosa_constants(lowered)
        return lowered

    def tool(self, stage: str) -> str:
        if stage == "compile":
            return "tosa-opt (validate, serialize)"
        if stage == "run":
            return "TOSA reference model"
        if stage == "compare":
            return "torch-mlir TOSA lowering + TOSA reference model"
        return super().tool(stage)

    def cache_input(self, lowered, case_run: CaseRun) -> Path:
        # tosa-tools' MLIR is a third build: the lowering crosses to it in the form it crosses to IREE in.
        return write_ir_once(lowered, case_run, "model.mlir", generic=self.lowering.generic_form)

    def cache_input_load(self, path: Path, case_run: CaseRun):
        # The stored bytes are the compile's input as they are: not printed again, so the IR key is theirs.
        module = parse_ir(path, self.pipeline)  # first: IR the parser rejects leaves no note behind
        case_run.notes["model.mlir"] = shutil.copyfile(path, case_run.workdir / "model.mlir")
        return module

    def cache_store(self, model: Serialized) -> tuple[Path, dict]:
        return model.flatbuffer, {"outputs": model.outputs}

    def cache_load(self, path: Path, meta: dict, case_run: CaseRun) -> Serialized:
        return Serialized(path, meta["outputs"])

    def compile(self, lowered, case_run: CaseRun) -> Serialized:
        workdir = case_run.workdir
        source = self.cache_input(lowered, case_run)
        flatbuffer = workdir / "model.tosa"
        # Validate first: serializing invalid TOSA (f64, say) aborts on an assertion.
        args = ["--tosa-validate", "--tosa-serialize", "--tosa-flatbuffer-filename={out}", "-o", os.devnull]
        command = [find_tool("tosa-opt"), str(source), *(a.format(out=flatbuffer) for a in args)]
        case_run.reproduce(
            "compile",
            {"model.mlir": lambda path: path.write_bytes(source.read_bytes())},
            ["tosa-opt", "model.mlir", *(a.format(out="model.tosa") for a in args)],
        )
        run_tool("tosa-opt", command)  # first: its level check names the op that uses a dynamic dim
        dynamic = dynamic_signature(lowered)
        if dynamic:
            raise StageFailure(
                Code.DYNAMIC_SHAPE_UNSUPPORTED,
                f"the TOSA reference model runs static shapes only (TOSA 1.0 levels), and @main's "
                f"{'; '.join(dynamic)} has a dynamic dim (tosa-opt's level check passes a dynamic signature)",
            )
        return Serialized(flatbuffer, output_names(lowered))

    def run(self, model: Serialized, inputs: list[torch.Tensor], case_run: CaseRun):
        workdir = case_run.workdir / f"run-{len(list(case_run.workdir.glob('run-*')))}"
        workdir.mkdir()
        ifm = []
        for i, t in enumerate(inputs):
            np.save(workdir / f"input{i}.npy", to_numpy(t))
            ifm.append(f"input{i}.npy")
        # One name per graph output, repeats included: the model checks the count.
        ofm = [f"output{i}.npy" for i in range(len(model.outputs))]
        args = ["--tosa_file", "{model}", "--output_dir", "."]
        files = {"model.tosa": lambda path: path.write_bytes(model.flatbuffer.read_bytes()), **_copies(workdir, ifm)}
        if ifm:
            args += ["--ifm_name", ",".join(f"TosaInput_{i}" for i in range(len(ifm))), "--ifm_file", ",".join(ifm)]
        else:
            # A graph without inputs (arange, zeros): given no --ifm_name the model reads its tensors from a
            # test descriptor, ./desc.json unless told, and stops ("Unable to load test json") without one.
            (workdir / NO_INPUTS_DESC).write_text(json.dumps({"ifm_name": [], "ifm_file": []}))
            args += ["--test_desc", NO_INPUTS_DESC]
            files.update(_copies(workdir, [NO_INPUTS_DESC]))
        args += ["--ofm_name", ",".join(model.outputs), "--ofm_file", ",".join(ofm)]
        case_run.reproduce("run", files, ["tosa_reference_model", *(a.format(model="model.tosa") for a in args)])
        command = [find_tool("tosa_reference_model"), *(a.format(model=model.flatbuffer) for a in args)]
        env = {**os.environ, "TOSA_MODEL_NO_BACKTRACE": "1"}  # else it attaches gdb on a fatal error
        proc = run_tool("tosa_reference_model", command, cwd=workdir, env=env)
        missing = [f for f in ofm if not (workdir / f).exists()]
        if missing:
            raise ToolError("tosa_reference_model", 0, f"wrote no {', '.join(missing)}\n{proc.stdout}\n{proc.stderr}")
        outputs = [_load_output(workdir / f) for f in ofm]
        return unsigned_as_eager(outputs[0] if len(outputs) == 1 else tuple(outputs), case_run)


def _load_output(path: Path) -> torch.Tensor:
    """An output file the model wrote, or a ToolError saying what is wrong with it (not a bare numpy error)."""
    try:
        return to_tensor(np.load(path))
    except ValueError as error:  # a header numpy cannot honour, e.g. a -1 dim from a dynamic graph output
        start = path.read_bytes()[:256].decode("latin-1")
        header = start[start.find("{") : start.find("}") + 1]  # the .npy header's dict, without its magic bytes
        raise ToolError("tosa_reference_model", 0, f"wrote {path.name}, which numpy cannot read ({error}); its header: {header}") from error


def tosa_constants(module) -> int:
    """Turn every tensor `arith.constant` of `module` into a `tosa.const` of the same value; return how many."""
    from torch_mlir import ir

    constants = [
        op for op in walk(module)
        if op.name == "arith.constant" and isinstance(op.results[0].type, ir.RankedTensorType)
    ]
    for op in constants:
        with ir.InsertionPoint(op), op.location:
            const = ir.Operation.create("tosa.const", results=[op.results[0].type], attributes={"values": op.attributes["value"]})
        op.results[0].replace_all_uses_with(const.results[0])
        op.erase()
    return len(constants)


def _copies(directory: Path, names: list[str]) -> dict:
    return {name: (lambda path, source=directory / name: path.write_bytes(source.read_bytes())) for name in names}
