"""The torch-mlir frontend shared by the backends built on it.

    export    torch.export, strict or not as the case or --export-mode says (with
              torch.export.Dim for dynamic dimensions)
    import    PyTorch decompositions + torch_mlir's FX importer -> torch dialect
    contract  the torch backend contract pipeline, then the type check:
              every result type the IR declares must agree with eager
    lower     torch -> the backend's dialect (its lowering's `pipeline`)

The first three are `@shared`: a matrix run does them once per case for
all torch-mlir backends (the contract once per set of backend-legal ops).
Stages never mutate their input: `lower` works on a clone of the contract
module.
"""

from __future__ import annotations

import inspect
import re
import shutil
import sys
from pathlib import Path
from typing import Callable

import torch

from conformance import dtypes
from conformance.backends.protocol import Backend, BatchFailure, CaseRun, StageFailure, batched, shared
from conformance.compare import describe
from conformance.taxonomy import Code
from conformance.toolchain.decompose import decompose, settle, table_identity
from conformance.toolchain.export_together import decomposed_together, export_together
from conformance.toolchain.lowerings import Lowering
from conformance.toolchain.mlir import LEFT_OPERANDS, STATIC_TWIN, STATIC_TWIN_SIZE, UNCONVERTED, PipelineError, opt_command, run_pipeline, walk, write_ir

TORCH_EXPORT = "torch.export"  # the export stage's share key: the ONNX exporter starts from its program too (onnx.py)
CONTRACT_PIPELINE = (
    "builtin.module(func.func(torch-match-quantized-custom-ops),"
    " torchdynamo-export-to-torch-backend-pipeline{{{options}}})"
)


def dynamic_shapes(case_run: CaseRun):
    """torch.export's dynamic_shapes for the case, or None when it is static."""
    case = case_run.case
    if not case.is_dynamic:
        return None
    if case.exact is not None:
        # Exact inputs name dynamic dims but no relations between them: export infers those (AUTO).
        exact = case.exact.dynamic_dims()
        if not exact:
            return None
        per_input = tuple({d: torch.export.Dim.AUTO for d in exact.get(i, ())} or None for i in range(len(case_run.inputs[0])))
    else:
        dims: dict[str, torch.export.Dim] = {}
        per_input = tuple(
            # The smallest size the case runs at bounds the Dim: unbounded, export must
            # also prove sizes 0 and 1, which fails for natural cases like x[1:].
            {i: dims.setdefault(d.name, torch.export.Dim(d.name, min=min(d.sizes))) for i, d in spec.dynamic_dims.items()} or None
            for spec in case.inputs
        )
    parameters = inspect.signature(case_run.module.forward).parameters.values()
    if [p.kind for p in parameters] == [inspect.Parameter.VAR_POSITIONAL]:
        return (per_input,)  # forward(*args): one entry, holding the varargs
    return per_input


def contract_key(stage: str):
    """The shared key of a contract stage: backends whose lowerings keep other ops backend-legal get other contracts."""

    def key(backend: TorchMlirBackend) -> str:
        ops = backend.backend_legal_ops
        return f"{stage}:backend-legal-ops={','.join(ops)}" if ops else stage

    return key


