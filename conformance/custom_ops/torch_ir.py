"""Reading torch-dialect IR as the encoder needs it: op names, producers, compile-time scalars.

What a torch op's operand *is* at compile time is spelt across several ops:
`torch.constant.*` holds a scalar, `torch.derefine` wraps one in an
Optional, and the importer emits scalar ops of constants (`aten.Int.bool` of
a literal True) that PyTorch itself evaluates here, as torch-mlir's
canonicalizer folds them. Enums (ScalarType, Layout, MemoryFormat) are
numbers in the IR, mapped back with torch-mlir's own tables. The encoding
of an op into the contract is encode.py's; the data of tensor constants
(resource blobs) is constants.py's.
"""

from __future__ import annotations

from typing import Any

from conformance.custom_ops import contract

SCALAR_TYPES = ("!torch.int", "!torch.float", "!torch.bool", "!torch.number", "!torch.str")


def op_name(op) -> str:
    """The contract's operator name of a torch-dialect op: `aten.add.Tensor`, `aten.tanh.default`."""
    name = op.operation.name
    if name == "torch.operator":
        name = contract_string(op.operation.attributes["name"])
    name = name.removeprefix("torch.")
    return f"{name}.default" if name.count(".") == 1 else name


def contract_string(attr) -> str:
    from torch_mlir import ir

    return ir.StringAttr(attr).value


def resolve_overload(name: str):
    """The torch.ops overload an operator name calls, or None."""
    try:
        return contract.resolve(name)
    except contract.ContractError:
        return None


def producer_of(value):
    """The op defining `value`, or None for a block argument."""
    from torch_mlir import ir

    if isinstance(value.owner, ir.Block):
        return None
    return value.owner


def producer_name(value) -> str:
    producer = producer_of(value)
    if producer is None:
        return "a function argument"
    if producer.operation.name in ("torch.operator",) or producer.operation.name.startswith(("torch.aten.", "torch.prims.")):
        return op_name(producer)
    return producer.operation.name


def look_through(value):
    """`value` with any torch.derefine (a value made Optional) around it taken off."""
    producer = producer_of(value)
    while producer is not None and producer.operation.name == "torch.derefine":
        value = producer.operation.operands[0]
        producer = producer_of(value)
    return value


def constant(value):
    """(True, python value) for a torch.constant.* or a foldable scalar op, else (False, None)."""
    from torch_mlir import ir

    producer = producer_of(value)
    if producer is None:
        return False, None
    name = producer.operation.name
    attrs = producer.operation.attributes
    if name == "torch.constant.none":
        return True, None
    if name == "torch.constant.int":
        return True, ir.IntegerAttr(attrs["value"]).value
    if name == "torch.constant.float":
        return True, ir.FloatAttr(attrs["value"]).value
    if name == "torch.constant.bool":
        return True, ir.BoolAttr(attrs["value"]).value
    if name == "torch.constant.str":
        return True, ir.StringAttr(attrs["value"]).value
    if name == "torch.constant.number":
        attr = attrs["value"]
        return True, ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else ir.FloatAttr(attr).value
    folded = fold(producer)
    if folded is not None:
        return True, folded[0]
    return False, None


def fold(op) -> tuple[Any] | None:
    """(value,) of a scalar op whose operands are all compile-time constants, evaluated by PyTorch; else None.

    The importer emits such ops itself (`aten.Int.bool` of a literal True);
    torch-mlir's canonicalizer folds them the same way.
    """
    name = op.operation.name
    if not (name.startswith(("torch.aten.", "torch.prims.")) or name == "torch.operator"):
        return None
    results = list(op.operation.results)
    if len(results) != 1 or not str(results[0].type).startswith(SCALAR_TYPES) or len(op.operation.regions):
        return None
    values = []
    for operand in op.operation.operands:
        is_const, value = constant(look_through(operand))
        if not is_const:
            return None
        values.append(value)
    overload = resolve_overload(op_name(op))
    if overload is None:
        return None
    try:
        return (overload(*values),)
    except Exception:
        return None


_ENUMS: dict[str, dict[int, Any]] = {}


def enum_tables() -> dict[str, dict[int, Any]]:
    """Enum name (ScalarType, Layout, MemoryFormat) -> {the number the IR holds: the torch value}."""
    if not _ENUMS:
        from torch_mlir.extras import fx_importer as fx

        _ENUMS["ScalarType"] = {v: k for k, v in fx.TORCH_DTYPE_TO_INT.items()}
        _ENUMS["Layout"] = {v: k for k, v in fx.TORCH_LAYOUT_TO_INT.items()}
        _ENUMS["MemoryFormat"] = {v: k for k, v in fx.TORCH_MEMORY_FORMAT_TO_INT.items()}
    return _ENUMS
