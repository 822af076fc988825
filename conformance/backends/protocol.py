"""The Backend protocol: what every backend implements.

A backend names its stages in order and has one method per stage, named
after it (`import` is spelt `import_`). Each stage receives the value the
previous stage returned (the first receives None) and the CaseRun of the case;
the last stage is always `run`, called once per input set, returning the
outputs that the runner compares with eager.

    class MyBackend(Backend):
        name = "mine"
        stages = ("lower", "compile", "run")

        def lower(self, _, case_run): ...
        def compile(self, lowered, case_run): ...
        def run(self, compiled, inputs, case_run): ...

The runner times every stage, captures everything the stage prints, and
turns any exception into a classified Result; a backend raises StageFailure
when it knows the code and explanation better than the generic parsers.

Stages must treat their input value as read-only: a `@shared` stage's value
is handed to every backend in the run whose stages share it.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from conformance.cases.spec import Case
from conformance.export_modes import DEFAULT_EXPORT_MODE
from conformance.reproducer import Reproducer, stage_reproducer
from conformance.taxonomy import Stage


@dataclass
class CaseRun:
    """One case as the stages of one job see it."""

    case: Case
    module: torch.nn.Module  # built once under the case's seed, in eval mode
    inputs: list[list[torch.Tensor]]  # one list per input set (dynamic cases: per size)
    expected: list[Any]  # the eager outputs, one per input set
    workdir: Path  # a scratch directory of this case's own
    options: dict[str, Any] = field(default_factory=dict)  # run options, e.g. custom_ops
    inputs_after: list[list[torch.Tensor]] = field(default_factory=list)  # the inputs as eager left them (in-place ops)
    notes: dict[str, Any] = field(default_factory=dict)  # what stages leave for later ones and for bundles
    extras: dict[str, Any] = field(default_factory=dict)  # JSON data for the Result (e.g. ops seen)
    staging: Path | None = None  # with --artifacts: where this pair's bundle is prepared
    export_mode: str = DEFAULT_EXPORT_MODE  # the case's own, or the run's --export-mode
    random_ops: tuple[str, ...] = ()  # random ops eager called though the case did not declare itself nondeterministic
    keeper: Callable | None = None  # the compile cache's (compile_cache_use.py), behind kept(); None: no cache

    @property
    def random(self) -> bool:
        """Outputs judged as samples: the case says it is random, or eager called random ops."""
        return self.case.nondeterministic or bool(self.random_ops)

    def kept(self, name: str, depends_on: str, make: Callable[[], Any], save: Callable[[Any, Path], None],
             load: Callable[[Path], Any]) -> Any:  # fmt: skip
        """make(), or what make() gave an earlier run for this case, kept by the compile cache beside what
        the backend's `export_stage` made, and under that key: so for values made from it with torch alone.

        `depends_on` names everything else make() depends on: torch-mlir's backends keep the decomposed
        program, which depends on torch-mlir only through the table it chooses, and name the table. A night
        with a new torch-mlir that leaves the table as it was decomposes nothing. `save` writes the value to
        a file (raising if it cannot be kept), `load` reads it back; with no cache, make() is all there is.
        """
        if self.keeper is None:
            return make()
        return self.keeper(name, depends_on, make, save, load)

    def reproduce(self, stage: str, files: dict[str, Callable[[Path], None]], *commands: list[str]) -> None:
        """Say how to replay `stage`; call it before the risky part of the stage.

        With --artifacts the files are written at once, so a stage that then
        crashes the process still leaves its reproducer behind.
        """
        reproducer = Reproducer(files, list(commands))
        self.notes.setdefault("reproducers", {})[stage] = reproducer
        if self.staging is not None:
            stage_reproducer(self.staging, stage, reproducer)


class StageFailure(Exception):
    """A stage failed and the backend knows how to classify it."""

    def __init__(self, code: str, explanation: str, *, op: str | None = None, details: str = ""):
        super().__init__(explanation)
        self.code = code
        self.explanation = explanation
        self.op = op
        self.details = details


class NotRun(Exception):
    """The run stage cannot run here, and that is no failure: the pair ends COMPILED, not PASS.

    A backend compiling for a device this machine lacks (a GPU) raises it
    from `run`; the message says what was compiled and why it was not run,
    e.g. "compiled for cuda; not run: no cuda device (...)".
    """


class BatchFailure(Exception):
    """A batched stage failed and knows which members are to blame (indices into the batch).

    The runner then runs the guilty ones alone (each gets its own diagnostic)
    and the rest together again, instead of bisecting blindly.
    """

    def __init__(self, guilty: list[int], cause: BaseException):
        super().__init__(str(cause))
        self.guilty = guilty
        self.cause = cause


def shared(key: str | Callable[[Backend], str], given: tuple[str, ...] | None = None) -> Callable:
    """Mark a stage whose value other backends may reuse for the same case.

    Two backends share a stage when every stage up to it carries the same
    keys: torch-mlir backends share export, import and contract, so a matrix
    run exports each case once. `key` may be a function of the backend, for
    a stage whose value depends on the backend's attributes (torch-mlir's
    contract, on the ops its lowering keeps backend-legal).

    `given` is the share chain of another frontend's stage this one builds
    on: when a backend of the job has already made that stage's value for
    the case, this stage is handed it (and the extras it said) as its input
    value, and must make from it what it would have made itself. The ONNX
    exporter starts from torch.export's program so.
    """

    def mark(fn):
        fn.shared_key = key
        fn.given = given
        return fn

    return mark


def batched(fn: Callable) -> Callable:
    """Mark a stage that takes a list of values and a list of CaseRuns.

    It returns one value per case, in order. If it raises, or crashes the
    process, the runner splits the batch until the guilty cases are alone,
    so every case still gets its own verdict; raising BatchFailure names
    the guilty members and saves the bisection.
    """
    fn.batched = True
    return fn


class Backend:
    """Base class of every backend; override `stages` and their methods."""

    name: str = ""
    description: str = ""
    stages: tuple[str, ...] = ("run",)
    # False for self-check backends (eager-noisy): nightly runs and the
    # shipped xfail sets leave them out.
    in_matrix: bool = True
    # Command-line options of this backend's own (conformance.run_options.Option):
    # added when it is named with --backend; their values reach its stages in
    # `case_run.options`, under each option's `dest`, when the user gives them.
    options: tuple = ()
    # The case formats it takes (conformance.cases.spec.FORMATS): what a case's
    # build() returns, a PyTorch module ("torch") or an ONNX model ("onnx").
    formats: tuple[str, ...] = ("torch",)
    # Environment variables whose values shape its results: `conformance nightly` answers a pair
    # from its verdict store (conformance/warm/) only while they hold the values the pair ran with.
    environment: tuple[str, ...] = ()

    def warm_up(self) -> None:
        """Import and set up, once per process, what every case's stages will need (a toolchain's modules).

        Called in the process the children are forked from (execution/zygote.py), so each child starts
        with it done; what it does must be what a first case would do anyway, and start no thread.
        """

    def not_applicable(self, case: Case) -> str | None:
        """The reason `case` does not apply to this backend (a SKIP), or None.

        An override should keep this answer: `super().not_applicable(case) or ...`.
        """
        if case.format not in self.formats:
            return f"{self.name} does not take {case.format} cases (it takes {', '.join(self.formats)})"
        return None

    def run(self, value: Any, inputs: list[torch.Tensor], case_run: CaseRun) -> Any:
        """The outputs for `inputs`: nested as eager's, or flat (one output alone, or a tuple of all in eager's flattening order)."""
        raise NotImplementedError

    def remote_run(self, value: Any, case_run: CaseRun) -> Reproducer | None:
        """How to run this pair's `run` stage on another machine, with public tools alone; None: it cannot be.

        `value` is what the stage before `run` returned (the compiled program).
        The Reproducer's files are what the commands need besides the case's
        inputs (the compiled module); its commands, one per input set in order,
        run in the pair's bundle, read `inputs/set<N>/<I>.npy` and write every
        output, flat, to `outputs/set<N>/<J>.npy`. A pair that ends COMPILED
        (no device here, or --compile-only) carries them in its bundle
        (remote/: docs/remote-run.md). Only backends whose runtime is a
        command of its own override it (the IREE ones: iree-run-module).
        """
        return None

    def targeted(self, target: str, options: list[str]) -> Backend:
        """This backend compiling for `target` with `options` (`--backend NAME@TARGET:OPTION...`).

        Returns a Backend named after the spelling, with flags() of its own,
        or raises ValueError naming the targets and options it takes. Only
        backends that compile for several targets override it (the IREE ones).
        """
        raise ValueError(f"backend {self.name!r} compiles for no target of choice")

    def flags(self) -> dict[str, Any]:
        """Whatever changes this backend's output besides the IR (for cache keys)."""
        return {}

    def tool(self, stage: str) -> str:
        """What runs `stage` for this backend, as reports group failures by it.

        Failures at one stage, with one code and op, in one tool are one root
        cause, whichever backends share the tool: torch-mlir's TOSA lowering
        fails alike under tosa, tosa-ref and onnx-tosa. A backend built on
        shared tools names them (toolchain/); by default its stages are its own.
        """
        if stage in (Stage.CASE, Stage.EAGER):
            return "the case (eager PyTorch)"  # fails alike on every backend
        return self.name

    # -- the compile cache (optional): name the stage whose output is stored --

    cache_stage: str | None = None
    # The toolchain packages (toolchain/versions.py's names) that `cache_stage` and `run` depend on:
    # a new release of one re-does those stages only; every other version keys the stages before
    # (compile_cache_store.py). `cpu` (the host CPU's model) belongs only to an artifact compiled for the host.
    compiler_tools: tuple[str, ...] = ()
    runtime_tools: tuple[str, ...] = ()

    # A stage before `cache_stage` whose output the cache also keeps under a key of its own, and the
    # packages of the stages after it up to `cache_stage` (left out of that key): torch-mlir's backends keep
    # what torch.export made, so a night with a new torch-mlir imports and lowers again but exports nothing.
    export_stage: str | None = None
    translation_tools: tuple[str, ...] = ()

    def export_store(self, value: Any, path: Path) -> None:
        """Write `export_stage`'s output to `path`; raise if it cannot be kept (it is then not stored)."""
        raise NotImplementedError

    def export_load(self, path: Path, case_run: CaseRun) -> Any:
        """`export_stage`'s output, rebuilt from a file export_store() wrote."""
        raise NotImplementedError

    def cache_input(self, value: Any, case_run: CaseRun) -> Path:
        """Write the exact input of `cache_stage` (the IR handed to the compiler) to a file.

        The cache hashes the file; the stage may reuse it rather than print the IR again.
        """
        raise NotImplementedError

    def cache_input_load(self, path: Path, case_run: CaseRun) -> Any:
        """The value `cache_stage` takes, rebuilt from a file cache_input() wrote (the lowered IR).

        Lets a night with a new compiler skip every stage before it; a backend
        without it (NotImplementedError) runs them.
        """
        raise NotImplementedError

    def cache_store(self, value: Any) -> tuple[Path, dict]:
        """`cache_stage`'s output as a file to keep, plus JSON metadata to rebuild it."""
        raise NotImplementedError

    def cache_load(self, path: Path, meta: dict, case_run: CaseRun) -> Any:
        """Rebuild `cache_stage`'s output from a kept file and its metadata."""
        raise NotImplementedError

    # -- used by the runner ------------------------------------------------

    def stage_method(self, stage: str) -> Callable:
        return getattr(self, stage + "_" if keyword.iskeyword(stage) else stage)

    def run_stage(self, stage: str, value: Any, case_run: CaseRun) -> Any:
        """One case through one stage, outside a run: a `@batched` stage gets a batch of one."""
        method = self.stage_method(stage)
        return method([value], [case_run])[0] if self.is_batched(stage) else method(value, case_run)

    def share_chain(self, upto: int) -> tuple[str, ...] | None:
        """The shared keys of stages[0..upto], or None if any of them is not shared."""
        keys = []
        for stage in self.stages[: upto + 1]:
            key = getattr(self.stage_method(stage), "shared_key", None)
            if key is None:
                return None
            keys.append(key(self) if callable(key) else key)
        return tuple(keys)

    def given_chain(self, stage: str) -> tuple[str, ...] | None:
        """The share chain whose value `stage` starts from when the job has it (`shared`'s `given`)."""
        return getattr(self.stage_method(stage), "given", None)

    def is_batched(self, stage: str) -> bool:
        return getattr(self.stage_method(stage), "batched", False)

    def __repr__(self) -> str:
        return f"<backend {self.name}>"
