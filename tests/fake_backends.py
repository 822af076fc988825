"""Test-only backends: tiny and fake, to test the framework's own logic.

Each behaves like eager except where it is told to misbehave, so a test can
check that one case's disaster does not spill onto its neighbours.
"""

from __future__ import annotations

import ctypes
import json
import os
import time

import torch

from conformance.backends.protocol import Backend, batched
from conformance.run_options import Option, comma_list
from conformance.backends.protocol import shared
from conformance.toolchain.mlir import PipelineError, run_pipeline
from conformance.toolchain.torch_mlir import CONTRACT_PIPELINE, TorchMlirBackend, check_result_types


def die(how: str) -> None:
    if how == "segfault":
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    elif how == "abort":
        os.abort()  # SIGABRT, as a failed LLVM assertion does
    elif how == "exit3":
        os._exit(3)
    elif how == "hang":
        time.sleep(10**6)
    elif how == "chatter":  # a pattern rewriter in a loop, straight to fd 2 as MLIR writes
        while True:
            os.write(2, b"loc(unknown): error: failed to rewrite the same op again\n")
    elif how == "raise":
        raise RuntimeError("error: fake backend failed on purpose")
    elif how == "kill-parent":  # takes down the process supervising it: a Ray actor dies as if its node went
        os.kill(os.getppid(), 9)
        time.sleep(10**6)
    else:
        raise ValueError(how)


class Misbehaving(Backend):
    """Passes every case except `victim`, on which stage `stage` dies by `how`."""

    stages = ("lower", "compile", "run")

    def __init__(self, name: str, how: str, stage: str, victim: str = "tanh"):
        self.name, self.how, self.stage, self.victim = name, how, stage, victim

    def _maybe(self, stage: str, case_run) -> None:
        if stage == self.stage and case_run.case.id == self.victim:
            die(self.how)

    def lower(self, _, case_run):
        self._maybe("lower", case_run)

    def compile(self, _, case_run):
        self._maybe("compile", case_run)

    def run(self, _, inputs, case_run):
        self._maybe("run", case_run)
        return case_run.module(*inputs)


SEGFAULT = Misbehaving("segfault", "segfault", "lower")
ABORT = Misbehaving("abort", "abort", "compile")
EXIT3 = Misbehaving("exit3", "exit3", "compile")
HANG = Misbehaving("hang", "hang", "run")
CHATTER = Misbehaving("chatter", "chatter", "lower")
KILL_PARENT = Misbehaving("kill-parent", "kill-parent", "run")  # only for executors whose lanes may die (Ray)


class BatchedMisbehaving(Backend):
    """Compiles cases as batches; a batch holding `victim` dies by `how`."""

    stages = ("compile", "run")

    def __init__(self, name: str, how: str, victim: str = "tanh"):
        self.name, self.how, self.victim = name, how, victim
        self.batch_sizes: list[int] = []

    @batched
    def compile(self, values, case_runs):
        if any(r.case.id == self.victim for r in case_runs):
            die(self.how)
        # Record what was batched, so a test can see batching happened.
        return [len(case_runs)] * len(case_runs)

    def run(self, batch_size, inputs, case_run):
        return case_run.module(*inputs)


BATCH_SEGFAULT = BatchedMisbehaving("batch-segfault", "segfault")
BATCH_RAISE = BatchedMisbehaving("batch-raise", "raise")


class Scripted(Backend):
    """Eager, except for cases named in $FAKE_SCRIPT (JSON {case id: behaviour}).

    Behaviours: "perturb" (outputs off by 1%: NUMERIC_MISMATCH), "raise"
    (an error at stage lower), "shape" (an extra dimension: SHAPE_MISMATCH).
    The environment reaches the supervised child, so a test scripts a run.
    """

    name = "scripted"
    stages = ("lower", "run")

    def _script(self) -> dict:
        return json.loads(os.environ.get("FAKE_SCRIPT", "{}"))

    def lower(self, _, case_run):
        if self._script().get(case_run.case.id) == "raise":
            raise PipelineError(
                "builtin.module(torch-backend-to-tosa-backend-pipeline)",
                "error: failed to legalize operation 'torch.aten.fake_op' that was explicitly marked illegal",
            )

    def run(self, _, inputs, case_run):
        out = case_run.module(*inputs)
        behaviour = self._script().get(case_run.case.id)
        if behaviour == "perturb":
            return out * 1.01 + 0.01
        if behaviour == "shape":
            return out.unsqueeze(0)
        return out


SCRIPTED = Scripted()


class NotABackend:
    name = "nope"


