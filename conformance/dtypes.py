"""Dtypes, and how each layer spells them: one row of TABLE per torch dtype.

    torch            torch.int64
    torch dialect    si64     the element type of !torch.vtensor<[2,?],si64>
    builtin MLIR     i64      TOSA, linalg, IREE (signed integers become signless)
    case ids         i64      `add.i64`, the suffix cases/_common.dtypes() adds

Whoever turns a type into text or text into a type asks here, so adding a
dtype is one row. Every row is a dtype a case's input may have (drawn by
T(), or given exactly); a dtype not in the table is an error naming the case.

The second half reads MLIR type text: `!torch.vtensor<[2,?],si64>` and the
builtin `tensor<2x?xi64>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class DType:
    dtype: torch.dtype
    torch_mlir: str  # element type in torch-mlir's torch dialect
    builtin: str  # element type in builtin MLIR (signless integers, as TOSA has them)
    short: str  # in case ids


# Every dtype a PyTorch tensor can have and a case may take as an input. Left out:
# the bits* types (opaque bytes: no op computes on them) and the sub-byte
# int1..int7 / uint1..uint7 and quint4x2 / quint2x4 (no op, not even a copy, takes them).
TABLE: tuple[DType, ...] = (
    #     torch                   torch dialect    builtin          short
    DType(torch.float64,          "f64",           "f64",           "f64"),
    DType(torch.float32,          "f32",           "f32",           "f32"),
    DType(torch.float16,          "f16",           "f16",           "f16"),
    DType(torch.bfloat16,         "bf16",          "bf16",          "bf16"),
    DType(torch.int64,            "si64",          "i64",           "i64"),
    DType(torch.int32,            "si32",          "i32",           "i32"),
    DType(torch.int16,            "si16",          "i16",           "i16"),
    DType(torch.int8,             "si8",           "i8",            "i8"),
    DType(torch.uint8,            "ui8",           "ui8",           "u8"),
    DType(torch.bool,             "i1",            "i1",            "bool"),
    DType(torch.uint16,           "ui16",          "ui16",          "u16"),
    DType(torch.uint32,           "ui32",          "ui32",          "u32"),
    DType(torch.uint64,           "ui64",          "ui64",          "u64"),
    DType(torch.float8_e5m2,      "f8E5M2",        "f8E5M2",        "f8e5m2"),
    DType(torch.float8_e4m3fn,    "f8E4M3FN",      "f8E4M3FN",      "f8e4m3fn"),
    DType(torch.float8_e5m2fnuz,  "f8E5M2FNUZ",    "f8E5M2FNUZ",    "f8e5m2fnuz"),
    DType(torch.float8_e4m3fnuz,  "f8E4M3FNUZ",    "f8E4M3FNUZ",    "f8e4m3fnuz"),
    DType(torch.float8_e8m0fnu,   "f8E8M0FNU",     "f8E8M0FNU",     "f8e8m0fnu"),
    DType(torch.float4_e2m1fn_x2, "f4E2M1FN",      "f4E2M1FN",      "f4e2m1fnx2"),  # two values a byte
    DType(torch.complex32,        "complex<f16>",  "complex<f16>",  "c32"),
    DType(torch.complex64,        "complex<f32>",  "complex<f32>",  "c64"),
    DType(torch.complex128,       "complex<f64>",  "complex<f64>",  "c128"),
    # Quantized: the importer keeps torch's own types (no builtin equivalent).
    DType(torch.qint8,            "!torch.qint8",  "!torch.qint8",  "qi8"),
    DType(torch.quint8,           "!torch.quint8", "!torch.quint8", "qu8"),
    DType(torch.qint32,           "!torch.qint32", "!torch.qint32", "qi32"),
)

_BY_DTYPE = {row.dtype: row for row in TABLE}
_BY_TORCH_MLIR = {row.torch_mlir: row for row in TABLE}
# Constants' attributes carry builtin types in any signedness: i64, si64 and ui8 all occur.
_BY_BUILTIN = {**{row.builtin: row for row in TABLE}, **_BY_TORCH_MLIR}

INPUT_DTYPES = frozenset(_BY_DTYPE)
QUANTIZED = frozenset((torch.qint8, torch.quint8, torch.qint32))


def name(dtype: torch.dtype) -> str:
    """PyTorch's own name, as explanations and input descriptions show it: `float32`, `int64`."""
    return str(dtype).removeprefix("torch.")


def short_name(dtype: torch.dtype) -> str:
    """The case-id suffix of `dtype` (`i64`, `bool`, `u8`); KeyError for a dtype not in TABLE."""
    return _BY_DTYPE[dtype].short


def torch_mlir_name(dtype: torch.dtype) -> str | None:
    """`torch.int64` -> `si64`; None for a dtype not in TABLE."""
    row = _BY_DTYPE.get(dtype)
    return row.torch_mlir if row else None


def from_torch_mlir(element: str) -> torch.dtype | None:
    """`si64` -> torch.int64; None for an element type not in TABLE."""
    row = _BY_TORCH_MLIR.get(element)
    return row.dtype if row else None


def builtin_of(element: str) -> str | None:
    """A torch-dialect element type as a builtin one: `si64` -> `i64`; None when not in TABLE."""
    row = _BY_TORCH_MLIR.get(element)
    return row.builtin if row else None


def from_builtin(element: str) -> torch.dtype | None:
    """A builtin element type, signless or not (`i64`, `si64`, `ui8`, `f32`) -> its torch dtype, or None."""
    row = _BY_BUILTIN.get(element)
    return row.dtype if row else None


def builtin_name(dtype: torch.dtype) -> str:
    """`torch.int64` -> `i64` (IREE's flags name types so too); KeyError for a dtype not in TABLE."""
    return _BY_DTYPE[dtype].builtin


# -- type text ------------------------------------------------------------------------

# An element type: `f32`, `si64`, `f8E4M3FN`, `complex<f32>`, `!torch.qint8`. Spelt
# out, not "anything up to `>`", so that `findall` over a printed signature
# stops at each type's end and `tensor<*xf32>` (unranked) is not read as 0-d.
ELEMENT = r"[A-Za-z!][\w.]*(?:<\w+>)?"
# A value tensor of known rank: dims between brackets (`[]` for a scalar, `?` dynamic).
VTENSOR = re.compile(rf"!torch\.vtensor<\[([^\]]*)\],({ELEMENT})>")
# A ranked builtin tensor: `tensor<2x?xi64>`, `tensor<f32>`.
TENSOR = re.compile(rf"tensor<((?:[0-9?]+x)*)({ELEMENT})>")


def parse_vtensor(text: str) -> tuple[list[str], str] | None:
    """`!torch.vtensor<[2,?],si64>` -> (["2", "?"], "si64"); None for any other type."""
    match = VTENSOR.fullmatch(text)
    if match is None:
        return None
    return [d.strip() for d in match.group(1).split(",") if d.strip()], match.group(2)


def parse_tensor(text: str) -> tuple[list[str], str] | None:
    """`tensor<2x?xi64>` -> (["2", "?"], "i64"); None for any other type."""
    match = TENSOR.fullmatch(text)
    if match is None:
        return None
    return [d for d in match.group(1).split("x") if d], match.group(2)


def tensor_type(dims: list[str], element: str) -> str:
    """The builtin tensor type: (["2", "?"], "i64") -> `tensor<2x?xi64>`, ([], "f32") -> `tensor<f32>`."""
    return f"tensor<{'x'.join(dims)}x{element}>" if dims else f"tensor<{element}>"
