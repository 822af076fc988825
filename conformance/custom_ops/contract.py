"""The custom-op contract: how one torch op call is spelt as a `tosa.custom`.

    tosa.custom  domain_name = "torch"
                 operator_name = "aten.add.Tensor"   (namespace.name.overload)
                 input_list = the op's tensor operands, in schema order
                 implementation_attrs = JSON, below

The JSON (contract version 1, docs/custom-op-contract.md) describes every
operand of the schema, in order, and every result:

    {"version": 1,
     "args": [{"name": "self", "tensor": 0},
              {"name": "other", "tensor": 1},
              {"name": "alpha", "keyword": true, "int": 1}],
     "results": [{"tensor": 0}]}

A value is an object with exactly one tag key (besides "name" and
"keyword" in an argument):

    {"tensor": i}            input_list[i] (in "results": output_list[i])
    {"int": n}               any integer, exactly
    {"float": x}             x a JSON number that round-trips exactly, or
                             one of the strings "inf", "-inf", "nan"
    {"bool": b}
    {"str": s}
    {"none": null}
    {"dtype": "float32"}     a torch.dtype, by its name in the torch module
    {"layout": "strided"}
    {"memory_format": "contiguous_format"}
    {"list": [value, ...]}   lists of ints, of floats, of tensors, of
                             optional tensors ({"none": null} elements), ...
    {"empty": {"shape": [0, 4], "dtype": "float32"}}
                             a tensor with a zero-sized dimension: it holds
                             no data and TOSA shapes have no zero, so it is
                             spelt here and is in neither list

Everything here is plain Python and JSON: no MLIR, so a consumer of the
contract (and its tests) can use it alone.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import torch

VERSION = 1
DOMAIN = "torch"

TAGS = ("tensor", "int", "float", "bool", "str", "none", "dtype", "layout", "memory_format", "list", "empty")
NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


class ContractError(ValueError):
    """Text that does not follow the contract, or a value it cannot spell."""


@dataclass(frozen=True)
class TensorRef:
    """A tensor operand: position `index` in input_list (in results: output_list)."""

    index: int


@dataclass(frozen=True)
class Empty:
    """A tensor with a zero-sized dimension, known by its static shape and dtype alone."""

    shape: tuple[int, ...]
    dtype: torch.dtype

    def make(self) -> torch.Tensor:
        return torch.empty(self.shape, dtype=self.dtype)


@dataclass(frozen=True)
class Arg:
    """One schema argument: its name, whether it is keyword-only, its value."""

    name: str
    value: Any  # TensorRef, int, float, bool, str, None, torch.dtype/layout/memory_format, or a list
    keyword: bool = False


@dataclass(frozen=True)
class Call:
    """What implementation_attrs says: the arguments and the results, decoded."""

    args: tuple[Arg, ...]
    results: tuple[Any, ...]  # TensorRef or lists of TensorRef, one per schema return
    version: int = VERSION


# -- enums ------------------------------------------------------------------------

def _enum_name(value) -> str:
    return str(value).removeprefix("torch.")


def _enum(kind: str, name: Any):
    expected = {"dtype": torch.dtype, "layout": torch.layout, "memory_format": torch.memory_format}[kind]
    found = getattr(torch, name, None) if isinstance(name, str) else None
    if not isinstance(found, expected):
        raise ContractError(f"{name!r} is not a torch {kind}")
    return found


# -- floats -----------------------------------------------------------------------

def encode_float(x: float) -> float | str:
    """A JSON-able float: finite ones as numbers (Python's repr round-trips), the rest spelt out."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def decode_float(v: Any) -> float:
    if isinstance(v, str):
        if v not in NON_FINITE:
            raise ContractError(f"float {v!r}: only 'inf', '-inf' and 'nan' are spelt as strings")
        return NON_FINITE[v]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ContractError(f"float {v!r} is not a number")
    return float(v)


# -- values -----------------------------------------------------------------------

def encode_value(value: Any) -> dict:
    """One value -> its tagged JSON object."""
    if isinstance(value, TensorRef):
        return {"tensor": value.index}
    if isinstance(value, Empty):
        return {"empty": {"shape": list(value.shape), "dtype": _enum_name(value.dtype)}}
    if value is None:
        return {"none": None}
    if isinstance(value, bool):  # before int: bool is an int in Python
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return {"float": encode_float(value)}
    if isinstance(value, str):
        return {"str": value}
    if isinstance(value, torch.dtype):
        return {"dtype": _enum_name(value)}
    if isinstance(value, torch.layout):
        return {"layout": _enum_name(value)}
    if isinstance(value, torch.memory_format):
        return {"memory_format": _enum_name(value)}
    if isinstance(value, (list, tuple)):
        return {"list": [encode_value(v) for v in value]}
    raise ContractError(f"contract v{VERSION} has no encoding for {type(value).__name__} {value!r}")


def decode_value(obj: Any, tensors: list | None = None) -> Any:
    """A tagged JSON object -> the value; with `tensors`, TensorRefs become those tensors."""
    if not isinstance(obj, dict):
        raise ContractError(f"a value must be an object with one tag, got {obj!r}")
    tags = [k for k in obj if k not in ("name", "keyword")]
    if len(tags) != 1 or tags[0] not in TAGS:
        raise ContractError(f"a value needs exactly one of the tags {', '.join(TAGS)}; got {sorted(obj)}")
    tag = tags[0]
    v = obj[tag]
    if tag == "tensor":
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ContractError(f"tensor index {v!r} is not a non-negative integer")
        if tensors is None:
            return TensorRef(v)
        if v >= len(tensors):
            raise ContractError(f"tensor index {v} is out of range: the op has {len(tensors)} tensor(s)")
        return tensors[v]
    if tag == "int":
        if isinstance(v, bool) or not isinstance(v, int):
            raise ContractError(f"int {v!r} is not an integer")
        return v
    if tag == "float":
        return decode_float(v)
    if tag == "bool":
        if not isinstance(v, bool):
            raise ContractError(f"bool {v!r} is not true or false")
        return v
    if tag == "str":
        if not isinstance(v, str):
            raise ContractError(f"str {v!r} is not a string")
        return v
    if tag == "none":
        if v is not None:
            raise ContractError(f"none takes null, got {v!r}")
        return None
    if tag == "list":
        if not isinstance(v, list):
            raise ContractError(f"list {v!r} is not a JSON array")
        return [decode_value(e, tensors) for e in v]
    if tag == "empty":
        shape = v.get("shape") if isinstance(v, dict) else None
        if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise ContractError(f"empty {v!r} needs a 'shape' of non-negative integers")
        if 0 not in shape:
            raise ContractError(f"empty shape {shape} has no zero-sized dimension")
        empty = Empty(tuple(shape), _enum("dtype", v.get("dtype")))
        return empty.make() if tensors is not None else empty
    return _enum(tag, v)


# -- whole calls ------------------------------------------------------------------

def encode(args: list[Arg] | tuple[Arg, ...], results: list | tuple) -> str:
    """implementation_attrs for one op call (compact JSON; NaN never appears as a bare token)."""
    encoded_args = []
    for arg in args:
        item = {"name": arg.name}
        if arg.keyword:
            item["keyword"] = True
        item.update(encode_value(arg.value))
        encoded_args.append(item)
    document = {"version": VERSION, "args": encoded_args, "results": [encode_value(r) for r in results]}
    return json.dumps(document, separators=(",", ":"), allow_nan=False)


def decode(text: str) -> Call:
    """implementation_attrs -> Call; ContractError says what is wrong."""
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise ContractError(f"implementation_attrs is not JSON: {e}") from None
    if not isinstance(document, dict):
        raise ContractError("implementation_attrs must be a JSON object")
    version = document.get("version")
    if version != VERSION:
        raise ContractError(f"contract version {version!r} is not supported (this is version {VERSION})")
    if not isinstance(document.get("args"), list) or not isinstance(document.get("results"), list):
        raise ContractError("implementation_attrs needs the arrays 'args' and 'results'")
    args = []
    for item in document["args"]:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ContractError(f"argument {item!r} has no name")
        args.append(Arg(item["name"], decode_value(item), bool(item.get("keyword", False))))
    results = tuple(decode_value(r) for r in document["results"])
    return Call(tuple(args), results, version)


def _reject_constant(token: str):
    raise ContractError(f"bare {token} is not JSON: non-finite floats are spelt as strings")


def bind(call: Call, tensors: list) -> tuple[list, dict]:
    """The positional and keyword arguments to call the op with, tensors filled in."""
    positional, keywords = [], {}
    for arg in call.args:
        value = _fill(arg.value, tensors)
        if arg.keyword:
            keywords[arg.name] = value
        else:
            positional.append(value)
    return positional, keywords


def _fill(value: Any, tensors: list) -> Any:
    if isinstance(value, Empty):
        return value.make()
    if isinstance(value, TensorRef):
        if value.index >= len(tensors):
            raise ContractError(f"tensor index {value.index} is out of range: the op has {len(tensors)} tensor(s)")
        return tensors[value.index]
    if isinstance(value, list):
        return [_fill(v, tensors) for v in value]
    return value


def result_indices(results: tuple) -> list[list[int | None]]:
    """For each schema return, the output_list indices it covers (a list covers several; None: an empty tensor)."""
    out = []
    for r in results:
        elements = r if isinstance(r, list) else [r]
        if isinstance(r, list) and not r or not all(isinstance(e, (TensorRef, Empty)) for e in elements):
            raise ContractError(f"a result must be a tensor or a list of tensors, got {r!r}")
        out.append([e.index if isinstance(e, TensorRef) else None for e in elements])
    return out


def resolve(operator_name: str):
    """`aten.add.Tensor` -> torch.ops.aten.add.Tensor (an OpOverload); ContractError if unknown."""
    parts = operator_name.split(".")
    if len(parts) != 3:
        raise ContractError(f"operator_name {operator_name!r} is not namespace.name.overload")
    namespace, name, overload = parts
    try:
        return getattr(getattr(getattr(torch.ops, namespace), name), overload)
    except (AttributeError, RuntimeError):
        raise ContractError(f"torch.ops has no operator {operator_name}") from None


def outputs(operator_name: str, call: Call, returned: Any) -> list:
    """What the op returned, laid out in output_list order as `call.results` declares."""
    returns = returned if isinstance(returned, tuple) else (returned,)
    if len(returns) != len(call.results):
        raise ContractError(
            f"{operator_name} returned {len(returns)} value(s) where implementation_attrs declares {len(call.results)}"
        )
    placed: dict[int, Any] = {}
    for value, indices, declared in zip(returns, result_indices(call.results), call.results):
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        if len(values) != len(indices):
            raise ContractError(f"{operator_name} returned {len(values)} tensor(s) where {len(indices)} were declared")
        for index, got, spec in zip(indices, values, declared if isinstance(declared, list) else [declared]):
            if index is not None:
                placed[index] = got
            elif tuple(got.shape) != spec.shape:  # an empty result is not passed on, only checked
                raise ContractError(f"{operator_name} returned shape {list(got.shape)} where empty {list(spec.shape)} was declared")
    if sorted(placed) != list(range(len(placed))):
        raise ContractError(f"{operator_name}: the results of implementation_attrs do not number output_list 0..n-1")
    return [placed[i] for i in range(len(placed))]


def call_op(operator_name: str, implementation_attrs: str, tensors: list) -> list:
    """Run one custom op with PyTorch; its outputs in output_list order."""
    call = decode(implementation_attrs)
    positional, keywords = bind(call, tensors)
    return outputs(operator_name, call, resolve(operator_name)(*positional, **keywords))