class TorchMlirBackend(Backend):
    """A backend fed by torch-mlir: subclasses name their `lowering` and add the later stages."""

    stages = ("export", "import", "contract", "lower", "run")
    lowering: Lowering | None = None  # one of toolchain/lowerings.py's; None: the contract is the output
    frontend_description = "torch-mlir"  # what comes before the lowering in a generated description

    # The lowering's facts, as attributes of their own: a subclass may still set
    # `pipeline` (and IreeBackend's `iree_input_type`, `generic_form`) instead of a lowering.
    @property
    def pipeline(self) -> str | None:
        """The torch-mlir pass pipeline from the contract: the lowering's, unless a subclass sets its own."""
        return self.lowering.pipeline if self.lowering else None

    @property
    def backend_legal_ops(self) -> tuple[str, ...]:
        return self.lowering.backend_legal_ops if self.lowering else ()

    # The tools of the shared frontend, by stage: their failures are one root cause across backends.
    frontend_tools = {"export": "torch.export", "import": "torch-mlir FX importer", "contract": "torch-mlir backend contract"}

    def tool(self, stage: str) -> str:
        if stage in self.frontend_tools:
            return self.frontend_tools[stage]
        if stage == "lower" and self.lowering is not None:
            return f"torch-mlir {self.lowering.output_type} lowering"
        return super().tool(stage)

    def warm_up(self) -> None:
        settle()  # torch.export's and run_decompositions' first-use imports, and their state (decompose.py)
        import torch_mlir.extras.fx_importer  # noqa: F401

    # -- shared frontend ------------------------------------------------------

    @shared(TORCH_EXPORT)
    @batched
    def export(self, _, case_runs: list[CaseRun]) -> list:
        """The batch's static cases exported together, one export per export mode, split back into each
        case's own program (export_together.py); a case the split cannot vouch for, or a dynamic one, alone.
        A failing export (joint or alone) fails the batch: the stage walk runs the case it failed in alone, where
        the error names it (export_together.failing_member), and splits the batch down to it where not."""
        settle()  # torch's state as every later export and decomposition in this process meets it
        programs: list = [None] * len(case_runs)
        static = [index for index, case_run in enumerate(case_runs) if dynamic_shapes(case_run) is None]
        for mode in dict.fromkeys(case_runs[index].export_mode for index in static):
            members = [index for index in static if case_runs[index].export_mode == mode]
            if len(members) > 1:
                try:
                    split = export_together(
                        [case_runs[index].module for index in members],
                        [tuple(case_runs[index].inputs[0]) for index in members],
                        strict=mode == "strict",
                    )
                except BatchFailure as failure:  # the member it failed in, as this batch numbers it
                    raise BatchFailure([members[index] for index in failure.guilty], failure.cause) from failure.cause
                for index, program in zip(members, split):
                    programs[index] = program
        for index, case_run in enumerate(case_runs):
            if programs[index] is None:
                programs[index] = self.export_case(case_run)
            else:
                case_run.extras["export_mode"] = case_run.export_mode
                case_run.extras["aten_ops"] = exported_ops(programs[index])
        return programs

    def export_case(self, case_run: CaseRun):
        """torch.export of one case, as torch-mlir's FX configs export it."""
        settle()
        case_run.extras["export_mode"] = case_run.export_mode
        with torch.no_grad():
            program = torch.export.export(
                case_run.module,
                tuple(case_run.inputs[0]),
                dynamic_shapes=dynamic_shapes(case_run),
                strict=case_run.export_mode == "strict",
            )
        case_run.extras["aten_ops"] = exported_ops(program)
        return program

    # The compile cache keeps torch.export's program apart (compile_cache_store.py's exported key): it depends
    # on torch and the case, not on torch-mlir, whose decompositions, import and lowering follow.
    export_stage = "export"
    translation_tools = ("torch-mlir",)

    def export_store(self, program, path):
        save_program(program, path, not_saved_faithfully(program))

    def export_load(self, path, case_run: CaseRun):
        # Read when a stage needs it: a night whose decomposed program is kept too never does.
        copy = shutil.copyfile(path, case_run.workdir / "exported.pt2")  # (the store may evict its blob meanwhile)
        return SavedProgram(copy, lambda: self.export_case(case_run))

    @shared("import:torch-mlir-decompositions")
    def import_(self, program, case_run: CaseRun):
        return import_program(self.decomposed(program, case_run), case_run)

    def decomposed(self, program, case_run: CaseRun):
        """The exported program (or the cache's SavedProgram) decomposed with decomposition_table(), or the
        decomposition an earlier run kept: it is torch's, on torch-mlir's choice of ops, so kept under the
        table rather than torch-mlir's version."""
        table = self.decomposition_table(case_run)
        identity = table_identity(table)
        # A program split from its batch's joint export is decomposed with the batch (export_together.py).
        make = lambda: decomposed_together(program, table, identity) or decompose(exported_program(program), table)
        keep = lambda decomposed, path: save_program(decomposed, path, not_kept_decomposed(decomposed))
        return case_run.kept("decomposed", identity, make, keep, load_exported)

    def decomposition_table(self, case_run: CaseRun) -> dict:
        """The PyTorch decompositions applied before import (torch-mlir's default set)."""
        from torch_mlir.extras.fx_decomp_util import get_decomposition_table

        return get_decomposition_table()

    @shared(contract_key("contract"))
    def contract(self, module, case_run: CaseRun):
        pipeline = CONTRACT_PIPELINE.format(options=self.contract_options(case_run))
        contract = module.operation.clone()
        case_run.reproduce(
            "contract",
            {"input.mlir": lambda path: write_ir(module.operation, path)},
            opt_command(pipeline, "input.mlir"),
        )
        run_pipeline(contract, pipeline)
        check_result_types(contract, case_run)
        return contract

    def contract_options(self, case_run: CaseRun) -> str:
        return contract_options(self.backend_legal_ops)

    # -- the backend's own ----------------------------------------------------

    def lower(self, contract, case_run: CaseRun):
        if self.pipeline is None:
            return contract
        pipeline = f"builtin.module({self.pipeline})"
        case_run.reproduce(
            "lower", {"input.mlir": lambda path: write_ir(contract, path)}, opt_command(pipeline, "input.mlir")
        )
        lowered = contract.clone()
        try:
            run_pipeline(lowered, pipeline)
        except PipelineError as e:
            raise with_static_twin(with_unconverted_ops(e, lowered), contract, pipeline) from None
        return lowered


