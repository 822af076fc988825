"""Test-only backends: tiny and fake, to test the framework's own logic.

Each behaves like eager except where it is told to misbehave, so a test can
check that one case's disaster does not spill onto its neighbours.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import time

import torch

from conformance.backends.protocol import Backend, BatchFailure, StageFailure, batched
from conformance.run_options import Option, comma_list
from conformance.backends.protocol import shared
from conformance.taxonomy import Code
from conformance.toolchain.iree import IreeBackend
from conformance.toolchain.lowerings import TOSA
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
        os.kill(supervisor_pid(), 9)
        time.sleep(10**6)
    else:
        raise ValueError(how)


def supervisor_pid() -> int:
    """The process supervising this child: its parent, or its parent's when it was forked by a zygote."""
    parent = os.getppid()
    with open(f"/proc/{parent}/cmdline", "rb") as f:
        forked = b"conformance.execution.zygote" in f.read()
    if not forked:
        return parent
    with open(f"/proc/{parent}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])  # the field after the state: the parent's pid


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


class ChattyAbort(Misbehaving):
    """Prints a line in every stage of every case but `victim`, which prints an LLVM-style error in compile and aborts."""

    def _maybe(self, stage: str, case_run) -> None:
        if case_run.case.id != self.victim:
            os.write(2, f"{stage} {case_run.case.id}: all is well\n".encode())
        elif stage == self.stage:
            os.write(2, b"LLVM ERROR: fake assertion failed\n")
            os.abort()


CHATTY_ABORT = ChattyAbort("chatty-abort", "abort", "compile")
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
        if os.environ.get("FAKE_BATCH_LOG"):  # lets a test see which cases each process compiled together
            with open(os.environ["FAKE_BATCH_LOG"], "a") as log:
                log.write(json.dumps([os.getpid(), [r.case.id for r in case_runs]]) + "\n")
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
    (an error at stage lower), "shape" (an extra dimension: SHAPE_MISMATCH),
    "nest" (the outputs wrapped in one more tuple), "swap" (the outputs in
    reverse order), "nan" (a NaN in the first element), "double" (every
    value doubled), "raise-another-op-each-run" (the lower error names
    fake_op, then other_op, by turns: count_run). The environment reaches the
    supervised child, so a test scripts a run.
    """

    name = "scripted"
    stages = ("lower", "run")
    environment = ("FAKE_SCRIPT",)

    def _script(self) -> dict:
        return json.loads(os.environ.get("FAKE_SCRIPT", "{}"))

    def lower(self, _, case_run):
        behaviour = self._script().get(case_run.case.id)
        op = "fake_op"
        if behaviour == "raise-another-op-each-run":  # fake_op on odd runs, other_op on even ones
            op = "fake_op" if count_run(self.name, case_run.case.id) % 2 else "other_op"
        if behaviour in ("raise", "raise-another-op-each-run"):
            raise PipelineError(
                "builtin.module(torch-backend-to-tosa-backend-pipeline)",
                f"error: failed to legalize operation 'torch.aten.{op}' that was explicitly marked illegal",
            )

    def run(self, _, inputs, case_run):
        out = case_run.module(*inputs)
        behaviour = self._script().get(case_run.case.id)
        if behaviour == "perturb":
            return out * 1.01 + 0.01
        if behaviour == "shape":
            return out.unsqueeze(0)
        if behaviour == "nest":
            return (out,)
        if behaviour == "swap":
            return tuple(reversed(out))
        if behaviour == "nan":
            out = out.clone()
            out.view(-1)[0] = float("nan")
        if behaviour == "double":
            return out * 2
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


class SharedBatch(Backend):
    """A first stage both `@shared` and `@batched` (as the ONNX contract): a batch holding `victim` fails by `how`."""

    stages = ("prepare", "run")

    def __init__(self, name: str, how: str | None, victim: str = "tanh"):
        self.name, self.how, self.victim = name, how, victim

    @shared("fake-prepare-batched")
    @batched
    def prepare(self, values, case_runs):
        if os.environ.get("FAKE_BATCH_LOG"):  # lets a test see which backend ran which cases together
            with open(os.environ["FAKE_BATCH_LOG"], "a") as log:
                log.write(json.dumps([self.name, [r.case.id for r in case_runs]]) + "\n")
        if self.how and any(r.case.id == self.victim for r in case_runs):
            die(self.how)
        return [None] * len(case_runs)

    def run(self, _, inputs, case_run):
        return case_run.module(*inputs)


SHARED_BATCH_A, SHARED_BATCH_B = SharedBatch("shared-batch-a", None), SharedBatch("shared-batch-b", None)
SHARED_BATCH_RAISE_A, SHARED_BATCH_RAISE_B = SharedBatch("raise-a", "raise"), SharedBatch("raise-b", "raise")
SHARED_BATCH_SEGFAULT_A, SHARED_BATCH_SEGFAULT_B = SharedBatch("segfault-a", "segfault"), SharedBatch("segfault-b", "segfault")


class Maker(Backend):
    """A first stage another chain builds on (as torch.export for the ONNX exporter); it fails on `tanh`."""

    name = "maker"
    stages = ("make", "run")

    @shared("fake-make")
    def make(self, _, case_run):
        if case_run.case.id == "tanh":
            raise RuntimeError("error: the maker cannot make tanh")
        case_run.extras["made_by"] = self.name
        return f"made {case_run.case.id}"

    def run(self, _, inputs, case_run):
        return case_run.module(*inputs)


class Builder(Backend):
    """A first stage of a chain of its own that starts from Maker's value when the job has one (`given`)."""

    name = "builder"
    stages = ("build", "run")

    @shared("fake-build", given=("fake-make",))
    def build(self, made, case_run):
        if os.environ.get("FAKE_GIVEN_LOG"):  # what the stage was handed, and the extras it came with
            with open(os.environ["FAKE_GIVEN_LOG"], "a") as log:
                log.write(json.dumps([case_run.case.id, made, case_run.extras.get("made_by")]) + "\n")
        return made

    def run(self, _, inputs, case_run):
        return case_run.module(*inputs)


MAKER, BUILDER = Maker(), Builder()


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
    """Scripted, with a compile stage whose output the compile cache keeps (a file naming the case).

    Compile behaviours: "refuse" (the compiler's diagnostic: COMPILER_ERROR), "crash-then-refuse"
    (a SIGSEGV on odd runs, that diagnostic on even ones: count_run).
    """

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
        behaviour = self._script().get(case_run.case.id)
        if behaviour == "crash-then-refuse" and count_run(self.name, case_run.case.id) % 2:
            die("segfault")
        if behaviour in ("refuse", "crash-then-refuse"):
            raise StageFailure(Code.COMPILER_ERROR, "error: 'fake.op' op is not legal for the fake target", op="fake.op")
        compiled = case_run.workdir / "compiled.txt"
        compiled.write_text(self.cache_input(lowered, case_run).read_text())
        return compiled

    def cache_store(self, compiled):
        return compiled, {"case": compiled.read_text()}

    def cache_load(self, path, meta, case_run):
        assert path.read_text() == meta["case"] == case_run.case.id
        return path


CACHED = Cached()


class Recording(Backend):
    """Eager, saving the inputs each case hands it to $FAKE_RECORD_DIR/<case>.<set>.pt."""

    name = "recording"
    stages = ("run",)

    def run(self, _, inputs, case_run):
        directory = os.environ["FAKE_RECORD_DIR"]
        count = sum(name.startswith(f"{case_run.case.id}.") for name in os.listdir(directory))
        torch.save([t.clone() for t in inputs], os.path.join(directory, f"{case_run.case.id}.{count}.pt"))
        with case_run.case.eager():
            return case_run.module(*inputs)


RECORDING = Recording()


class LanesSeen(Backend):
    """Eager, saying in its Results' extras how many lanes its child was told share the cores (toolchain/threads.py)."""

    name = "lanes-seen"
    stages = ("run",)

    def run(self, _, inputs, case_run):
        from conformance.toolchain import threads

        case_run.extras["lanes"] = threads._lanes
        return case_run.module(*inputs)


LANES_SEEN = LanesSeen()


class ExportOnly(TorchMlirBackend):
    """torch-mlir's real export stage, then eager: a run that tests torch.export and nothing after it."""

    name = "export-only"
    stages = ("export", "run")

    def run(self, _, inputs, case_run):
        return case_run.module(*inputs)


EXPORT_ONLY = ExportOnly()


class RawPassManager(TorchMlirBackend):
    """torch-mlir's TOSA lowering run with the bindings' own PassManager, its MLIRError let out.

    What a plugged-in backend does when written without the framework's
    run_pipeline. `how`: "printed" leaves the context as the FX importer made
    it (errors printed to stderr as they come, the exception says only
    "Failure while executing pass pipeline"); "collected" keeps them in the
    exception's error_diagnostics; "wrapped" also raises an error of the
    backend's own from it.
    """

    stages = ("export", "import", "contract", "lower", "run")

    def __init__(self, name: str, how: str):
        self.name, self.how = name, how

    def lower(self, contract, case_run):
        from torch_mlir.passmanager import PassManager

        lowered = contract.clone()
        context = lowered.context
        emitted = context.emit_error_diagnostics
        if self.how != "printed":
            context.emit_error_diagnostics = False
        try:
            with context:
                PassManager.parse("builtin.module(torch-backend-to-tosa-backend-pipeline)").run(lowered)
        except Exception as e:
            if self.how == "wrapped":
                raise RuntimeError("my backend could not lower the model") from e
            raise
        finally:
            context.emit_error_diagnostics = emitted
        return lowered

    def run(self, _, inputs, case_run):
        return case_run.module(*inputs)


RAW_PASS_MANAGER_PRINTED = RawPassManager("raw-pm-printed", "printed")
RAW_PASS_MANAGER_COLLECTED = RawPassManager("raw-pm-collected", "collected")
RAW_PASS_MANAGER_WRAPPED = RawPassManager("raw-pm-wrapped", "wrapped")


def count_run(backend: str, case_id: str) -> int:
    """How often `backend` ran `case_id`, this run included, counted in a file of $FAKE_FLAKY_STATE
    (each attempt is a fresh process); 0 for a case not in $FAKE_FLAKY_CASES when that is set."""
    wanted = os.environ.get("FAKE_FLAKY_CASES")
    if wanted and case_id not in wanted.split(","):
        return 0
    path = os.path.join(os.environ["FAKE_FLAKY_STATE"], f"{backend}-{case_id}")
    count = (int(open(path).read()) if os.path.exists(path) else 0) + 1
    with open(path, "w") as f:
        f.write(str(count))
    return count


class Flaky(Backend):
    """Eager, except that it counts its runs of each case in $FAKE_FLAKY_STATE (a directory) and misbehaves by turns.

    Each attempt of a pair runs in a fresh child, so the count lives in a file:
    "alternate" gives a wrong answer (NUMERIC_MISMATCH) on the 1st, 3rd, ... run
    of a case and the right one on the others; "jitter" always passes, but on the
    2nd, 4th, ... run moves one element of the output by one ulp (within any
    tolerance, different in its bits). $FAKE_FLAKY_CASES (comma-separated) names
    the cases it misbehaves on (default: all).
    """

    stages = ("run",)

    def __init__(self, name: str, how: str):
        self.name, self.how = name, how

    def run(self, _, inputs, case_run):
        out = case_run.module(*inputs)
        count = count_run(self.name, case_run.case.id)
        if self.how == "alternate" and count % 2 == 1:
            return out * 1.01 + 0.01
        if self.how == "jitter" and count and count % 2 == 0:
            out = out.clone()
            out.view(-1)[0] = torch.nextafter(out.view(-1)[0], torch.tensor(float("inf"), dtype=out.dtype))
        return out


ALTERNATING = Flaky("alternating", "alternate")
JITTER = Flaky("jitter", "jitter")


# -- really nondeterministic: nothing scripted, the machine decides ------------


class RacySum(Backend):
    """Full sums computed the way a GPU's atomic adds do: chunks summed on 8 threads,
    each partial sum added to the total when its thread gets the lock.

    Float addition is not associative and the order the threads get the lock
    is the OS scheduler's, so the last bits of the total change from run to
    run (within any sum's tolerance): --check-determinism finds it FLAKY.
    Only cases computing torch.sum of one float tensor apply.
    """

    name = "racy-sum"
    stages = ("run",)

    def not_applicable(self, case):
        if tuple(case.ops) != ("aten.sum",) or len(case.inputs) != 1 or not case.inputs[0].dtype.is_floating_point:
            return "racy-sum computes full float sums only"
        from conformance.cases.inputs import make_inputs, make_module

        inputs = make_inputs(case, 0)[0]
        out = make_module(case, 0)(*inputs)
        if out.shape != () or out.dtype != inputs[0].dtype:  # reduces some dims only, or casts
            return "racy-sum computes full float sums only"
        return None

    def run(self, _, inputs, case_run):
        import threading
        from concurrent.futures import ThreadPoolExecutor

        lock = threading.Lock()
        total = torch.zeros((), dtype=inputs[0].dtype)

        def add(part):
            nonlocal total
            partial = part.sum()
            with lock:
                total = total + partial

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(add, inputs[0].reshape(-1).chunk(64)))
        return total