class Slow(Backend):
    """Eager, half a second per case: a run long enough to interrupt."""

    name = "slow"
    stages = ("run",)

    def run(self, _, inputs, case_run):
        time.sleep(0.5)
        return case_run.module(*inputs)


SLOW = Slow()


class Mistyped(TorchMlirBackend):
    """The real torch-mlir frontend, but the contract IR declares f64 where eager gives f32.

    A dtype-function bug made to order: the type check after the contract
    stage must catch it, whatever later stages would have done.
    """

    name = "mistyped"
    stages = ("export", "import", "contract", "run")

    @shared("contract:mistyped")
    def contract(self, module, case_run):
        from torch_mlir import ir

        contract = module.operation.clone()
        run_pipeline(contract, CONTRACT_PIPELINE.format(options=" extra-library="))
        main = next(op for op in contract.regions[0].blocks[0].operations if op.operation.name == "func.func")
        returned = main.regions[0].blocks[-1].operations[-1].operands[0]
        with contract.context:
            returned.set_type(ir.Type.parse(str(returned.type).replace(",f32>", ",f64>")))
        check_result_types(contract, case_run)
        return contract

    def run(self, _, inputs, case_run):
        return case_run.module(*inputs)


MISTYPED = Mistyped()


class SharedHang(Backend):
    """A shared first stage that hangs on `tanh`: every backend sharing it must be blamed at once."""

    stages = ("prepare", "run")

    def __init__(self, name: str):
        self.name = name

    @shared("fake-prepare")
    def prepare(self, _, case_run):
        if case_run.case.id == "tanh":
            if os.environ.get("FAKE_HANG_LOG"):  # lets a test count how often the hang was entered
                with open(os.environ["FAKE_HANG_LOG"], "a") as log:
                    log.write(f"{self.name}\n")
            time.sleep(10**6)

    def run(self, _, inputs, case_run):
        return case_run.module(*inputs)


SHARED_HANG_A = SharedHang("shared-a")
SHARED_HANG_B = SharedHang("shared-b")


class Hog(Backend):
    """Eager, except that on `tanh` its compile stage holds ever more memory."""

    name = "hog"
    stages = ("compile", "run")

    def compile(self, _, case_run):
        if case_run.case.id == "tanh":
            hoard = []
            while True:
                hoard.append(bytearray(64 * 2**20))  # touched: resident, not just reserved
                time.sleep(0.05)

    def run(self, _, inputs, case_run):
        return case_run.module(*inputs)


HOG = Hog()


class MutationLeading(Backend):
    """Returns, like torch-mlir's frozen import, the mutated input's new value before the outputs.

    With $FAKE_BAD_MUTATION set it returns a wrong new value: the runner must notice.
    """

    name = "mutation-leading"
    stages = ("run",)

    def run(self, _, inputs, case_run):
        original = [t.clone() for t in inputs]
        out = case_run.module(*inputs)  # mutates inputs[0] in place for the in-place fixture
        case_run.extras["mutations"] = [0]
        new_value = inputs[0] + (1.0 if os.environ.get("FAKE_BAD_MUTATION") else 0.0)
        assert not torch.equal(original[0], inputs[0]), "the fixture case must mutate its input"
        return (new_value, out)


MUTATION_LEADING = MutationLeading()


FLAVOURS = Option(("--fake-flavours",), "flavours the optioned backend records", type=comma_list, default=("plain",), metavar="A[,B]")


class Optioned(Backend):
    """Eager, recording the value of its own option (--fake-flavours) in each Result's extras."""

    name = "optioned"
    stages = ("run",)
    options = (FLAVOURS,)

    def run(self, _, inputs, case_run):
        case_run.extras["flavours"] = list(case_run.options.get(FLAVOURS.dest) or FLAVOURS.default)
        return case_run.module(*inputs)


OPTIONED = Optioned()


class Cached(Scripted):
    """Scripted, with a compile stage whose output the compile cache keeps (a file naming the case)."""

    name = "cached"
    stages = ("lower", "compile", "run")
    cache_stage = "compile"

    def lower(self, _, case_run):
        super().lower(_, case_run)
        return case_run.case.id

    def cache_input(self, lowered, case_run):
        path = case_run.workdir / "lowered.txt"
        path.write_text(lowered)
        return path

    def compile(self, lowered, case_run):
        compiled = case_run.workdir / "compiled.txt"
        compiled.write_text(self.cache_input(lowered, case_run).read_text())
        return compiled

    def cache_store(self, compiled):
        return compiled, {"case": compiled.read_text()}

    def cache_load(self, path, meta, case_run):
        assert path.read_text() == meta["case"] == case_run.case.id
        return path


CACHED = Cached()
