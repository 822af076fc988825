"""Tensors to and from NumPy arrays, bfloat16 and float8 included.

NumPy has no bfloat16 or float8; ml_dtypes has both. IREE's runtime takes
and returns ml_dtypes arrays of every dtype in ML_DTYPES; the TOSA
reference model and .npy files know bfloat16 only (a .npy file stores it as
a 2-byte void type, float8 as a 1-byte one that loses the format, which is
why bundles keep float8 as .pt).
"""

from __future__ import annotations

import numpy as np
import torch

# torch dtypes NumPy lacks, by their ml_dtypes name (the same bits, element by element).
ML_DTYPES = {
    torch.bfloat16: "bfloat16",
    torch.float8_e4m3fn: "float8_e4m3fn",
    torch.float8_e4m3fnuz: "float8_e4m3fnuz",
    torch.float8_e5m2: "float8_e5m2",
    torch.float8_e5m2fnuz: "float8_e5m2fnuz",
    torch.float8_e8m0fnu: "float8_e8m0fnu",
}
_BY_ML_NAME = {name: dtype for dtype, name in ML_DTYPES.items()}
_SAME_BITS = {1: (torch.uint8, np.uint8), 2: (torch.int16, np.int16)}


def _as_ml_dtypes(t: torch.Tensor) -> np.ndarray:
    import ml_dtypes

    carrier, _ = _SAME_BITS[t.element_size()]
    return t.view(carrier).numpy().view(getattr(ml_dtypes, ML_DTYPES[t.dtype]))


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """For .npy files and the TOSA reference model: bfloat16 as ml_dtypes, float8 refused (TypeError)."""
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return _as_ml_dtypes(t)
    return t.numpy()


def to_runtime(t: torch.Tensor) -> np.ndarray:
    """For IREE's runtime: every dtype of ML_DTYPES as ml_dtypes; a 0-d tensor stays 0-d."""
    t = t.detach().contiguous()
    if t.dtype in ML_DTYPES:
        return _as_ml_dtypes(t)
    return t.numpy()


def to_tensor(array: np.ndarray) -> torch.Tensor:
    """A NumPy or ml_dtypes array as a tensor of the same dtype (a .npy file's 2-byte void type is bfloat16)."""
    dtype = _BY_ML_NAME.get(array.dtype.name)
    if dtype is None and array.dtype.kind == "V" and array.dtype.itemsize == 2:
        dtype = torch.bfloat16
    if dtype is not None:
        _, carrier = _SAME_BITS[array.dtype.itemsize]
        # np.array, not np.ascontiguousarray: the latter makes a 0-d array 1-d.
        return torch.from_numpy(np.array(array, order="C").view(carrier)).view(dtype)
    return torch.from_numpy(np.array(array))