class UninitialisedRelu(Backend):
    """ReLU whose kernel allocates its output with torch.empty and writes only the positive
    elements: the others keep whatever the allocator's memory held (a classic kernel bug).

    What that memory holds depends on the process's allocation history and on
    address-space randomisation (freed blocks keep heap pointers), so a fresh
    process may find zeros there (a pass) or garbage (a wrong answer).
    Only float cases computing aten.relu apply.
    """

    name = "uninit-relu"
    stages = ("run",)

    def not_applicable(self, case):
        if case.family != "activations" or tuple(case.ops) != ("aten.relu",) or not case.inputs[0].dtype.is_floating_point:
            return "uninit-relu computes float relu only"
        return None

    def run(self, _, inputs, case_run):
        x = inputs[0]
        out = torch.empty_like(x)
        positive = x > 0
        out[positive] = x[positive]
        return out


RACY_SUM = RacySum()
UNINIT_RELU = UninitialisedRelu()


class BatchNaming(Backend):
    """Compiles in batches; every attempt prints its members, and one holding `victim` fails naming them all.

    With `blame`, a failing batch says which member is guilty (BatchFailure, as
    IREE's line numbers let the real backends do); without, it is bisected.
    Either way the victim's details must hold its own attempt's words only.
    """

    stages = ("compile", "run")

    def __init__(self, name: str, blame: bool, victim: str = "tanh"):
        self.name, self.blame, self.victim = name, blame, victim

    @batched
    def compile(self, values, case_runs):
        ids = [r.case.id for r in case_runs]
        print(f"compiling {' '.join(ids)}", file=sys.stderr)
        if self.victim in ids:
            error = RuntimeError(f"error: cannot compile the batch of {', '.join(ids)}")
            if self.blame and len(ids) > 1:
                raise BatchFailure([ids.index(self.victim)], error)
            raise error
        return [None] * len(case_runs)

    def run(self, _, inputs, case_run):
        return case_run.module(*inputs)


