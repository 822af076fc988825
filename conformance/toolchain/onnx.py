"""The ONNX frontend: ONNX models through torch-mlir's ONNX importer to the torch backend contract.

    export      a torch case: torch.export (as the torch frontend runs it: its
                program, where the job has it and its sizes are static), then
                torch.onnx's dynamo exporter; an ONNX case: its own model, as it is
    import      onnx.checker, ONNX shape inference with data propagation, then
                torch-mlir's ONNX importer, as torch-mlir-import-onnx does it:
                one `torch.operator "onnx.<Op>"` per node
    onnx2torch  func.func(convert-torch-onnx-to-torch). An op torch-mlir has no
                conversion for at all is left in place without a word, so the
                stage looks for what is left; an op whose conversion refuses the
                node fails the pass
    contract    torch-onnx-to-torch-backend-pipeline, keeping the lowering's
                backend-legal ops whole as the torch frontend's contract does,
                then the type check against the reference (as it does too);
                `@batched`: one pipeline run for the batch's cases together
    lower       the torch frontend's: torch -> the backend's dialect (its
                lowering's `pipeline`)

The first four are `@shared` by the ONNX backends (the contract by those
whose lowerings keep the same ops backend-legal). Nodes without a name are
named `<OpType>_<i>` before import: the importer makes a node's name its
location, so every later diagnostic points at the node it is about.

OnnxIreeBackend compiles and runs the lowered module as the IREE backends
do, with two runtime details of ONNX's own: int4/uint4 graph inputs and
outputs cannot cross IREE's Python runtime (compiled, then SKIP), and
unsigned results, which IREE hands back as signed, are read as the
reference's unsigned dtype.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

import torch

from conformance.backends.protocol import BatchFailure, CaseRun, batched, shared
from conformance.cases.spec import Case, CaseUnavailable
from conformance.onnx_graph import kinds_and_elements, nodes, type_text
from conformance.toolchain import decompose
from conformance.toolchain.export_together import decomposed_together
from conformance.toolchain.iree import IreeBackend
from conformance.toolchain.mlir import opt_command, run_pipeline, run_pipeline_together, walk, write_ir
from conformance.toolchain.torch_mlir import TORCH_EXPORT, TorchMlirBackend, check_result_types, contract_key, legal_ops_option

IMPORT_TOOL = "torch-mlir-import-onnx"
ONNX_TO_TORCH = "builtin.module(func.func(convert-torch-onnx-to-torch))"
CONTRACT = "torch-onnx-to-torch-backend-pipeline"
# The line the onnx2torch stage raises with, naming the ONNX ops left in the module
# (read by conformance.classify.onnx).
UNCONVERTED_ONNX = "ONNX ops left unconverted:"
# Graph inputs and outputs whose types cannot cross torch-mlir's backend contract
# and IREE's function ABI, which take tensors only.
CONTAINERS = ("sequence_type", "map_type", "sparse_tensor_type")


class UnconvertedOps(Exception):
    """convert-torch-onnx-to-torch left ONNX ops in place: torch-mlir has no conversion for them."""


class OnnxFrontend(TorchMlirBackend):
    """A torch-mlir backend fed ONNX: torch cases through torch.onnx.export, ONNX cases as they are."""

    stages = ("export", "import", "onnx2torch", "contract", "lower", "run")
    formats = ("torch", "onnx")
    frontend_description = "ONNX (torch.onnx.export, or the case's model) -> torch-mlir"
    frontend_tools = {"export": "torch.onnx exporter", "import": "torch-mlir ONNX importer",
                      "onnx2torch": "torch-mlir ONNX-to-torch conversion", "contract": "torch-mlir backend contract"}

    def not_applicable(self, case: Case) -> str | None:
        reason = super().not_applicable(case)
        if reason is None and case.format == "onnx":
            reason = unsupported_graph(case.build())
        return reason

    def warm_up(self) -> None:
        super().warm_up()
        _exporter_registry()  # torch.onnx's exporter imported and its registry built (0.7 s), once for all children

    @shared("onnx.export", given=(TORCH_EXPORT,))
    def export(self, program, case_run: CaseRun):
        if case_run.case.format == "onnx":
            return case_run.module  # the case is the model
        if program is None or program.range_constraints:
            # None: no torch frontend of the job exported the case. A program with symbolic sizes is exported
            # again, as its decompositions share its ShapeEnv: torch.onnx's leaves symbols there that a later one
            # of the torch frontend trips on (nonzero: PendingUnbackedSymbolNotFound in tosa-custom's import).
            program = self.export_case(case_run)  # torch.export, as the torch frontend runs it
        return torch_to_onnx(program)  # (a static program it leaves as it was, for the torch frontend's later stages)

    # What the compile cache keeps apart is the ONNX model (torch.export, then torch.onnx's exporter): its bytes.
    def export_store(self, model, path):
        path.write_bytes(model.SerializeToString())

    def export_load(self, path, case_run: CaseRun):
        import onnx

        return onnx.ModelProto.FromString(path.read_bytes())

    @shared("onnx.import")
    def import_(self, model, case_run: CaseRun):
        model = with_node_names(model)
        case_run.extras["onnx_ops"] = sorted({node.op_type for node in nodes(model.graph)})
        case_run.reproduce(
            "import",
            {"model.onnx": lambda path: path.write_bytes(model.SerializeToString())},
            [IMPORT_TOOL, "model.onnx", "-o", "imported.mlir"],
        )
        return import_model(model)

    @shared("onnx2torch")
    def onnx2torch(self, imported, case_run: CaseRun):
        case_run.reproduce(
            "onnx2torch", {"input.mlir": lambda path: write_ir(imported, path)}, opt_command(ONNX_TO_TORCH, "input.mlir")
        )
        converted = imported.clone()
        run_pipeline(converted, ONNX_TO_TORCH)
        left = unconverted_ops(converted)
        if left:
            raise UnconvertedOps(f"{UNCONVERTED_ONNX} {', '.join(left)}\n" + "\n".join(left.values()))
        return converted

    @shared(contract_key("onnx.contract"))
    @batched
    def contract(self, converted: list, case_runs: list[CaseRun]) -> list:
        # One pipeline run for the batch: torch-mlir's shape refinement parses its library on each run.
        options = " ".join(legal_ops_option(self.backend_legal_ops))
        pipeline = f"builtin.module({CONTRACT}{{{options}}})" if options else f"builtin.module({CONTRACT})"
        for module, case_run in zip(converted, case_runs):
            case_run.reproduce(
                "contract", {"input.mlir": lambda path, module=module: write_ir(module, path)}, opt_command(pipeline, "input.mlir")
            )
        contracts = run_pipeline_together(converted, pipeline)
        guilty, first = [], None
        for index, (contract, case_run) in enumerate(zip(contracts, case_runs)):
            try:
                check_result_types(contract, case_run, as_exported=complex_as_real)
            except Exception as e:
                guilty.append(index)
                first = first or e
        if guilty:
            raise BatchFailure(guilty, first)
        return contracts


class OnnxIreeBackend(OnnxFrontend, IreeBackend):
    """The ONNX frontend, a torch-mlir lowering `pipeline`, compiled and run by IREE as IreeBackend does."""

    stages = ("export", "import", "onnx2torch", "contract", "lower", "compile", "run")

    def run(self, entry, inputs: list[torch.Tensor], case_run: CaseRun):
        if case_run.case.format == "onnx":
            reason = unrunnable_graph(case_run.module)
            if reason:
                raise CaseUnavailable(reason, skip=True)
        outputs = super().run(entry, [self.module_value(t) for t in inputs], case_run)
        return read_as_reference(outputs, case_run.expected[0])

    def module_value(self, tensor: torch.Tensor) -> torch.Tensor:
        return complex_as_real(tensor)


# -- export --------------------------------------------------------------------


@functools.cache
def _exporter_registry():
    from torch.onnx import _constants
    from torch.onnx._internal.exporter import _registration

    return _registration.ONNXRegistry.from_torchlib(opset_version=_constants.ONNX_DEFAULT_OPSET)


def torch_to_onnx(program):
    """`torch.onnx.export(program, dynamo=True).model_proto`, with its registry built once per process.

    torch.onnx.export rebuilds its registry of ONNX decompositions on every
    call: 4 of the 5 s it takes to export one op here. With torch pinned, the
    exporter it calls with that registry is called directly, with a kept one
    (the same model comes out: same opset, same nodes).
    """
    from torch.onnx import _constants
    from torch.onnx._internal.exporter import _core

    registry = _exporter_registry()
    with decompose.set_up_remembered(), onnx_table_remembered(), decomposed_with_its_batch(program, registry) as program:
        exported = _core.export(program, registry=registry, opset_version=_constants.ONNX_DEFAULT_OPSET, optimize=True, verbose=False)
    return exported.model_proto


@contextlib.contextmanager
def decomposed_with_its_batch(program, registry):
    """`program`, or, for a program split from its batch's joint export, its part of the joint program
    decomposed with the exporter's table (export_together.decomposed_together), with the exporter's own
    decomposition step left out for it.

    The exporter's first step (`decompose_with_registry`) is a run_decompositions with the table of every ATen
    decomposition its registry does not translate itself: 87 % of an op's export here, about 40 % of it a cost
    per call (export_together.decomposed_together). Done for the batch at once, and as the exporter does it (the same table, under the same
    config), each case's part is the program the exporter would have made of the case's own: the models'
    bytes are the same (tests/test_export_together.py)."""
    from torch.onnx._internal.exporter import _decomp, _fx_passes

    table = _decomp.create_onnx_friendly_decomposition_table(set(_decomp.get_onnx_implemented_overloads(registry)))
    with torch.fx.experimental._config.patch(backed_size_oblivious=True):  # as _core's preparation decomposes
        piece = decomposed_together(program, table, decompose.table_identity(table), exact_names=True)  # the model names nodes
    if piece is None:
        yield program
        return
    step = _fx_passes.decompose_with_registry
    _fx_passes.decompose_with_registry = lambda decomposed, _registry: decomposed
    try:
        yield piece
    finally:
        _fx_passes.decompose_with_registry = step


@contextlib.contextmanager
def onnx_table_remembered():
    """torch.onnx's decomposition table, built once per registry rather than on every export.

    The exporter decomposes with every ATen decomposition whose op its
    registry does not translate itself, a table it rebuilds on each call
    (0.09 s, with the CIA census and patch that decompose.set_up_remembered
    spares: 0.37 of the 0.43 s an op's ONNX export took). It is rebuilt here
    only when what it is made from changes: the registry's ops, torch's
    decompositions, the CIA registrations.
    """
    from torch.onnx._internal.exporter import _decomp

    build = _decomp.create_onnx_friendly_decomposition_table

    def remembered(onnx_registered_ops):
        key = (frozenset(onnx_registered_ops), len(torch._decomp.decomposition_table), decompose.registrations_key())
        if _ONNX_TABLE.get("key") != key:
            _ONNX_TABLE.update(key=key, table=build(onnx_registered_ops))
        return dict(_ONNX_TABLE["table"])  # a copy: the kept one stays as built, whatever its user does

    _decomp.create_onnx_friendly_decomposition_table = remembered
    try:
        yield
    finally:
        _decomp.create_onnx_friendly_decomposition_table = build


_ONNX_TABLE: dict = {}  # the last table torch.onnx's exporter built, and what it was built from


# -- import --------------------------------------------------------------------


def with_node_names(model):
    """`model`, or a copy whose unnamed nodes are named `<OpType>_<i>` (i: the node's place in `nodes`)."""
    if all(node.name for node in nodes(model.graph)):
        return model
    import onnx

    named = onnx.ModelProto()
    named.CopyFrom(model)
    taken = {node.name for node in nodes(named.graph)}
    for index, node in enumerate(nodes(named.graph)):
        if not node.name:
            name = f"{node.op_type}_{index}"
            while name in taken:
                name += "_"
            node.name = name
            taken.add(name)
    return named


def import_model(model):
    """An ONNX model as a torch-dialect module (an Operation in a context of its own), its function named @main.

    The same steps as torch-mlir-import-onnx with its defaults: the checker,
    shape inference with data propagation, the importer's default config
    (its function-expansion lists), verification.
    """
    import onnx
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_dialect
    from torch_mlir.extras import onnx_importer

    onnx.checker.check_model(model)
    inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    context = ir.Context()
    torch_dialect.register_dialect(context)
    info = onnx_importer.ModelInfo(inferred, config=onnx_importer.Config())
    module = info.create_module(context=context).operation
    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    module.verify()
    # The function is named after the graph, any string; IREE and the reproducers call @main.
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func" and "sym_visibility" not in op.operation.attributes:
            op.operation.attributes["sym_name"] = ir.StringAttr.get("main", context)
    return module


def unconverted_ops(module) -> dict[str, str]:
    """{ONNX op name: the first of its ops, as printed with its location}, for the ops a conversion left behind."""
    left: dict[str, str] = {}
    for op in walk(module):
        if op.name == "torch.operator":
            name = str(op.attributes["name"]).strip('"')
            if name.startswith("onnx.") and name not in left:
                left[name] = f"{op.location}: {op.get_asm(large_elements_limit=16).strip().splitlines()[0]}"
    return left


# -- what the importer, the backend contract and IREE's runtime take ----------------


def _graph_values(model):
    """(what, value info) for each graph input and output: ("graph input 'x'", ValueInfoProto)."""
    for where, values in (("graph input", model.graph.input), ("graph output", model.graph.output)):
        for value in values:
            yield f"{where} '{value.name}'", value


@functools.cache
def _importer_element_types() -> frozenset[int]:
    """The ONNX element types torch-mlir's ONNX importer has an MLIR type for."""
    from torch_mlir.extras import onnx_importer

    return frozenset(onnx_importer.ELEM_TYPE_TO_IR_TYPE_CB)


def unsupported_graph(model) -> str | None:
    """Why no torch-mlir backend can take `model` at all (a SKIP before any stage), or None.

    Graph inputs and outputs must be tensors (an optional tensor is fed as a
    tensor) of an element type the importer has and some lowering takes;
    initializers, of an element type the importer has.
    """
    from onnx import TensorProto

    known = _importer_element_types()
    for what, value in _graph_values(model):
        kinds, elements = kinds_and_elements(value.type)
        text = type_text(value.type)
        if kinds & set(CONTAINERS) or not kinds & {"tensor_type"}:
            return f"{what} is {text}: torch-mlir's backend contract and IREE's functions take tensors only"
        if TensorProto.STRING in elements:
            return f"{what} is {text}: no torch-mlir lowering takes strings (!torch.str), nor does IREE's runtime"
        missing = sorted(elements - known)
        if missing:
            return f"{what} is {text}: torch-mlir's ONNX importer has no MLIR type for {TensorProto.DataType.Name(missing[0])}"
    for initializer in model.graph.initializer:
        if initializer.data_type not in known:
            name = TensorProto.DataType.Name(initializer.data_type)
            return f"initializer '{initializer.name}' is tensor<{name}>: torch-mlir's ONNX importer has no MLIR type for {name}"
    return None


def unrunnable_graph(model) -> str | None:
    """Why IREE's Python runtime cannot run `model` once compiled (a SKIP at `run`), or None."""
    from onnx import TensorProto

    sub_byte = {TensorProto.INT4, TensorProto.UINT4}
    for what, value in _graph_values(model):
        _, elements = kinds_and_elements(value.type)
        if elements & sub_byte:
            return f"{what} is {type_text(value.type)}: IREE's Python runtime cannot pass int4 or uint4 buffers (compiled, not run)"
    return None


# -- run -------------------------------------------------------------------------


def complex_as_real(tensor):
    """A complex tensor as torch.onnx's exporter writes it, a real one with a trailing dim of 2 (view_as_real); any other value as it is.

    The exporter gives a complex graph input or output that type and shape:
    the model takes, and promises, the real view of the case's value.
    """
    if isinstance(tensor, torch.Tensor) and tensor.is_complex():
        return torch.view_as_real(tensor.resolve_conj())
    return tensor


def read_as_reference(outputs: Any, expected: Any) -> Any:
    """`outputs`, each read as its reference's type where the model could only return it otherwise.

    IREE's integers are signless and its runtime returns them signed: a uint8
    result comes back as int8 holding the same bytes. A complex result comes
    back as the real tensor torch.onnx's exporter made of it (complex_as_real).
    """
    from torch.utils._pytree import tree_flatten, tree_unflatten

    flat, spec = tree_flatten(outputs)
    reference, _ = tree_flatten(expected)
    if len(flat) != len(reference):
        return outputs  # a structure difference: the comparison reports it
    return tree_unflatten([_read_as(actual, wanted) for actual, wanted in zip(flat, reference)], spec)


def _read_as(actual, wanted):
    if not (isinstance(actual, torch.Tensor) and isinstance(wanted, torch.Tensor)):
        return actual
    if wanted.is_complex() and actual.is_floating_point() and tuple(actual.shape) == (*wanted.shape, 2):
        # A fresh tensor, not .contiguous(): an empty one counts as contiguous whatever its strides, which view_as_complex checks.
        return torch.view_as_complex(torch.empty(actual.shape, dtype=actual.dtype).copy_(actual))
    unsigned = wanted.dtype in (torch.uint8, torch.uint16, torch.uint32, torch.uint64)
    signed = actual.dtype in (torch.int8, torch.int16, torch.int32, torch.int64)
    if unsigned and signed and actual.element_size() == wanted.element_size():
        return actual.view(wanted.dtype)
    return actual
