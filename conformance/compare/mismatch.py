"""A mismatch, and how the facts in its explanation are spelled.

Explanations are pinned in xfail sets, so a value is spelled the same way
everywhere: integers exactly (8589934591, never 8.58993e+09), bools as
True/False, floats to six significant digits.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
import torch


@dataclass
class Mismatch:
    code: str
    explanation: str
    # Which output differs, for whoever measures it further (how far from float64, which op):
    # its index among the flattened outputs, and eager's and the backend's values there.
    leaf: int | None = field(default=None, compare=False, repr=False)
    expected: Any = field(default=None, compare=False, repr=False)
    actual: Any = field(default=None, compare=False, repr=False)


# What the outputs are compared with, as explanations name it: "eager" (the
# default), or a suite's stored outputs ("expected (ONNX test data)"). One
# comparison has one reference, so it is set once by compare() for all the
# checks below it rather than passed through each of them.
_REFERENCE: ContextVar[str] = ContextVar("reference", default="eager")


def reference() -> str:
    return _REFERENCE.get()


@contextmanager
def comparing_with(name: str) -> Iterator[None]:
    token = _REFERENCE.set(name)
    try:
        yield
    finally:
        _REFERENCE.reset(token)


def as_tensor(value: Any) -> torch.Tensor | None:
    """`value` as a tensor (NumPy arrays and Python scalars included), or None when it is not a number."""
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(value))
    if isinstance(value, np.generic):
        return torch.from_numpy(np.asarray(value))
    if isinstance(value, (bool, int, float)):
        return torch.tensor(value)
    return None


def describe(value: Any) -> str:
    """`float32[3, 4]` for a tensor, the type's name for anything else."""
    t = as_tensor(value)
    if t is None:
        return type(value).__name__
    return f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}"


def index(flat_index: int, shape: torch.Size) -> str:
    """A flat element index as the tensor's own, e.g. `[1, 2]`."""
    if len(shape) == 0:
        return "[]"
    return str([int(i) for i in np.unravel_index(flat_index, tuple(shape))])


def element(t: torch.Tensor, flat_index: int) -> Any:
    """The element at `flat_index` as a Python number, read from `t` itself (no lossy copy)."""
    if t.dim() == 0:
        return t.item()
    return t[tuple(int(i) for i in np.unravel_index(flat_index, tuple(t.shape)))].item()


def value(number: Any) -> str:
    """A number as an explanation prints it."""
    if isinstance(number, int):  # bools too: True, False
        return str(number)
    return f"{number:.6g}"


def amount(number: float | int) -> str:
    """An error's size: integers exactly, the rest to three significant digits."""
    return str(number) if isinstance(number, int) else f"{number:.3g}"
