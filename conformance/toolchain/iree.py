"""IREE: compile lowered modules with iree-compile for a target (the host CPU by default), run them with the runtime.

Compilation is `@batched`: the cases of a batch become the functions of one
module (`@main` of case i is renamed `@c<i>`), compiled by one iree-compile
call, 4x cheaper per case than one call each. IREE's MLIR is another build
than torch-mlir's, so IR crosses over as text (TOSA in generic form, which
IREE 3.13 parses where it rejects torch-mlir's pretty form).

The target (iree_targets.py) is a parameter of the backend, not a class of
its own: `tosa@cuda` is the `tosa` backend compiling for cuda. Each compile
also records IREE's own figures for every case (compile_stats below).
"""

from __future__ import annotations

import copy
import csv
import functools
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from conformance.backends.protocol import Backend, BatchFailure, CaseRun, NotRun, StageFailure, batched
from conformance.reproducer import Reproducer
from conformance.taxonomy import Code
from conformance.arrays import to_numpy, to_runtime, to_tensor
from conformance.toolchain import threads
from conformance.toolchain.iree_targets import DEFAULT, CompileTarget, compile_target, missing_device
from conformance.toolchain.mlir import parse_ir, write_ir, write_ir_once
from conformance.toolchain.tools import ToolError, run_tool
from conformance.toolchain.torch_mlir import TorchMlirBackend, unsigned_as_eager

REMOTE_MODULE = "module.vmfb"  # the compiled module in a COMPILED pair's bundle (remote_run)
ALONE_MODULE = "alone.vmfb"  # what its replay compiles: the case alone (REMOTE_MODULE may be a batch's, hard-linked)
COMPILE_INPUT = "compile-input.mlir"  # one case's IR as handed to iree-compile, in its workdir and CaseRun.notes
TARGET_FLAGS = DEFAULT.flags()  # the host CPU, IREE's default level: what every IREE backend compiles for without @


@functools.cache
def iree_compile() -> str:
    """The native iree-compile (the console script in bin/ is a slower Python wrapper)."""
    from iree.compiler.tools import binaries

    return binaries.find_tool("iree-compile")


@dataclass
class Compiled:
    """A compiled module holding one function per case of its batch; loaded on first use."""

    vmfb: Path
    driver: str = DEFAULT.driver
    _functions: object = field(default=None, repr=False)

    def function(self, name: str):
        if self._functions is None:
            import iree.runtime as rt

            config = runtime_config(self.driver)
            module = rt.VmModule.mmap(config.vm_instance, str(self.vmfb))
            self._functions = rt.SystemContext(vm_modules=[module], config=config).modules.module
        return self._functions[name]


@functools.lru_cache(maxsize=64)
def loaded_module(path: str, driver: str) -> Compiled:
    """One Compiled per cached .vmfb: the cases of a batch share its loaded module."""
    return Compiled(Path(path), driver)


@dataclass
class Entry:
    compiled: Compiled
    function: str
    stats: dict = field(default_factory=dict)  # compile_stats of this case


@functools.cache
def runtime_config(driver: str):
    import iree.runtime as rt

    return rt.Config(driver)