def legal_ops_option(ops) -> list[str]:
    """The contract pipelines' option keeping `ops` whole, if there are any."""
    return [f"backend-legal-ops={','.join(ops)}"] if ops else []


def contract_options(legal_ops) -> str:
    """CONTRACT_PIPELINE's options: `legal_ops` kept whole, no shape library of our own."""
    return " " + " ".join([*legal_ops_option(legal_ops), "extra-library="])


def with_unconverted_ops(error: PipelineError, module) -> PipelineError:
    """`error`, naming the torch ops a failed conversion left in `module`.

    When a conversion gives up, MLIR reports the first illegal op it meets,
    which is often a scalar constant (`torch.constant.int`) or a tensor
    literal (`torch.vtensor.literal`: masked_select's boolean mask) rather
    than the op that uses it; the module, rolled back to the failing pass's
    input, still holds the ops the target could not take.
    """
    if not any(f"failed to legalize operation '{operand}" in error.diagnostics for operand in LEFT_OPERANDS):
        return error
    left = dict.fromkeys(op.name for op in walk(module) if op.name.startswith(("torch.aten.", "torch.prims.")))
    if not left:
        return error
    return PipelineError(error.pipeline, f"{error.diagnostics}\n{UNCONVERTED} {', '.join(left)}")


# The op a conversion gave up on; its printed types, and a dynamic dim in a torch tensor type.
GAVE_UP = re.compile(r"failed to legalize operation '(torch\.[\w.]+)'[^\n]*?: ([^\n]*)")
DYNAMIC_DIM = re.compile(r"(!torch\.vtensor<\[)([^\]]*\?[^\]]*)(\])")


def with_static_twin(error: PipelineError, contract, pipeline: str) -> PipelineError:
    """`error`, saying whether the op it gave up on, with dynamic dims, lowers once its dims are static.

    "failed to legalize operation 'torch.aten.relu'" reads the same whether the op has no lowering
    for its types (integer relu) or one that bails on a '?' dim (gelu): only the static twin
    (the module with every '?' made STATIC_TWIN_SIZE) tells, and the classifier reads its answer.
    A twin that does not parse or fails elsewhere says nothing.
    """
    failed = GAVE_UP.search(error.diagnostics)
    if not failed or "?" not in failed.group(2):
        return error
    op = failed.group(1)
    text = DYNAMIC_DIM.sub(lambda m: m.group(1) + m.group(2).replace("?", str(STATIC_TWIN_SIZE)) + m.group(3), str(contract))
    try:
        from torch_mlir import ir

        with contract.context:
            twin = ir.Module.parse(text).operation
        run_pipeline(twin, pipeline)
    except PipelineError as twin_error:
        again = GAVE_UP.search(twin_error.diagnostics)
        if not again or again.group(1) != op:
            return error
        said = f"{STATIC_TWIN} fails to legalize {op} too"
    except Exception:  # the twin is not valid IR (a size the program fixed elsewhere): no answer
        return error
    else:
        said = f"{STATIC_TWIN} lowers"
    return PipelineError(error.pipeline, f"{error.diagnostics}\n{said}")


