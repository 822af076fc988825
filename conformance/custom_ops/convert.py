"""torch dialect -> `tosa.custom`, on torch-mlir's MLIR Python bindings.

Two drivers share one encoder (`encode_op`, contract v1):

  to_custom_module(module)        every torch.aten/torch.prims op of @main
                                  becomes a tosa.custom, torch.vtensor.literal
                                  becomes tosa.const; a new module, in the
                                  same context, holding only func and tosa ops;
  convert_selected(module, ops)   in place, only the listed ops become
                                  tosa.custom (bridged to the surrounding
                                  torch IR by torch_c casts), for torch-mlir's
                                  TOSA pipeline to lower the rest.

Every op's fate is recorded (converted, erased assertion, or an
unconvertible kind with a sentence naming the op and the reason); nothing is
dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.custom_ops import constants, contract
from conformance.custom_ops.encode import (
    ASSERTIONS,
    CONTROL_FLOW,
    MUTATING,
    STRUCTURAL,
    Encoded,
    Unconvertible,
    empty_of,
    tensor_type,
    check_assertion,
    encode_op,
    tosa_type,
)
from conformance.custom_ops.torch_ir import fold, op_name, producer_of
from conformance.custom_ops.reasons import CONVERTED, ERASED, FOLDED, Reason


@dataclass
class Fates:
    """What happened to each op name of a module, and the sentences of the unconvertible ones."""

    status: dict[str, str] = field(default_factory=dict)  # op -> converted | erased-assertion | kind
    sentences: dict[str, str] = field(default_factory=dict)  # op -> why not (first occurrence)
    failures: list[Unconvertible] = field(default_factory=list)  # in IR order
    counts: dict[str, int] = field(default_factory=dict)  # op -> occurrences

    def record(self, op: str, status: str) -> None:
        self.counts[op] = self.counts.get(op, 0) + 1
        if self.status.get(op) in (None, CONVERTED, ERASED, FOLDED):  # an unconvertible occurrence wins
            self.status[op] = status

    def fail(self, error: Unconvertible) -> None:
        self.record(error.op, error.kind)
        self.sentences.setdefault(error.op, error.sentence)
        self.failures.append(error)

    def extras(self) -> dict:
        return {
            "custom_ops": dict(sorted(self.status.items())),
            "custom_op_reasons": dict(sorted(self.sentences.items())),
            "custom_op_contract": contract.VERSION,
        }

    def summary(self) -> str:
        """One sentence for a StageFailure: the first unconvertible op and how many more."""
        first = self.failures[0]
        others = sorted({(f.op, f.kind) for f in self.failures if f.op != first.op})
        tail = ""
        if others:
            listed = ", ".join(f"{op} ({kind})" for op, kind in others[:4])
            more = f" and {len(others) - 4} more" if len(others) > 4 else ""
            tail = f"; also unconvertible: {listed}{more}"
        return first.sentence + tail


# -- driver 1: the whole module ---------------------------------------------------------

def _main(module):
    return next(op for op in module.body.operations if op.operation.name == "func.func")


def to_custom_module(module) -> tuple[Any | None, Fates]:
    """Every op of @main -> tosa; returns (new module or None if anything is unconvertible, fates)."""
    from torch_mlir import ir
    from torch_mlir.dialects import func as func_d
    from torch_mlir.dialects import tosa

    fates = Fates()
    main = _main(module)
    block = main.regions[0].blocks[0]
    context = module.context
    with context, ir.Location.unknown(context):
        new = ir.Module.create()
        arg_types = []
        for i, arg in enumerate(block.arguments):
            arg_types.append(_boundary_type(fates, arg, "argument", i))
        returned = block.operations[len(block.operations) - 1]
        env: dict = {}  # torch Value -> new Value
        cache: dict = {}
        with ir.InsertionPoint(new.body):
            result_types = [_boundary_type(fates, v, "result", i) for i, v in enumerate(returned.operation.operands)]
            usable = all(t is not None for t in arg_types + result_types)
            function = func_d.FuncOp("main", ir.FunctionType.get(arg_types, result_types) if usable else ir.FunctionType.get([], []))
            entry = function.add_entry_block()
        if usable:
            env.update(zip(block.arguments, entry.arguments))
        with ir.InsertionPoint(entry):
            for op in block.operations:
                name = op.operation.name
                if name == "func.return":
                    if not fates.failures:
                        missing = [v for v in op.operation.operands if v not in env]
                        if missing:
                            raise RuntimeError(f"@main returns {missing[0]}, which the conversion did not produce")
                        func_d.ReturnOp([env[v] for v in op.operation.operands])
                    continue
                if name in STRUCTURAL or name == "torch.prim.ListUnpack":
                    continue  # read through by the ops using them (ListUnpack: by its producer)
                if name == "torch.vtensor.literal":
                    try:
                        if empty_of("torch.vtensor.literal", op.result, "value") is not None:
                            continue  # no data: the ops using it spell it in their attributes
                        const_type = ir.Type.parse(tensor_type("torch.vtensor.literal", op.result, "value"))
                    except Unconvertible as e:
                        fates.fail(e)
                        continue
                    attr = _retype(op.operation.attributes["value"], const_type, module, cache)
                    env[op.result] = tosa.ConstOp(attr, results=[const_type]).result
                    continue
                _convert_one(op, name, fates, env)
        if fates.failures:
            return None, fates
    return new, fates


def _boundary_type(fates: Fates, value, role: str, index: int):
    """The TOSA type of @main's argument or result `index`; None (and a recorded failure) if it has none.

    Recorded under the name "@main argument" / "@main result": the function
    boundary, not an op. An empty argument is fine (the ops using it spell it
    in their attributes); an empty result is not: no TOSA op can produce it.
    """
    from torch_mlir import ir

    label = f"@main {role}"
    subject = f"@main {role} {index}"
    text = str(value.type)
    try:
        if not text.startswith(("!torch.vtensor", "!torch.tensor")):
            kind = Reason.NON_TENSOR_ARGUMENT if role == "argument" else Reason.NON_TENSOR_RESULT
            raise Unconvertible(label, kind, f"it is {text}, not a tensor", subject)
        try:
            return ir.Type.parse(tensor_type(label, value, None, allow_empty=role == "argument"))
        except Unconvertible as e:
            raise Unconvertible(label, e.kind, e.reason, subject) from None
    except Unconvertible as e:
        if role == "result" and e.kind != Reason.EMPTY_TENSOR and producer_of(value) is not None:
            return None  # the op producing it says why
        if role == "argument" and list(value.uses):
            return None  # the ops using it say why (an unused one is blamed on the boundary)
        fates.fail(e)
        return None


def _convert_one(op, name: str, fates: Fates, env: dict) -> None:
    try:
        if name in MUTATING:
            raise Unconvertible(name.removeprefix("torch."), Reason.MUTATION, "it overwrites the contents of a tensor in place")
        if name in CONTROL_FLOW or len(op.operation.regions):
            raise Unconvertible(name.removeprefix("torch."), Reason.CONTROL_FLOW, "it is control flow with regions")
        if not (name.startswith(("torch.aten.", "torch.prims.")) or name == "torch.operator"):
            raise Unconvertible(
                name.removeprefix("torch."), Reason.OUTSIDE_CONTRACT, f"{name} is not an ATen or prims operator"
            )
        contract_name = op_name(op)
        if name == "torch.operator" and not contract_name.startswith(("aten.", "prims.")):
            raise Unconvertible(contract_name, Reason.OUTSIDE_CONTRACT, "it is not in the aten or prims namespace")
        if contract_name in ASSERTIONS:
            check_assertion(op)
            fates.record(contract_name, ERASED)
            return
        if fold(op) is not None:
            fates.record(contract_name, FOLDED)  # its value is spelt where it is used
            return
        encoded = encode_op(op)
    except Unconvertible as e:
        fates.fail(e)
        return
    fates.record(encoded.operator_name, CONVERTED)
    if fates.failures or any(t not in env for t in encoded.tensors):
        return  # the program cannot be built any more; keep reading the ops for their fates
    custom = _custom_op(encoded, [env[t] for t in encoded.tensors])
    env.update(zip(encoded.outputs, custom.results))


def _custom_op(encoded: Encoded, operands: list):
    """The tosa.custom of one encoded op, at the current insertion point: contract v1's spelling."""
    from torch_mlir import ir
    from torch_mlir.dialects import tosa

    return tosa.CustomOp(
        [ir.Type.parse(t) for t in encoded.output_types],
        encoded.operator_name,
        contract.DOMAIN,
        encoded.attrs,
        operands,
    )