class IreeBackend(TorchMlirBackend):
    """A torch-mlir `lowering`, compiled for `target` (the host CPU unless named) and run by IREE's runtime.

    A subclass naming its lowering is described by it unless it says otherwise.
    """

    stages = ("export", "import", "contract", "lower", "compile", "run")
    target: CompileTarget = DEFAULT

    def __init__(self) -> None:
        if not self.description and self.lowering is not None:
            self.description = (
                f"{self.frontend_description} {self.lowering.human} -> IREE (input type {self.iree_input_type}), {self.target.label}"
            )

    @property
    def iree_input_type(self) -> str:
        return self.lowering.iree_input_type if self.lowering else "none"

    @property
    def generic_form(self) -> bool:
        """Print the IR in MLIR's generic op form for IREE."""
        return self.lowering.generic_form if self.lowering else False

    def targeted(self, target: str, options: list[str]) -> Backend:
        """This backend compiling for another target: `tosa@cuda` is `tosa.targeted("cuda", [])`."""
        chosen = compile_target(target, options)
        if chosen == self.target:
            return self
        other = copy.copy(self)
        other.target = chosen
        other.name = f"{self.name}@{chosen.label}"
        other.description = f"{self.description}; here compiled for {chosen.label}"
        return other

    def warm_up(self) -> None:
        super().warm_up()
        import iree.compiler  # noqa: F401
        import iree.runtime  # noqa: F401

    def tool(self, stage: str) -> str:
        if stage == "compile":
            return f"iree-compile ({self.iree_input_type} input, {self.target.label})"
        if stage == "run":
            return f"IREE runtime ({self.target.label})"
        if stage == "compare" and self.lowering is not None:
            # A wrong answer is the lowering's or the compiler's: one path, whichever frontend fed it torch IR.
            return f"torch-mlir {self.lowering.output_type} lowering + IREE ({self.target.label})"
        return super().tool(stage)

    def flags(self) -> dict:
        # The input type and the target are independent: each backend's input type goes with any target.
        return {"iree_input_type": self.iree_input_type, "target": self.target.flags(), "generic": self.generic_form}

    cache_stage = "compile"
    runtime_tools = ("iree-base-runtime",)

    @property
    def compiler_tools(self) -> tuple[str, ...]:
        # The default CPU is named in the flags; `host` means this machine's CPU, whatever its model.
        return ("iree-base-compiler", *(("cpu",) if self.target.flags_chip() == "host" else ()))

    def cache_input(self, lowered, case_run: CaseRun) -> Path:
        return write_ir_once(lowered, case_run, COMPILE_INPUT, self.generic_form)

    def cache_input_load(self, path: Path, case_run: CaseRun):
        # The stored bytes are the compile's input as they are: not printed again, so the IR key is theirs.
        module = parse_ir(path, self.pipeline)  # first: IR the parser rejects leaves no note behind
        case_run.notes[COMPILE_INPUT] = shutil.copyfile(path, case_run.workdir / COMPILE_INPUT)
        return module

    def cache_store(self, entry: Entry) -> tuple[Path, dict]:
        return entry.compiled.vmfb, {"function": entry.function, "compile_stats": entry.stats}

    def cache_load(self, path: Path, meta: dict, case_run: CaseRun) -> Entry:
        stats = meta.get("compile_stats") or {}
        if stats:
            case_run.extras["compile_stats"] = stats  # as measured when it was compiled
        return Entry(loaded_module(str(path), self.target.driver), meta["function"], stats)

    def compile_command(self, source: str, output: str, tool: str | None = None) -> list[str]:
        """`tool` defaults to the native binary; reproducers name the public `iree-compile`."""
        return compile_command(source, output, self.iree_input_type, self.target.flags(), tool)

    @batched
    def compile(self, lowered: list, case_runs: list[CaseRun]) -> list[Entry]:
        for module, case_run in zip(lowered, case_runs):
            case_run.notes["lowered"] = module  # the run stage's replay compiles the case alone
        workdir = case_runs[0].workdir
        if len(lowered) == 1:
            source = write_ir_once(lowered[0], case_runs[0], COMPILE_INPUT, self.generic_form)
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
        statistics = source.with_suffix(".statistics.csv")
        start = time.perf_counter()
        try:
            run_tool("iree-compile", [*self.compile_command(str(source), str(output)), *statistics_flags(statistics), *thread_flags()])
        except ToolError as e:
            if len(lowered) > 1:
                guilty = guilty_functions(e.output, source, names)
                if guilty:
                    raise BatchFailure(guilty, e) from e
            raise
        seconds = time.perf_counter() - start
        dispatches = dispatch_counts(statistics)
        compiled = Compiled(output, self.target.driver)
        entries = []
        for name, case_run in zip(names, case_runs):
            stats = compile_stats(name, dispatches, output, seconds, len(names))
            case_run.extras["compile_stats"] = stats
            entries.append(Entry(compiled, name, stats))
        return entries

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
        absent = missing_device(self.target.driver)
        if absent:
            raise NotRun(f"compiled for {self.target.label}; not run: no {self.target.driver} device ({absent})")
        if "run" not in case_run.notes.get("reproducers", {}):
            self._reproduce_run(case_run)
        function = entry.compiled.function(entry.function)
        outputs = function(*[to_runtime(t) for t in inputs])
        if isinstance(outputs, (tuple, list)):
            return unsigned_as_eager(tuple(from_iree(o) for o in outputs), case_run)
        return unsigned_as_eager(from_iree(outputs), case_run)

    def remote_run(self, entry: Entry, case_run: CaseRun) -> Reproducer:
        """The compiled module and one iree-run-module per input set, writing every output as .npy.

        The module is the one compiled here (a batch's module holds its other
        cases too; bundles keep each module once): no compiler is needed there,
        only IREE's runtime. Each result of the function is one output file,
        the new values of mutated inputs first, as the Python runtime returns them:
        .npy, or the bare bytes (.bin) where iree-run-module writes no .npy.
        """
        from torch.utils._pytree import tree_flatten

        from conformance.arrays import ML_DTYPES

        mutated = [case_run.inputs[0][i] if i is not None else None for i in case_run.extras.get("mutations") or []]
        files = {REMOTE_MODULE: lambda path: shutil.copyfile(entry.compiled.vmfb, path)}
        runs = []
        for index, (inputs, expected) in enumerate(zip(case_run.inputs, case_run.expected)):
            # iree-run-module 3.13 writes no .npy of bfloat16 or float8 ("unsupported data encoding"): their bytes, then.
            raw = [getattr(t, "dtype", None) in ML_DTYPES for t in mutated + tree_flatten(expected)[0]]
            runs.append([
                "iree-run-module",
                f"--module={REMOTE_MODULE}",
                f"--device={self.target.driver}",
                f"--function={entry.function}",
                *self._input_flags(inputs, index, files),
                *(f"--output=@outputs/set{index}/{j}.{'bin' if bytes_only else 'npy'}" for j, bytes_only in enumerate(raw)),
            ])
        # The case alone, for IREE's own tools: a failure found there is reported upstream from it.
        replay = self._replay(case_run, ALONE_MODULE)
        if replay is None:
            return Reproducer(files, runs)
        return Reproducer({**files, **replay.files}, runs, replay=replay.commands)

    def module_value(self, tensor: torch.Tensor) -> torch.Tensor:
        """A case's input or reference output as the compiled function takes or returns it: the same
        value here; a frontend whose exporter represents some values otherwise says how (onnx.py)."""
        return tensor

    def _input_flags(self, inputs: list, index: int, files: dict) -> list[str]:
        """iree-run-module's --input flags for input set `index`: the bundle's inputs/ files, or, for an
        input the function takes in another form (module_value), that form written into `files`."""
        flags = []
        for i, tensor in enumerate(inputs):
            taken = self.module_value(tensor)
            if taken is tensor:
                flags.append(f"--input=@inputs/set{index}/{i}.npy")
            else:
                files[f"module-inputs/set{index}/{i}.npy"] = _writer(np.save, taken)
                flags.append(f"--input=@module-inputs/set{index}/{i}.npy")
        return flags

    def _reproduce_run(self, case_run: CaseRun) -> None:
        """Compile the case alone and run it on every input set, checking the reference's outputs."""
        replay = self._replay(case_run, "module.vmfb")
        if replay is not None:
            case_run.reproduce("run", replay.files, *replay.commands)

    def _replay(self, case_run: CaseRun, module: str) -> Reproducer | None:
        """The case's own IR compiled alone to `module`, then run on every input set against the reference's outputs.

        One iree-run-module per input set, in order: a case that fails only at
        its second set (a dynamic dim at another size) fails the replay there.
        The IR is the one handed to the compiler or to the compile cache (whose
        hit skipped the compiler), printed once; a case compiled in a batch
        without the cache prints its own. A case found by its case key has it
        only when the cache kept it (see compile_cache_use.py): else None.
        """
        from torch.utils._pytree import tree_flatten

        printed, lowered = case_run.notes.get(COMPILE_INPUT), case_run.notes.get("lowered")
        if printed is not None:
            write_input = lambda path: shutil.copyfile(printed, path)
        elif lowered is not None:
            write_input = lambda path: write_ir(lowered, path, self.generic_form)
        else:
            return None
        files = {"input.mlir": write_input}
        mutations = case_run.extras.get("mutations") or []  # leading results: mutated inputs' new values, buffers (None)
        runs = []
        for index, (inputs, expected) in enumerate(zip(case_run.inputs, case_run.expected)):
            given = tree_flatten(expected)[0]
            outputs = [self.module_value(t) for t in given]  # as the function returns them
            after = case_run.inputs_after[index] if mutations else []
            runs.append([
                "iree-run-module",
                f"--module={module}",
                f"--device={self.target.driver}",
                "--function=main",
                *self._input_flags(inputs, index, files),
                *("--expected_output=(ignore)" if i is None else
                  expected_output_flag(after[i], f"after/set{index}/{i}", files, saved=False) for i in mutations),
                *(expected_output_flag(t, f"expected/set{index}/{j}", files) if t is g
                  else expected_output_flag(t, f"module-expected/set{index}/{j}", files, saved=False)
                  for j, (t, g) in enumerate(zip(outputs, given))),
                *tolerance_flags(case_run.case, outputs),
            ])
        return Reproducer(files, [self.compile_command("input.mlir", module, tool="iree-compile"), *runs])


