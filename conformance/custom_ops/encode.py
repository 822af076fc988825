"""Reading one torch-dialect op against its PyTorch schema, as contract v1 spells it.

`encode_op(op)` gives what the op's tosa.custom holds (operator_name,
implementation_attrs, the tensor operands for input_list, the result types
for output_list) or raises Unconvertible with the kind of reason and a
sentence naming the op. Constants are read through (torch.constant.*,
torch.prim.ListConstruct, torch.derefine, and scalar ops of constants,
which `fold` evaluates: torch_ir.py reads them); everything computed at run
time is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance import dtypes
from conformance.custom_ops import contract
from conformance.custom_ops.contract import Arg, Empty, TensorRef
from conformance.custom_ops.reasons import Reason
from conformance.custom_ops.schema import Kind, schema_of
from conformance.custom_ops.torch_ir import (
    constant,
    contract_string,
    enum_tables,
    look_through,
    op_name,
    producer_name,
    producer_of,
    resolve_overload,
)

# What the validation target (verify.TARGET: TOSA 1.1 draft, profiles pro_int
# and pro_fp, extensions int16, int64, bf16, fp8, dynamic) allows. No TOSA
# profile has f64, unsigned integers or complex numbers.
TOSA_ELEMENT_TYPES = {"f16", "bf16", "f32", "i1", "i8", "i16", "i32", "i64", "f8E5M2", "f8E4M3FN"}
STRUCTURAL = {
    "torch.constant.int",
    "torch.constant.float",
    "torch.constant.bool",
    "torch.constant.str",
    "torch.constant.none",
    "torch.constant.device",
    "torch.constant.number",
    "torch.prim.ListConstruct",
    "torch.derefine",
}
MUTATING = {"torch.overwrite.tensor.contents", "torch.copy.to_tensor", "torch.copy.to_vtensor"}
CONTROL_FLOW = {"torch.prim.If", "torch.prim.Loop", "torch.prim.If.yield", "torch.prim.Loop.condition"}
ASSERTIONS = {"aten._assert_tensor_metadata.default"}


class Unconvertible(Exception):
    """One op cannot become a tosa.custom: the kind of reason and a sentence naming op and reason."""

    def __init__(self, op: str, kind: Reason, reason: str, subject: str | None = None):
        kind = Reason(kind)  # a misspelt kind fails here, not later as "no explanation recorded"
        super().__init__(f"{subject or op} cannot become a tosa.custom ({kind}): {reason}")
        self.op = op
        self.kind = kind
        self.reason = reason
        self.sentence = str(self)


@dataclass
class Encoded:
    """One op, spelt in the contract: what the tosa.custom will hold."""

    operator_name: str
    attrs: str  # implementation_attrs
    tensors: list  # torch-dialect Values, in input_list order
    output_types: list[str]  # builtin tensor types, output_list order
    outputs: list  # the torch-dialect Values each output replaces
    empties: list = field(default_factory=list)  # results spelt {"empty": ...}: in no output_list


# -- tensor types ---------------------------------------------------------------------

def tosa_type(torch_type, legal_only: bool = False) -> str:
    """`!torch.vtensor<[2,?],si64>` -> `tensor<2x?xi64>`; KeyError (element) or ValueError (no type) when impossible."""
    text = str(torch_type)
    parsed = dtypes.parse_vtensor(text)
    if parsed is None:
        raise ValueError(text)
    dims, torch_element = parsed
    element = dtypes.builtin_of(torch_element)
    if element is None or (legal_only and element not in TOSA_ELEMENT_TYPES):
        raise KeyError(torch_element)
    return dtypes.tensor_type(dims, element)


def _its(role: str | None) -> str:
    return f"its {role}" if role else "it"


def empty_of(op: str, value, role: str) -> Empty | None:
    """The contract's Empty for a tensor with a zero-sized dimension (contract v1 spells it in JSON), else None."""
    parsed = dtypes.parse_vtensor(str(value.type))
    if parsed is None:
        return None
    dims, element = parsed
    if "0" not in dims:
        return None
    if "?" in dims:
        raise Unconvertible(op, Reason.EMPTY_TENSOR, f"{_its(role)} has type {value.type}: empty, with a dynamic size too, so no static shape spells it")
    dtype = dtypes.from_torch_mlir(element)
    if dtype is None or dtypes.builtin_of(element) not in TOSA_ELEMENT_TYPES:
        tensor_type(op, value, role, allow_empty=True)  # raises the element type's reason
    return Empty(tuple(int(d) for d in dims), dtype)