class _BuffersInStateDict:
    """An ExportedProgram whose state_dict also holds its non-persistent buffers.

    torch.export keeps non-persistent buffers (transformers' `position_ids`)
    in `constants`, but torch-mlir's FX importer looks buffers up only in
    `state_dict` and fails with "Could not find state mapping for buffer".
    This view answers both places; the program itself is left untouched
    (it is shared with other backends).
    """

    def __init__(self, program, buffers: dict):
        self._program = program
        self.state_dict = {**program.state_dict, **buffers}

    def __getattr__(self, name):
        return getattr(self._program, name)


def exported_ops(program) -> list[str]:
    """The ATen ops of an exported graph, e.g. ["aten.add.Tensor", "aten.tanh.default"]."""
    ops = set()
    for node in program.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            ops.add(f"{node.target.namespace}.{node.target._opname}.{node.target._overloadname}")
    return sorted(ops)


def mutation_outputs(program) -> list[int | None]:
    """The leading outputs of a functionalized program that are new values of mutated state.

    torch-mlir's frozen import returns them before the user's outputs: the
    index of the mutated user input for each, None for a mutated buffer.
    """
    from torch.export.graph_signature import OutputKind

    signature = program.graph_signature
    inputs = list(signature.user_inputs)
    found = []
    for spec in signature.output_specs:
        if spec.kind == OutputKind.USER_INPUT_MUTATION:
            found.append(inputs.index(spec.target) if spec.target in inputs else None)
        elif spec.kind == OutputKind.BUFFER_MUTATION:
            found.append(None)
    return found


def unsigned_as_eager(outputs, case_run: CaseRun):
    """`outputs` with each int8 result viewed as uint8 where eager's is uint8.

    torch-mlir's backend contracts are signless (a `ui8` result of the torch
    IR is an `i8` tensor of the lowered module), so IREE and the TOSA
    reference model hand uint8 results back as int8: the same bits, the sign
    lost at the module's boundary. The contract stage checked that the IR
    declares eager's dtype for each output, so eager's dtype is the one the
    module computed; a wrong value still shows up as a numeric mismatch.
    """
    from torch.utils._pytree import tree_flatten

    flat = list(outputs) if isinstance(outputs, tuple) else [outputs]
    mutated = [case_run.inputs[0][i] if i is not None else None for i in case_run.extras.get("mutations") or []]
    eager = mutated + tree_flatten(case_run.expected[0])[0]
    if len(eager) != len(flat):
        return outputs  # a structure difference: the comparison reports it
    viewed = [
        out.view(torch.uint8) if getattr(out, "dtype", None) == torch.int8 and getattr(ref, "dtype", None) == torch.uint8 else out
        for out, ref in zip(flat, eager)
    ]
    return tuple(viewed) if isinstance(outputs, tuple) else viewed[0]


def not_saved_faithfully(program) -> str | None:
    """Why torch.export.save and load would not give back a program that decomposes as this one does, or None.

    The reader rebuilds symbols without what the tracer learnt about them: a
    program with a symbolic size (a dynamic dim, an unbacked size from
    .item()) decomposed again after loading gains runtime asserts torch-mlir
    cannot import; so does a lifted tensor constant, whose value a fresh
    trace knows and a loaded one does not (torch-mlir's
    NarrowTensorHorizontalModule_basic: narrow's start, read by .item(), folds
    to a slice fresh and becomes an unbacked size loaded); a higher-order
    op's operands come back as lists (its while_loop test). Of torch-mlir's
    1,828 tests and our 1,487 cases on tosa, those three were the only
    verdicts a loaded program changed; every program of these kinds is
    exported again instead. A decomposed program kept (CaseRun.kept) loses
    what its fake tensors knew of storage (which view has which base, storage
    offsets), from which torch-mlir's importer rewrites `as_strided`
    (fx_as_strided.py): loaded, its AtenAsStridedAfterAliasDetachModule_basic
    gave a wrong answer and AtenAsStridedAfterSliceStepModule_basic IR
    iree-compile rejects. One with an op of several tensor results does not
    import at all (split_with_sizes, 18 of 3,324 pairs): the reader gives its value back
    as a tuple without tensor_meta, and the importer types only a list
    ("Could not deduce type from value info"). Such a decomposed program is
    not kept (not_kept_decomposed); what torch.export made is, since it is
    decomposed again after loading, which makes those fake tensors afresh.
    """
    if program.range_constraints:
        return "it has symbolic sizes"
    if program.constants:  # a fresh trace knows their values (narrow's start read by .item()), a loaded one not
        return "it lifts tensor constants"
    for node in program.graph.nodes:
        if isinstance(node.target, torch._ops.HigherOrderOperator):
            return f"it calls the higher-order op {node.target.name()}"
    return None


