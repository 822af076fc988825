"""IREE on the CPU: compile lowered modules with iree-compile, run them with the runtime.

Compilation is `@batched`: the cases of a batch become the functions of one
module (`@main` of case i is renamed `@c<i>`), compiled by one iree-compile
call, 4x cheaper per case than one call each. IREE's MLIR is another build
than torch-mlir's, so IR crosses over as text (TOSA in generic form, which
IREE 3.13 parses where it rejects torch-mlir's pretty form).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from conformance.backends.protocol import BatchFailure, CaseRun, StageFailure, batched
from conformance.taxonomy import Code
from conformance.toolchain.arrays import to_runtime, to_tensor
from conformance.toolchain.mlir import write_ir, write_ir_once
from conformance.toolchain.tools import ToolError, run_tool
from conformance.toolchain.torch_mlir import TorchMlirBackend

DRIVER = "local-task"
TARGET_FLAGS = [
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
    # IREE demotes f64 to f32 by default; PyTorch semantics keep f64.
    "--iree-input-demote-f64-to-f32=false",
    "--iree-vm-target-extension-f64",
]


@functools.cache
def iree_compile() -> str:
    """The native iree-compile (the console script in bin/ is a slower Python wrapper)."""
    from iree.compiler.tools import binaries

    return binaries.find_tool("iree-compile")


@dataclass
class Compiled:
    """A compiled module holding one function per case of its batch; loaded on first use."""

    vmfb: Path
    _functions: object = field(default=None, repr=False)

    def function(self, name: str):
        if self._functions is None:
            import iree.runtime as rt

            config = runtime_config()
            module = rt.VmModule.mmap(config.vm_instance, str(self.vmfb))
            self._functions = rt.SystemContext(vm_modules=[module], config=config).modules.module
        return self._functions[name]


@functools.lru_cache(maxsize=64)
def loaded_module(path: str) -> Compiled:
    """One Compiled per cached .vmfb: the cases of a batch share its loaded module."""
    return Compiled(Path(path))


@dataclass
class Entry:
    compiled: Compiled
    function: str


@functools.cache
def runtime_config():
    import iree.runtime as rt

    return rt.Config(DRIVER)


class IreeBackend(TorchMlirBackend):
    """torch-mlir lowering `pipeline`, compiled for the host CPU and run by IREE's runtime."""

    stages = ("export", "import", "contract", "lower", "compile", "run")
    iree_input_type: str = "none"
    generic_form: bool = False  # print the IR in MLIR's generic op form for IREE

    def flags(self) -> dict:
        return {"iree_input_type": self.iree_input_type, "target": TARGET_FLAGS, "generic": self.generic_form}

    cache_stage = "compile"

    def cache_input(self, lowered, case_run: CaseRun) -> Path:
        return write_ir_once(lowered, case_run, "compile-input.mlir", self.generic_form)

    def cache_store(self, entry: Entry) -> tuple[Path, dict]:
        return entry.compiled.vmfb, {"function": entry.function}

    def cache_load(self, path: Path, meta: dict, case_run: CaseRun) -> Entry:
        case_run.notes["lowered"] = None  # no IR at hand: a run failure bundles without a compile step
        return Entry(loaded_module(str(path)), meta["function"])

    def compile_command(self, source: str, output: str, tool: str | None = None) -> list[str]:
        """`tool` defaults to the native binary; reproducers name the public `iree-compile`."""
        return [tool or iree_compile(), source, f"--iree-input-type={self.iree_input_type}", *TARGET_FLAGS, "-o", output]

    @batched
    def compile(self, lowered: list, case_runs: list[CaseRun]) -> list[Entry]:
        for module, case_run in zip(lowered, case_runs):
            case_run.notes["lowered"] = module  # the run stage's replay compiles the case alone
        workdir = case_runs[0].workdir
        if len(lowered) == 1:
            source = write_ir_once(lowered[0], case_runs[0], "compile-input.mlir", self.generic_form)
            names = ["main"]
        else:
            source, names = self._merge(lowered, workdir / "batch-input.mlir")
        output = source.with_suffix(".vmfb")
        if len(lowered) == 1:  # a batch that fails is split down to single cases: those reproduce
            case_runs[0].reproduce(
                "compile",
                {"input.mlir": lambda path: path.write_bytes(source.read_bytes())},
                self.compile_command("input.mlir", "module.vmfb", tool="iree-compile"),
            )
        try:
            run_tool("iree-compile", self.compile_command(str(source), str(output)))
        except ToolError as e:
            if len(lowered) > 1:
                guilty = guilty_functions(e.output, source, names)
                if guilty:
                    raise BatchFailure(guilty, e) from e
            raise
        compiled = Compiled(output)
        return [Entry(compiled, name) for name in names]

    def _merge(self, lowered: list, path: Path) -> tuple[Path, list[str]]:
        """One module with case i's @main renamed @c<i>.

        The modules are parsed into the context the first one was lowered in:
        it has loaded every dialect this backend's lowering produces (a fresh
        context cannot parse stablehlo, nor torch without registering it).
        """
        from torch_mlir import ir

        names = [f"c{i}" for i in range(len(lowered))]
        with lowered[0].context, ir.Location.unknown():
            merged = ir.Module.create()
            for name, op in zip(names, lowered):
                module = ir.Module.parse(op.get_asm(print_generic_op_form=self.generic_form, large_elements_limit=None))
                functions = list(module.body.operations)
                if len(functions) != 1:
                    raise StageFailure(Code.COMPILER_ERROR, f"cannot batch a module with {len(functions)} top-level ops")
                functions[0].attributes["sym_name"] = ir.StringAttr.get(name)
                merged.body.append(functions[0])
            write_ir(merged.operation, path, self.generic_form)
        return path, names

    def run(self, entry: Entry, inputs: list[torch.Tensor], case_run: CaseRun):
        if "run" not in case_run.notes.get("reproducers", {}) and case_run.notes.get("lowered") is not None:
            self._reproduce_run(case_run, len(inputs))
        function = entry.compiled.function(entry.function)
        outputs = function(*[to_runtime(t) for t in inputs])
        if isinstance(outputs, (tuple, list)):
            return tuple(from_iree(o) for o in outputs)
        return from_iree(outputs)


    def _reproduce_run(self, case_run: CaseRun, inputs: int) -> None:
        """Compile the case alone and run it on input set 0, checking eager's outputs."""
        from torch.utils._pytree import tree_flatten

        lowered = case_run.notes["lowered"]
        outputs = len(tree_flatten(case_run.expected[0])[0])
        case_run.reproduce(
            "run",
            {"input.mlir": lambda path: write_ir(lowered, path, self.generic_form)},
            self.compile_command("input.mlir", "module.vmfb", tool="iree-compile"),
            [
                "iree-run-module",
                "--module=module.vmfb",
                f"--device={DRIVER}",
                "--function=main",
                *(f"--input=@inputs/set0/{i}.npy" for i in range(inputs)),
                *(f"--expected_output=@expected/set0/{j}.npy" for j in range(outputs)),
                *tolerance_flags(case_run.case),
            ],
        )