def tensor_type(op: str, value, role: str, allow_empty: bool = False) -> str:
    """The TOSA type of a tensor value, or Unconvertible saying why it has none."""
    text = str(value.type)
    if text.startswith("!torch.tensor"):
        raise Unconvertible(op, Reason.MUTATION, f"{_its(role)} is a non-value tensor ({text}), i.e. mutable memory")
    try:
        converted = tosa_type(value.type, legal_only=True)
    except KeyError as e:
        element = e.args[0]
        raise Unconvertible(
            op, Reason.NON_TOSA_ELEMENT_TYPE, f"{_its(role)} has element type {element}, which no TOSA profile or extension allows"
        ) from None
    except ValueError:
        raise Unconvertible(op, Reason.UNKNOWN_TENSOR_TYPE, f"{_its(role)} has type {text}, without a known rank and dtype") from None
    dims, _ = dtypes.parse_vtensor(text)
    if not allow_empty and "0" in dims:
        raise Unconvertible(op, Reason.EMPTY_TENSOR, f"{_its(role)} has type {text}, with a zero-sized dimension")
    return converted


# -- reading operands -----------------------------------------------------------------

SCALAR_BASES = {"int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Layout", "MemoryFormat", "SymFloat", "SymBool"}


class _Encoder:
    """Reads the operands of one op against its schema; collects tensor operands in order."""

    def __init__(self, op: str):
        self.op = op
        self.tensors: list = []

    def value(self, value, kind: Kind, name: str) -> Any:
        value = look_through(value)
        type_text = str(value.type)
        is_const, const = constant(value)
        if kind.optional and is_const and const is None:
            return None
        if kind.is_list:
            return self._list(value, kind, name, type_text)
        base = kind.base
        if base == "Tensor":
            return self._tensor(value, name, type_text)
        if base == "Device":
            raise self._device_error(value, name)
        if base == "Generator":
            raise Unconvertible(self.op, Reason.GENERATOR_ARGUMENT, f"its operand {name} is a random-number generator")
        if base in SCALAR_BASES:
            if not is_const:
                return self._runtime(value, name, type_text)
            return self._scalar(const, base, name)
        raise Unconvertible(self.op, Reason.UNENCODABLE_OPERAND, f"its operand {name} has schema type {kind} ({type_text})")

    def _list(self, value, kind: Kind, name: str, type_text: str) -> list:
        producer = producer_of(value)
        if producer is None or producer.operation.name != "torch.prim.ListConstruct":
            return self._runtime(value, name, type_text)
        element = kind.element
        return [self.value(v, element, f"{name}[{i}]") for i, v in enumerate(producer.operation.operands)]

    def _tensor(self, value, name: str, type_text: str) -> TensorRef | Empty:
        if not type_text.startswith(("!torch.vtensor", "!torch.tensor")):
            raise Unconvertible(self.op, Reason.SCHEMA_MISMATCH, f"its operand {name} is {type_text} where the schema says Tensor")
        empty = empty_of(self.op, value, f"operand {name}")
        if empty is not None:
            return empty
        tensor_type(self.op, value, f"operand {name}")
        self.tensors.append(value)
        return TensorRef(len(self.tensors) - 1)

    def _device_error(self, value, name: str) -> Unconvertible:
        producer = producer_of(value)
        spelled = ""
        if producer is not None and producer.operation.name == "torch.constant.device":
            spelled = f" {contract_string(producer.operation.attributes['value'])!r}"
        return Unconvertible(
            self.op, Reason.DEVICE_ARGUMENT, f"its operand {name} is the device{spelled}, which contract v1 does not encode"
        )

    def _scalar(self, const, base: str, name: str) -> Any:
        """A compile-time scalar as the contract holds it: enums by their torch value, floats as floats."""
        if base in ("ScalarType", "Layout", "MemoryFormat"):
            table = enum_tables()[base]
            if const not in table:
                raise Unconvertible(self.op, Reason.UNENCODABLE_OPERAND, f"its operand {name} is {base} number {const}, unknown to torch-mlir")
            return table[const]
        if base in ("float", "SymFloat") and isinstance(const, int) and not isinstance(const, bool):
            return float(const)
        return const

    def _runtime(self, value, name: str, type_text: str):
        raise Unconvertible(
            self.op,
            Reason.RUNTIME_SCALAR,
            f"its operand {name} ({type_text}) is computed at run time by {producer_name(value)}, not a compile-time constant",
        )