def save_program(program, path, unfaithful: str | None) -> None:
    """torch.export.save, unless there is a reason the program would not come back as it is (ValueError)."""
    if unfaithful:
        raise ValueError(f"not kept: {unfaithful}")
    torch.export.save(program, path)


def not_kept_decomposed(program) -> str | None:
    """Why a decomposed program, imported after torch.export.save and load, would not import as it does now
    (not_saved_faithfully's reasons and two more, since it is imported as it is loaded), or None."""
    for node in program.graph.nodes:
        if isinstance(node.target, torch._ops.OpOverload) and node.target.name().startswith("aten::as_strided"):
            return f"it calls {node.target.name()}, which torch-mlir imports from storage its reader does not restore"
        if isinstance(node.meta.get("val"), (list, tuple)):
            return f"{node.name} has several results, which its reader types otherwise"
    return not_saved_faithfully(program)


class SavedProgram:
    """What torch.export made, as the compile cache kept it: read from its file when first needed.

    A file that does not load (written by another torch, or not a program)
    is no failure of the case: it is exported again, as a cold run would.
    """

    def __init__(self, path: Path, export_again: Callable):
        self.path = path
        self.export_again = export_again
        self._program = None

    def program(self):
        if self._program is None:
            try:
                self._program = load_exported(self.path)
            except Exception as e:
                print(f"conformance: the exported program kept does not load ({type(e).__name__}); exporting again", file=sys.stderr)
                self._program = self.export_again()
        return self._program


def exported_program(value):
    """An ExportedProgram from a stage's value: torch.export's own, or the cache's SavedProgram read."""
    return value.program() if isinstance(value, SavedProgram) else value


def load_exported(path):
    """An ExportedProgram torch.export.save wrote, as torch.export left it.

    torch's reader (torch 2.13, _export/serde/serialize.py) makes the
    program's fake tensors in a fake mode of its own, which, unlike the mode
    torch.export traces in, runs no fallback kernel for an op that has no
    meta rule: decomposing a loaded fake_quantize_per_tensor_affine then
    fails where the program fresh from export decomposes. The loaded
    program's mode is set as export's.
    """
    import logging
    import warnings

    from torch._export.utils import _detect_fake_mode_from_gm

    # What torch's reader says of its own format (deprecations, unused symbols) is not the case's: kept out
    # of the stage's output, where it would land in the details of a later failure.
    reader = logging.getLogger("torch._export.serde.serialize")
    level = reader.level
    reader.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            program = torch.export.load(path)
    finally:
        reader.setLevel(level)
    mode = _detect_fake_mode_from_gm(program.graph_module)
    if mode is not None:
        mode.allow_fallback_kernels = True
        mode.fake_tensor_converter.export = True
    return program


def import_program(program, case_run: CaseRun | None = None):
    """An ExportedProgram (already decomposed) -> a torch-dialect module in its own context.

    With `case_run`, records in its extras which leading outputs are mutated
    inputs (the runner compares those with the inputs as eager left them).
    """
    if case_run is not None:
        case_run.extras["mutations"] = mutation_outputs(program)
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_dialect
    from torch_mlir.extras.fx_importer import FxImporter, RefTracker

    from conformance.toolchain.fx_literals import LiteralsFromBytes

    hidden = {
        name: program.constants[name]
        for name in program.graph_signature.inputs_to_buffers.values()
        if name not in program.state_dict and name in getattr(program, "constants", {})
    }
    if hidden:
        # Said on stderr so it is in the stage's captured output: handled, not hidden.
        print(f"conformance: passing non-persistent buffers {sorted(hidden)} to torch-mlir's importer", file=sys.stderr)
        program = _BuffersInStateDict(program, hidden)
    context = ir.Context()
    torch_dialect.register_dialect(context)
    tracker = RefTracker()
    importer = FxImporter(context=context, py_attr_tracker=tracker, hooks=LiteralsFromBytes(tracker))
    try:
        importer.import_frozen_program(program, func_name="main")
    except Exception as error:
        node = _node_being_imported(error)
        if node is None:
            raise
        raise ImporterError(node, error) from error
    return importer.module