BATCH_BLAMING = BatchNaming("batch-blaming", blame=True)
BATCH_BISECTED = BatchNaming("batch-bisected", blame=False)


class HangingTool(Backend):
    """A run stage that declares its public-tool replay, then hangs on `tanh` (as a looping tool would)."""

    name = "hanging-tool"
    stages = ("run",)

    def run(self, _, inputs, case_run):
        case_run.reproduce("run", {"note.txt": lambda path: path.write_text("a tool that never returns\n")}, ["sleep", "1000"])
        if case_run.case.id == "tanh":
            time.sleep(10**6)
        return case_run.module(*inputs)


HANGING_TOOL = HangingTool()


class SpelledOut(IreeBackend):
    """A user's IREE backend written as the README once said: its lowering's facts set one by one, no `lowering`."""

    name = "spelled-out"
    pipeline = "torch-backend-to-tosa-backend-pipeline"
    iree_input_type = "tosa"
    generic_form = True


SPELLED_OUT = SpelledOut()


# -- two numeric bugs of two kinds ------------------------------------------------


class TwoNumericBugs(Backend):
    """Eager, with two ops replaced under a dispatch mode:

    aten.cumsum  a precision bug: the float64 sum moved 50 times eager's own float32 error away from it
                 (as an accumulation in another order or in a narrower type would be: off, but by rounding);
    aten.remainder  a wrong answer: C's fmod (the sign of the dividend), not Python's remainder (the divisor's).
    """

    name = "two-numeric-bugs"
    stages = ("run",)

    def run(self, _, inputs, case_run):
        from torch.utils._python_dispatch import TorchDispatchMode

        class Planted(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                packet = func.overloadpacket
                if packet is torch.ops.aten.cumsum:
                    eager = func(*args, **kwargs)
                    exact = func(args[0].double(), *args[1:], **kwargs)
                    return (exact + 50 * (eager.double() - exact)).to(eager.dtype)
                if packet is torch.ops.aten.remainder:
                    return torch.ops.aten.fmod(*args, **kwargs)
                return func(*args, **kwargs)

        with torch.no_grad(), Planted():
            return case_run.module(*inputs)


TWO_NUMERIC_BUGS = TwoNumericBugs()


class CountedWrongTosa(IreeBackend):
    """The real tosa backend, counting its exports and compiles per case ($FAKE_FLAKY_STATE), every answer off by one."""

    name = "counted-wrong-tosa"
    lowering = TOSA

    def export(self, _, case_run):
        count_run(f"{self.name}-export", case_run.case.id)
        return super().export_case(case_run)

    @batched
    def compile(self, lowered, case_runs):
        for case_run in case_runs:
            count_run(f"{self.name}-compile", case_run.case.id)
        return super().compile(lowered, case_runs)

    def run(self, entry, inputs, case_run):
        return super().run(entry, inputs, case_run) + 1


COUNTED_WRONG_TOSA = CountedWrongTosa()


class CrashesWhereItRuns(Misbehaving):
    """Runs as eager does, but `victim` dies of SIGSEGV at run; elsewhere too (remote_run), for a fake runtime.

    Its remote run names a module file saying which it is ("crash" or "eager"): the test's
    stand-in for iree-run-module (test_remote_run.py) kills itself on the first, and
    copies eager's outputs on the second.
    """

    def remote_run(self, value, case_run):
        from torch.utils._pytree import tree_flatten

        from conformance.reproducer import Reproducer

        verdict = "crash" if case_run.case.id == self.victim else "eager"
        commands = [
            ["iree-run-module", "--module=module.vmfb", *(f"--output=@outputs/set{n}/{j}.npy" for j in range(len(tree_flatten(e)[0])))]
            for n, e in enumerate(case_run.expected)
        ]
        return Reproducer({"module.vmfb": lambda path: path.write_text(verdict)}, commands)


CRASHES_WHERE_IT_RUNS = CrashesWhereItRuns("crashes-where-it-runs", "segfault", "run")


# -- failures a public tool replays, for issue files ------------------------------------------------

# The "compiler" and "runtime" of ISSUE_FILING: python -c scripts standing in for iree-compile and
# iree-run-module, so that a bundle's commands replay anywhere the venv's python is on PATH.
FAKE_COMPILE = ("import sys; ir = open(sys.argv[1]).read(); "
                "sys.exit(\"input.mlir:2:8: error: 'fake.tanh' op is not supported by fake-compile\" if 'fake.tanh' in ir else 0)")
FAKE_RUN = ("import sys; expected = sys.argv[1].split('=', 2)[2]; "
            "print('[FAILED] result[0] does not match; expected:', expected, '; actual: three times the input'); sys.exit(1)")


class IssueFiling(Backend):
    """Lowers a case to a text IR of its ATen ops (one `fake.<op>` line each), "compiles" it with a
    public-tool replay that rejects `fake.tanh`, and runs it with `aten.mul` computing x*3 (a wrong
    answer, replayed by a fake runtime). Its diagnostics name this machine's temp dir, home and host,
    as real tools' do: an issue file must leave them out."""

    name = "issue-filing"
    stages = ("lower", "compile", "run")

    def tool(self, stage: str) -> str:
        return {"compile": "fake-compile", "run": "fake-run", "compare": "fake-compile + fake-run"}.get(stage, self.name)

    def lower(self, _, case_run):
        from torch.utils._python_dispatch import TorchDispatchMode

        ops: list[str] = []

        class Seen(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                if str(func) not in ops:
                    ops.append(str(func))
                return func(*args, **(kwargs or {}))

        with torch.no_grad(), Seen():
            case_run.module(*case_run.inputs[0])
        case_run.extras["aten_ops"] = ops
        shapes = ", ".join(f"tensor<{'x'.join(map(str, t.shape))}xf32>" for t in case_run.inputs[0])
        body = "".join(f'  %{i} = "fake.{op.split(".")[1]}"(%arg0) : ({shapes})\n' for i, op in enumerate(ops))
        return f"func.func @main({shapes}) {{\n{body}}}\n"

    def compile(self, ir: str, case_run):
        case_run.reproduce("compile", {"input.mlir": lambda path: path.write_text(ir)}, ["python", "-c", FAKE_COMPILE, "input.mlir"])
        if "fake.tanh" in ir:
            import socket
            from pathlib import Path

            from conformance.backends.protocol import StageFailure

            printed = (f"{case_run.workdir}/input.mlir:2:8: error: 'fake.tanh' op is not supported by fake-compile\n"
                       f"note: fake-compile built in {Path.home()}/src/fake on host {socket.gethostname()}\n")
            raise StageFailure("COMPILER_ERROR", "fake-compile rejects fake.tanh", op="fake.tanh", details=printed)
        return ir

    def run(self, ir: str, inputs, case_run):
        case_run.reproduce("run", {"input.mlir": lambda path: path.write_text(ir)},
                           ["python", "-c", FAKE_RUN, "--expected_output=@expected/set0/0.npy"])
        out = case_run.module(*inputs)
        return out * 1.5 if "fake.mul" in ir else out  # x*2 becomes x*3


ISSUE_FILING = IssueFiling()


class Figured(Backend):
    """Eager, with compile figures as IREE records them (extras["compile_stats"]) read from $FAKE_FIGURES.

    $FAKE_FIGURES is JSON {case id: {dispatches, vmfb_bytes, seconds, module_cases, run_sleep}}; a case
    it leaves out gets 3 dispatches, 1000 bytes, 0.5 s, compiled alone, and a run that takes no time
    to speak of. `run_sleep` seconds make each call of its run stage that slow (what gates time).
    """

    name = "figured"
    stages = ("compile", "run")
    DEFAULT = {"dispatches": 3, "vmfb_bytes": 1000, "seconds": 0.5, "module_cases": 1}

    def _figures(self, case_id: str) -> dict:
        return {**self.DEFAULT, **json.loads(os.environ.get("FAKE_FIGURES", "{}")).get(case_id, {})}

    def compile(self, _, case_run):
        figures = self._figures(case_run.case.id)
        case_run.extras["compile_stats"] = {k: figures[k] for k in ("dispatches", "vmfb_bytes", "seconds", "module_cases")}

    def run(self, _, inputs, case_run):
        time.sleep(self._figures(case_run.case.id).get("run_sleep", 0))
        return case_run.module(*inputs)


FIGURED = Figured()