def tolerance_flags(case) -> list[str]:
    """iree-run-module's comparison flags for the case's tolerances (torch.testing's when unset)."""
    from torch.testing._comparison import default_tolerances

    from conformance.dtypes import builtin_name

    flags = []
    rtols = []
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        rtol, atol = (case.rtol, case.atol) if case.rtol is not None else default_tolerances(dtype)
        flags.append(f"--expected_{builtin_name(dtype)}_threshold={atol:g}")
        rtols.append(rtol)
    # One rtol for every type: the float32 one, which is what most cases produce.
    return [*flags, f"--expected_rtol={rtols[2]:g}"]


def guilty_functions(diagnostics: str, source: Path, names: list[str]) -> list[int]:
    """Which functions of a merged module the compiler's errors point into (by line number)."""
    starts = []  # (first line, function index), in file order
    pattern = re.compile(r'(?:func\.func @|sym_name = ")(c\d+)\b')
    index_of = {name: i for i, name in enumerate(names)}
    with open(source) as f:
        for number, line in enumerate(f, 1):
            if "func.func" in line:
                match = pattern.search(line)
                if match and match.group(1) in index_of:
                    starts.append((number, index_of[match.group(1)]))
    lines = {int(n) for n in re.findall(re.escape(source.name) + r":(\d+):\d+: error:", diagnostics)}
    guilty = set()
    for line in lines:
        owner = [i for start, i in starts if start <= line]
        if owner:
            guilty.add(owner[-1])
    return sorted(guilty)


def from_iree(value) -> torch.Tensor:
    return to_tensor(value.to_host() if hasattr(value, "to_host") else np.asarray(value))
