"""Tensors to and from NumPy arrays, bfloat16 included.

NumPy has no bfloat16; IREE's runtime and the TOSA reference model both use
ml_dtypes' bfloat16 (in memory and in .npy files, where it is stored as a
2-byte void type).
"""

from __future__ import annotations

import numpy as np
import torch


def to_numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        import ml_dtypes

        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def to_tensor(array: np.ndarray) -> torch.Tensor:
    if array.dtype.name == "bfloat16" or (array.dtype.kind == "V" and array.dtype.itemsize == 2):
        # np.asarray, not np.ascontiguousarray: the latter makes a 0-d array 1-d.
        return torch.from_numpy(np.asarray(array, order="C").view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(np.array(array))