def compile_command(source: str, output: str, input_type: str, target_flags: list[str], tool: str | None = None) -> list[str]:
    """iree-compile's command line; `tool` defaults to the native binary, reproducers name the public `iree-compile`."""
    return [tool or iree_compile(), source, f"--iree-input-type={input_type}", *target_flags, "-o", output]


def thread_flags() -> list[str]:
    """iree-compile on one thread where this lane has one core (threads.py): the same module, less CPU.
    Not in compile_command: what a reproducer runs is the compile as such, on the machine it runs on."""
    return ["--mlir-disable-threading"] if threads.one_core_each() else []


def statistics_flags(path: Path) -> list[str]:
    """iree-compile's flags writing its static execution statistics (per function) to `path`."""
    return ["--iree-scheduling-dump-statistics-format=csv", f"--iree-scheduling-dump-statistics-file={path}"]


# "; builtin.module > util.func @c3 > stream.cmd.execute": a function's command buffer (torch input adds $async)
EXECUTE_SECTION = re.compile(r"^; .*\butil\.func @([\w$.-]+) > stream\.cmd\.execute")


def dispatch_counts(path: Path) -> dict[str, int]:
    """Dispatches per function of the module, from IREE's CSV statistics (each execute region lists its commands)."""
    counts: dict[str, int] = {}
    function = None
    if not path.exists():
        return counts
    for line in path.read_text().splitlines():
        section = EXECUTE_SECTION.match(line)
        if section:
            function = section.group(1).removesuffix("$async")
            counts.setdefault(function, 0)
        elif not line.strip():
            function = None
        elif function is not None and not line.startswith(";"):
            row = next(csv.reader([line]))  # "Depth","Command","Symbol",...
            if len(row) > 1 and row[1] == "dispatch":
                counts[function] += 1
    return counts


