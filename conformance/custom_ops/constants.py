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

from conformance import dtypes

_BLOB = re.compile(r'^\s*"?([^":\s]+)"?\s*:\s*"0x([0-9A-Fa-f]*)"', re.MULTILINE)


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
    parsed = dtypes.parse_tensor(type_text)
    if parsed is None:
        raise ConstantError(f"{type_text} is not a ranked tensor type")
    dims, element = parsed
    return [int(d) for d in dims], element


def _torch_dtype(element: str) -> torch.dtype:
    dtype = dtypes.from_builtin(element)
    if dtype is None:
        raise ConstantError(f"no torch dtype for element type {element}")
    return dtype


def to_tensor(attr, resources: dict[str, bytes]) -> torch.Tensor:
    """An elements attribute -> a torch tensor of its dtype and shape."""
    import numpy as np
    from torch_mlir import ir

    dims, element = element_type(str(attr.type))
    dtype = _torch_dtype(element)
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
    data = np.frombuffer(resources[name], dtype=torch.empty(0, dtype=_torch_dtype(element)).numpy().dtype).copy()
    return ir.DenseResourceElementsAttr.get_from_buffer(data, name, builtin_type, alignment=8)