class _Results:
    """Declares the results of one op: an empty one is spelt out in the JSON, any other becomes the next output."""

    def __init__(self, op: str):
        self.op = op
        self.output_types: list[str] = []
        self.outputs: list = []
        self.empties: list = []

    def declare_all(self, results: list) -> list:
        """Each result's declaration (a list of them for a list of tensors), in order."""
        if not results:
            raise Unconvertible(self.op, Reason.NO_RESULT, "it returns nothing and acts only by side effect")
        declared: list = []
        for index, result in enumerate(results):
            text = str(result.type)
            if text.startswith(("!torch.vtensor", "!torch.tensor")):
                declared.append(self._declare(result, f"result {index}"))
            elif text.startswith("!torch.list<") and ("vtensor" in text or "tensor" in text) and len(results) == 1:
                unpack = _list_unpack(result)
                if unpack is None:
                    raise Unconvertible(self.op, Reason.TENSOR_LIST_RESULT, f"it returns {text} and nothing in the IR fixes its length")
                declared.append([self._declare(element, f"result [{j}]") for j, element in enumerate(unpack.operation.results)])
            else:
                raise Unconvertible(self.op, Reason.NON_TENSOR_RESULT, f"it returns {text}, not a tensor")
        return declared

    def _declare(self, value, where: str):
        empty = empty_of(self.op, value, where)
        if empty is not None:
            self.empties.append(value)
            return empty
        self.output_types.append(tensor_type(self.op, value, where))
        self.outputs.append(value)
        return TensorRef(len(self.outputs) - 1)


def _list_unpack(value):
    """The torch.prim.ListUnpack that is the only user of `value`, or None."""
    users = [use.owner for use in value.uses]
    if len(users) == 1 and users[0].operation.name == "torch.prim.ListUnpack":
        return users[0]
    return None


def encode_op(op) -> Encoded:
    """One torch.aten/torch.prims op -> Encoded; raises Unconvertible with the reason."""
    name = op_name(op)
    operation = op.operation
    schema = _schema(name, operation)
    encoder = _Encoder(name)
    args = [Arg(a.name, encoder.value(v, a.kind, a.name), a.keyword) for a, v in zip(schema.arguments, operation.operands)]
    results = _Results(name)
    declared = results.declare_all(list(operation.results))
    attrs = contract.encode(args, declared)
    return Encoded(name, attrs, list(encoder.tensors), results.output_types, results.outputs, results.empties)


def _schema(name: str, operation):
    """The schema the op is read against; Unconvertible when there is none or the op cannot be one tosa.custom."""
    if len(operation.regions):
        raise Unconvertible(name, Reason.CONTROL_FLOW, "it holds regions")
    overload = resolve_overload(name)
    if overload is None:
        raise Unconvertible(name, Reason.UNKNOWN_OPERATOR, "torch.ops has no such operator to call it by")
    schema = schema_of(overload)
    operands = list(operation.operands)
    if len(operands) != len(schema.arguments):
        raise Unconvertible(
            name, Reason.SCHEMA_MISMATCH, f"it has {len(operands)} operands in the IR but {len(schema.arguments)} in its schema"
        )
    written = [a.name for a in schema.arguments if a.writes]
    if written:
        raise Unconvertible(name, Reason.MUTATION, f"it writes into its operand {written[0]}")
    return schema


def check_assertion(op) -> None:
    """aten._assert_tensor_metadata: check it against the static type of its tensor, or raise."""
    name = op_name(op)
    schema = schema_of(resolve_overload(name))
    values = dict(zip([a.name for a in schema.arguments], op.operation.operands))
    tensor = values["a"]
    parsed = dtypes.parse_vtensor(str(tensor.type))
    if parsed is None:
        raise Unconvertible(name, Reason.NO_RESULT, f"it asserts metadata of {tensor.type}, which has no static type to check")
    dims, element = parsed
    is_const, dtype = constant(values["dtype"])
    if is_const and dtype is not None:
        expected = enum_tables()["ScalarType"].get(dtype)
        if dtypes.from_torch_mlir(element) != expected:
            raise Unconvertible(name, Reason.NO_RESULT, f"it asserts dtype {expected} on a {element} tensor")
    size_value = look_through(values["size"])
    is_const, none = constant(size_value)
    if not (is_const and none is None):
        producer = producer_of(size_value)
        sizes = [constant(v) for v in producer.operation.operands] if producer is not None else []
        if producer is None or producer.operation.name != "torch.prim.ListConstruct" or [
            str(v) for ok, v in sizes
        ] != dims:
            raise Unconvertible(name, Reason.NO_RESULT, "it asserts sizes that the IR's static type does not state")
