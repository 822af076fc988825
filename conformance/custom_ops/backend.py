"""The all-ops-to-custom backend: every torch op becomes a tosa.custom, run back on ATen.

    export   torch.export (shared with every torch-mlir backend)
    import   torch-mlir's FX importer with no decomposition table (the graph
             is functionalized first only when it mutates); its own shared
             key: the IR differs from the default import's
    convert  torch dialect -> func + tosa.const + tosa.custom (contract v1);
             an op that cannot be converted fails the case with
             CUSTOM_OP_UNCONVERTIBLE, naming the op and the kind of reason
    verify   valid TOSA (strict, verify.TARGET), no torch dialect, every
             tosa.custom decodes
    run      the interpreter: each tosa.custom calls torch.ops.<operator_name>

A case that passes proves that every op's whole information (name,
overload, every operand) survived the trip through TOSA IR. What happened
to each op is in the Result's extras (`custom_ops`), pass or fail.
"""

from __future__ import annotations

from conformance.backends.protocol import CaseRun, StageFailure, shared
from conformance.custom_ops import contract, convert, interpreter, verify
from conformance.custom_ops.encode import Unconvertible
from conformance.custom_ops.reasons import Reason
from conformance.taxonomy import Code
from conformance.toolchain.decompose import decompose
from conformance.toolchain.mlir import write_ir
from conformance.toolchain.torch_mlir import ImporterError, TorchMlirBackend, exported_program, import_program

REPLAY = ["python", "-m", "conformance.custom_ops", "input.mlir"]  # convert + verify, outside the framework


class TosaCustomBackend(TorchMlirBackend):
    name = "tosa-custom"
    description = "every torch op -> tosa.custom (contract v1), verified, run back on ATen by an interpreter"
    stages = ("export", "import", "convert", "verify", "run")

    @shared("import:no-decompositions")
    def import_(self, program, case_run: CaseRun):
        # No decomposition table, as torch_mlir.fx.export_and_import(...,
        # decomposition_table={}) does: the exported graph is imported as it
        # is. A graph that mutates (in-place ops, input or buffer mutations)
        # is functionalized first, by run_decompositions with an empty table,
        # which also rewrites what torch.export itself always rewrites
        # (aten.to -> aten._to_copy).
        shared_program = program = exported_program(program)  # (the cache's SavedProgram, for a backend that caches)
        if is_functional(program):
            program = _FreshGraph(program)  # the importer rewrites the graph it imports; the export is shared
        else:
            case_run.extras["functionalized"] = True
            program = decompose(program, {})
        try:
            return import_program(program, case_run)
        except ImporterError as e:  # the importer names the node it failed on; its own error is an assertion
            ops = weight_list_ops(shared_program) if "Heterogeneous lists" in str(e) else []
            if not ops:
                raise
            # Not a conversion failure, but the conversion's question still has an answer for these ops.
            reason = (
                "it takes a list of weights, which torch-mlir's FX importer cannot import (it freezes weights into "
                "literals, and a torch list cannot hold literals) unless the op is decomposed"
            )
            sentences = {op: Unconvertible(op, Reason.UNIMPORTABLE_WEIGHT_LIST, reason).sentence for op in ops}
            case_run.extras.update(
                {
                    "custom_ops": {op: Reason.UNIMPORTABLE_WEIGHT_LIST for op in ops},
                    "custom_op_reasons": sentences,
                    "custom_op_contract": contract.VERSION,
                }
            )
            raise StageFailure(Code.CUSTOM_OP_UNCONVERTIBLE, sentences[ops[0]], op=ops[0]) from None

    def convert(self, module, case_run: CaseRun):
        case_run.reproduce("convert", {"input.mlir": lambda path: write_ir(module.operation, path)}, REPLAY)
        converted, fates = convert.to_custom_module(module)
        case_run.extras.update(fates.extras())
        if converted is None:
            first = fates.failures[0]
            raise StageFailure(
                Code.CUSTOM_OP_UNCONVERTIBLE,
                fates.summary(),
                op=first.op,
                details="\n".join(f.sentence for f in fates.failures),
            )
        return converted

    def verify(self, module, case_run: CaseRun):
        counts = verify.verify(module, only_custom=True)
        case_run.extras["custom_op_count"] = counts.get("tosa.custom", 0)
        return module

    def run(self, module, inputs, case_run: CaseRun):
        program = _program(module, case_run)
        try:
            outputs = program.run(list(inputs))
        except interpreter.InterpreterError as e:
            raise StageFailure(Code.RUNTIME_ERROR, f"the custom-op interpreter failed: {e}", op=e.op) from None
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


class _FreshGraph:
    """An ExportedProgram seen with a copy of its graph.

    torch-mlir's import_frozen_program replaces the weight placeholders of
    the graph it is given, in place; the exported program is shared with
    every torch-mlir backend of the run, so it is imported through a copy
    (run_decompositions makes a new program, which needs no copy).
    """

    def __init__(self, program):
        import torch

        self._program = program
        graph = torch.fx.Graph()
        graph.output(graph.graph_copy(program.graph, {}))
        # Owned by a module, as the importer's rewrites (aten.as_strided) need.
        self.graph = torch.fx.GraphModule(program.graph_module, graph).graph

    def __getattr__(self, name):
        return getattr(self._program, name)


def is_functional(program) -> bool:
    """Whether an ExportedProgram's graph is made of pure ATen ops only (nothing to functionalize)."""
    import operator

    import torch

    signature = program.graph_signature
    if signature.buffers_to_mutate or signature.user_inputs_to_mutate:
        return False
    for node in program.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        if not isinstance(node.target, torch._ops.OpOverload):
            return False  # a higher-order op (autocast, set_grad_enabled, cond...): let torch.export inline it
        if any(a.alias_info is not None and a.alias_info.is_write for a in node.target._schema.arguments):
            return False
    return True


def weight_list_ops(program) -> list[str]:
    """The ops of the graph taking a list holding weights (parameters, buffers), as aten.lstm's params."""
    import torch

    signature = program.graph_signature
    frozen = set(signature.inputs_to_parameters) | set(signature.inputs_to_buffers)
    found = []
    for node in program.graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        for arg in [*node.args, *node.kwargs.values()]:
            if not isinstance(arg, (list, tuple)):
                continue
            nodes = [a for a in arg if isinstance(a, torch.fx.Node)]
            weights = [a for a in nodes if a.op == "placeholder" and a.name in frozen]
            if weights:
                target = node.target
                found.append(f"{target.namespace}.{target._opname}.{target._overloadname}")
                break
    return sorted(set(found))


def _program(module, case_run: CaseRun) -> interpreter.Program:
    """The interpreter's reading of `module`, done once for all input sets of the case."""
    cached = case_run.notes.get("custom_program")
    if cached is None or cached[0] is not module:
        try:
            cached = (module, interpreter.Program.load(module))
        except interpreter.InterpreterError as e:
            raise StageFailure(Code.RUNTIME_ERROR, f"the custom-op interpreter cannot load the module: {e}") from None
        case_run.notes["custom_program"] = cached
    return cached[1]