def compile_stats(function: str, dispatches: dict[str, int], vmfb: Path, seconds: float, cases: int) -> dict:
    """A case's compile figures: its dispatches, its module's size, the compile time shared among the module's cases.

    A batch compiles its cases into one module: `vmfb_bytes` is the whole
    module's when `module_cases` > 1 (a case's own size is known when it
    was compiled alone: models, or --batch-size 1).
    """
    return {
        "dispatches": dispatches.get(function, 0),
        "vmfb_bytes": vmfb.stat().st_size,
        "module_cases": cases,
        "seconds": round(seconds / cases, 3),
    }


def expected_output_flag(output, stem: str, files: dict, saved: bool = True) -> str:
    """iree-run-module's --expected_output for one output, `stem`.npy in the bundle (written into `files` unless saved).

    iree-run-module compares element types exactly, and reads a .npy the
    module's results do not match: a bfloat16 or float8 .npy as opaque 16-
    or 8-bit elements, an integer .npy as signed or unsigned (`si64`,
    `ui8`) where the module returns signless integers (`i64`, `i8`). Those
    are given to it as their bare bytes with the type the module returns
    (`4x8xbf16=@raw/set0/0.bin`, `3x5xi64=@raw/set0/0.bin`), written into
    `files` beside the Reproducer's other files.
    """
    from conformance.arrays import ML_DTYPES
    from conformance.dtypes import builtin_name

    dtype = getattr(output, "dtype", None)
    if dtype in ML_DTYPES:
        element = builtin_name(dtype)
    elif isinstance(dtype, torch.dtype) and not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool):
        element = f"i{torch.iinfo(dtype).bits}"
    else:
        if not saved:
            files[f"{stem}.npy"] = _writer(np.save, output)
        return f"--expected_output=@{stem}.npy"
    raw = f"raw/{stem.removeprefix('expected/')}.bin"
    files[raw] = _writer(lambda path, array: path.write_bytes(array.tobytes()), output)
    shape = "".join(f"{d}x" for d in output.shape)
    return f"--expected_output={shape}{element}=@{raw}"


def _writer(save, tensor):
    """A Reproducer's file writer: `save(path, tensor as NumPy)`, making the file's folder first."""

    def write(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        save(path, to_numpy(tensor))

    return write


def tolerance_flags(case, outputs: list) -> list[str]:
    """iree-run-module's comparison flags for the case's tolerances (torch.testing's when unset).

    It takes an absolute threshold per element type but one relative
    tolerance for all: that of the first floating-point output (float32's
    when there is none), so an f16 case is replayed with f16's rtol.
    """
    from torch.testing._comparison import default_tolerances

    from conformance.dtypes import builtin_name

    flags = []
    rtols = {}
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        rtol, atol = (case.rtol, case.atol) if case.rtol is not None else default_tolerances(dtype)
        flags.append(f"--expected_{builtin_name(dtype)}_threshold={atol:g}")
        rtols[dtype] = rtol
    floats = [t.dtype for t in outputs if isinstance(t, torch.Tensor) and t.dtype in rtols]
    return [*flags, f"--expected_rtol={rtols[floats[0] if floats else torch.float32]:g}"]


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
