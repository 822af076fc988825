"""Reading the data of constants (`tosa.const`, `torch.vtensor.literal`) into torch tensors.

torch-mlir's importer stores weights as `dense_resource<name>` blobs, which
the MLIR Python bindings can create but not read back; the blobs are read
from the module's printed `dialect_resources` section instead (each blob is
a 4-byte alignment header followed by the raw little-endian data).
"""

from __future__ import annotations

import io
import re

import torch

TORCH_DTYPES = {
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f32": torch.float32,
    "f64": torch.float64,
    "i1": torch.bool,
    "i8": torch.int8,
    "si8": torch.int8,
    "i16": torch.int16,
    "si16": torch.int16,
    "i32": torch.int32,
    "si32": torch.int32,
    "i64": torch.int64,
    "si64": torch.int64,
    "ui8": torch.uint8,
    "ui16": torch.uint16,
    "ui32": torch.uint32,
    "ui64": torch.uint64,
}
_BLOB = re.compile(r'^\s*"?([^":\s]+)"?\s*:\s*"0x([0-9A-Fa-f]*)"', re.MULTILINE)
_TENSOR_TYPE = re.compile(r"tensor<((?:[0-9?]+x)*)([^>]+)>")


class ConstantError(Exception):
    pass


def blobs(operation) -> dict[str, bytes]:
    """name -> data bytes (alignment header removed) of every builtin resource blob of the module."""
    out = io.StringIO()
    operation.print(file=out, large_elements_limit=None)
    text = out.getvalue()
    start = text.rfind("dialect_resources")
    if start < 0:
        return {}
    return {m.group(1): bytes.fromhex(m.group(2))[4:] for m in _BLOB.finditer(text, start)}


def element_type(type_text: str) -> tuple[list[int], str]:
    match = _TENSOR_TYPE.fullmatch(type_text)
    if match is None:
        raise ConstantError(f"{type_text} is not a ranked tensor type")
    dims = [int(d) for d in match.group(1).split("x") if d]
    return dims, match.group(2)


def to_tensor(attr, resources: dict[str, bytes]) -> torch.Tensor:
    """An elements attribute -> a torch tensor of its dtype and shape."""
    import numpy as np
    from torch_mlir import ir

    dims, element = element_type(str(attr.type))
    dtype = TORCH_DTYPES.get(element)
    if dtype is None:
        raise ConstantError(f"no torch dtype for element type {element}")
    text = str(attr)
    if text.startswith("dense_resource<"):
        name = text[len("dense_resource<") : text.index(">")]
        if name not in resources:
            raise ConstantError(f"resource blob {name} is not in the module")
        data = resources[name]
        if not data:
            return torch.empty(dims, dtype=dtype)
        return torch.frombuffer(bytearray(data), dtype=dtype).reshape(dims).clone()
    dense = ir.DenseElementsAttr(attr)
    if element == "bf16":
        if not dense.is_splat:
            raise ConstantError("an inline bf16 constant that is not a splat cannot be read")
        return torch.full(dims, dense.get_splat_value().value, dtype=dtype)
    array = np.array(dense)
    return torch.from_numpy(np.ascontiguousarray(array)).to(dtype).reshape(dims).clone()


def resource_attr(attr, builtin_type, resources: dict[str, bytes]):
    """`attr` with `builtin_type` (e.g. si64 -> i64), the same data; resources are copied to a new blob."""
    import numpy as np
    from torch_mlir import ir

    text = str(attr)
    if not text.startswith("dense_resource<"):
        return ir.Attribute.parse(f"{text[: text.rindex(' : ')]} : {builtin_type}")
    name = text[len("dense_resource<") : text.index(">")]
    _, element = element_type(str(builtin_type))
    data = np.frombuffer(resources[name], dtype=torch.empty(0, dtype=TORCH_DTYPES[element]).numpy().dtype).copy()
    return ir.DenseResourceElementsAttr.get_from_buffer(data, name, builtin_type, alignment=8)