def _retype(attr, builtin_type, module, cache: dict):
    """A literal's elements attribute with the TOSA element type (si64 -> i64); same data."""
    if str(attr.type) == str(builtin_type):
        return attr
    if "blobs" not in cache:
        cache["blobs"] = constants.blobs(module.operation)
    return constants.resource_attr(attr, builtin_type, cache["blobs"])


# -- driver 2: selected ops, in place -----------------------------------------------------

def selected(name: str, wanted: list[str]) -> bool:
    """Does op `aten.layer_norm.default` match a listed name (`aten.layer_norm` or the full overload)?"""
    for w in wanted:
        w = w.removeprefix("torch.")
        if name == w or name.rsplit(".", 1)[0] == w or (w.count(".") == 1 and name == f"{w}.default"):
            return True
    return False


def convert_selected(module, wanted: list[str]) -> Fates:
    """In place: the listed ops of a torch-dialect module -> tosa.custom between torch_c casts."""
    from torch_mlir import ir

    fates = Fates()
    main = _main(module)
    block = main.regions[0].blocks[0]
    _load_torch_c(module.context)
    cache: dict = {}
    with module.context, ir.Location.unknown(module.context):
        for op in list(block.operations):
            name = op.operation.name
            if not (name.startswith(("torch.aten.", "torch.prims.")) or name == "torch.operator"):
                continue
            contract_name = op_name(op)
            if not selected(contract_name, wanted):
                continue
            try:
                encoded = encode_op(op)
                used = [i for i, v in enumerate(encoded.empties) if list(v.uses)]
                if used:
                    # All-ops mode spells it in its users' attributes; here its users stay torch ops.
                    raise Unconvertible(
                        encoded.operator_name,
                        Reason.EMPTY_TENSOR,
                        "an empty result of it is used by the torch IR around it, and no TOSA op can produce one",
                    )
            except Unconvertible as e:
                fates.fail(e)
                continue
            fates.record(encoded.operator_name, CONVERTED)
            with ir.InsertionPoint(op):
                custom = _custom_op(encoded, [_builtin_operand(t, module, cache) for t in encoded.tensors])
                for old, new in zip(encoded.outputs, custom.results):
                    back = ir.Operation.create("torch_c.from_builtin_tensor", results=[old.type], operands=[new]).result
                    old.replace_all_uses_with(back)
            unpacks = {use.owner for r in op.operation.results for use in r.uses}
            for unpack in unpacks:  # a ListUnpack whose results now come from the custom op
                unpack.operation.erase()
            op.operation.erase()
        _erase_dead(block)
    return fates


