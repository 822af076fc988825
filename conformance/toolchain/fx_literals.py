"""A program's weights into torch-mlir's IR from their bytes, not through Python lists.

torch-mlir's FX importer makes each tensor literal (a weight, a buffer, a
lifted constant) with `numpy.array(tensor.tolist())`: every element becomes
a Python number and back (its comment: `.numpy()` fails under a fake-tensor
mode, which our imports are not in). That was nine tenths of a model's
import: resnet50's 10 s, bert.base's 7 s, on every torch-mlir backend.

`LiteralsFromBytes` is an importer hook (FxImporterHooks.resolve_literal)
that hands torch-mlir, through its own attribute tracker, the attribute it
would have made: the same DenseResourceElementsAttr, named as it names it,
made when it would make it (blob names are numbered in that order), from
the tensor's own bytes. The IR is the same, byte for byte. What it does
not take it leaves to torch-mlir: a tensor of one element or none (a splat,
cheap anyway), a dtype numpy lacks, a float tensor holding a NaN (the
list's round trip quiets a signalling NaN, the bytes would not), a lazily
conjugated or negated view, anything that is not a plain CPU tensor.
"""

from __future__ import annotations

import numpy as np
import torch
from torch_mlir.extras.fx_importer import TORCH_DTYPE_TO_NPY_TYPE, FxImporterHooks, RefTracker, create_mlir_tensor_type
from torch_mlir.ir import DenseResourceElementsAttr


def _numpy_dtype(dtype: torch.dtype):
    try:
        return torch.empty(0, dtype=dtype).numpy().dtype
    except TypeError:  # bfloat16, float8: numpy has none
        return None


# The dtypes whose .numpy() is the dtype torch-mlir's importer converts to: its own table, asked.
FROM_BYTES = {dtype for dtype, npy in TORCH_DTYPE_TO_NPY_TYPE.items() if _numpy_dtype(dtype) == np.dtype(npy)}


class LiteralsFromBytes(FxImporterHooks):
    """Fills `tracker` (the importer's py_attr_tracker) with each tensor literal's attribute as it is met."""

    def __init__(self, tracker: RefTracker):
        self.tracker = tracker

    def resolve_literal(self, gni, literal, info):
        if isinstance(literal, torch.Tensor):
            mapping = self.tracker.track(literal)
            if mapping.is_empty:
                attribute = resource_attribute(literal)
                if attribute is not None:
                    mapping.value = attribute
        return None  # torch-mlir makes the op, taking the attribute from its tracker


def resource_attribute(tensor: torch.Tensor):
    """torch-mlir's DenseResourceElementsAttr for `tensor` (fx_importer._make_vtensor_literal_op), or None."""
    if type(tensor) not in (torch.Tensor, torch.nn.Parameter) or tensor.dtype not in FROM_BYTES or tensor.numel() < 2:
        return None
    if tensor.layout != torch.strided or tensor.device.type != "cpu" or tensor.is_conj() or tensor.is_neg():
        return None  # (a lazily conjugated or negated view has no .numpy(); its list is resolved)
    if (tensor.is_floating_point() or tensor.is_complex()) and bool(torch.isnan(tensor).any()):
        return None
    array = np.array(tensor.detach().numpy(), order="C", copy=True)  # owned: the attribute keeps the buffer
    name = f"torch_tensor_{'_'.join(str(d) for d in tensor.shape)}_{tensor.dtype}"
    return DenseResourceElementsAttr.get_from_buffer(array, name, create_mlir_tensor_type(tensor))