class ImporterError(Exception):
    """The FX importer failed on one graph node: the message names it, as its own error (an assertion) does not."""

    def __init__(self, node, error: BaseException):
        self.node_name = node.name
        self.op = fx_op_name(node.target)
        kind = type(error).__name__
        super().__init__(f"torch-mlir's FX importer failed on node {node.name} ({self.op}): {kind}: {error}")


def fx_op_name(target) -> str:
    """An FX node's ATen op as torch-mlir's IR spells it: aten.index.Tensor, aten.relu (no `.default`)."""
    name = str(target)
    return name.removesuffix(".default")


def _node_being_imported(error: BaseException):
    """The FX node the importer was importing when `error` was raised (its import_nodes loop's `node`), or None."""
    import torch.fx

    tb = error.__traceback__
    found = None
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "import_nodes":
            candidate = tb.tb_frame.f_locals.get("node")
            if isinstance(candidate, torch.fx.Node):
                found = candidate  # the innermost loop wins (a higher-order op's body is imported by a nested loop)
        tb = tb.tb_next
    return found


# -- the type check: the shape library's promise ---------------------------------

def declared_results(contract) -> list[tuple[str, list[int | None] | None, str | None, str | None]]:
    """(type text, dims with None for '?', MLIR dtype name, producing op) of each result of @main."""
    main = next(op for op in contract.regions[0].blocks[0].operations if op.operation.name == "func.func")
    returned = main.regions[0].blocks[-1].operations[-1]  # func.return
    out = []
    for value in returned.operands:
        text = str(value.type)
        parsed = dtypes.parse_vtensor(text)
        owner = value.owner  # an op, or a block for a function argument returned as is
        producer = owner.operation.name if hasattr(owner, "operation") else None
        if parsed is None:
            out.append((text, None, None, producer))
            continue
        dims, element = parsed
        out.append((text, [None if d == "?" else int(d) for d in dims], element, producer))
    return out


def check_result_types(contract, case_run: CaseRun, as_exported: Callable[[torch.Tensor], torch.Tensor] | None = None) -> None:
    """Raise TYPE_REFINEMENT when a declared result shape or dtype disagrees with the reference (eager, or stored).

    `as_exported` maps a reference value to the one the frontend's program
    returns for it where the exporter represents it otherwise (torch.onnx
    writes a complex tensor as a real one): the IR promises that value.
    """
    from torch.utils._pytree import tree_flatten

    given = [t for t in tree_flatten(case_run.expected[0])[0] if isinstance(t, torch.Tensor)]
    leaves = [as_exported(t) for t in given] if as_exported is not None else given
    reference = case_run.case.reference.label  # eager, or a suite's stored outputs
    judge = "PyTorch" if reference == "eager" else "the expected outputs"
    declared = declared_results(contract)
    if len(declared) != len(leaves):
        return  # a structure difference: the comparison reports it with the outputs in hand
    for index, ((text, dims, dtype_name, producer), eager) in enumerate(zip(declared, leaves)):
        if dims is None:
            continue  # not a value tensor with known type: nothing promised
        shape_ok = len(dims) == eager.dim() and all(d is None or d == s for d, s in zip(dims, eager.shape))
        dtype = dtypes.from_torch_mlir(dtype_name)
        dtype_ok = dtype is None or dtype == eager.dtype
        if shape_ok and dtype_ok:
            continue
        ir_says = f"{dtype_name}[{','.join('?' if d is None else str(d) for d in dims)}]"
        eager_gives = _type_text(eager)
        if eager is not given[index]:
            eager_gives += f" ({_type_text(given[index])} as the exporter writes it)"
        op = producer.removeprefix("torch.") if producer and producer.startswith("torch.") else None
        raise StageFailure(
            Code.TYPE_REFINEMENT,
            f"output {index}: IR says {ir_says}, {reference} gives {eager_gives}"
            f"{f' (result of {op})' if op else ''}: a shape or dtype function disagrees with {judge}",
            op=op,
            details=f"declared result types: {[d[0] for d in declared]}; {reference}: {[describe(t) for t in leaves]}",
        )


def _type_text(tensor: torch.Tensor) -> str:
    """`f32[3,4]`: a tensor's dtype (torch-mlir's name for it) and shape, as the type check reports them."""
    return f"{dtypes.torch_mlir_name(tensor.dtype) or tensor.dtype}[{','.join(map(str, tensor.shape))}]"