def _builtin_operand(value, module, cache: dict):
    """A torch tensor as a builtin one: a literal becomes a tosa.const (as in the RFC), the rest a torch_c cast."""
    from torch_mlir import ir
    from torch_mlir.dialects import tosa

    builtin_type = ir.Type.parse(tosa_type(value.type))
    producer = producer_of(value)
    if producer is not None and producer.operation.name == "torch.vtensor.literal":
        attr = _retype(producer.operation.attributes["value"], builtin_type, module, cache)
        return tosa.ConstOp(attr, results=[builtin_type]).result
    return ir.Operation.create("torch_c.to_builtin_tensor", results=[builtin_type], operands=[value]).result


def _load_torch_c(context) -> None:
    """Load torch-mlir's torch_c dialect into `context` (the Python bindings register only torch).

    Ops of a dialect not loaded yet are created unregistered, and the pass
    manager then misreads them; running a pass that depends on torch_c on an
    empty module loads it.
    """
    from torch_mlir import ir
    from torch_mlir.passmanager import PassManager

    if context.is_registered_operation("torch_c.to_builtin_tensor"):
        return
    with context:
        PassManager.parse("builtin.module(torch-func-backend-type-conversion)").run(ir.Module.parse("module {}").operation)


def _erase_dead(block) -> None:
    """Constants and list constructions left without users by the rewrite."""
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.operations)):
            removable = op.operation.name in STRUCTURAL or op.operation.name == "torch.vtensor.literal"
            if removable and all(not list(r.uses) for r in op.operation.results):
                op.operation.erase()
                changed = True
