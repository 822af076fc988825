"""Helpers shared by the op-case files (the leading '_' keeps it out of discovery).

- `dtypes(id, fn, *inputs, dtypes=...)` expands one declaration into one case
  per dtype: every float32 input of the template takes that dtype, and the id
  gets the dtype's suffix (float32 keeps the bare id). `tol=ACC` picks the
  per-dtype tolerances of an accumulating op.
- `U(*shape)`: an input drawn from [-1, 1) (contractions, convolutions).
- Input generators for values make_tensor cannot draw: distinct values (no
  ties for sort/argmax), small integers stored as floats (so `eq` can be
  true), non-zero divisors, special values (inf/nan), permutations, masks.
"""

from __future__ import annotations

import torch
from torch.testing import make_tensor

from conformance import T, op
from conformance.cases.spec import caller_location
from conformance.dtypes import short_name

f64, f32, f16, bf16 = torch.float64, torch.float32, torch.float16, torch.bfloat16
i64, i32, i16, i8, u8, b8 = torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool

FLOATS = (f32, f16, bf16)
NUMERIC = (f32, f16, bf16, i32, i64)

# Tolerances of ops that accumulate (sums, matmul, conv, norms, softmax, ...);
# integer dtypes are compared exactly.
ACC = {f64: (1e-7, 1e-7), f32: (1e-4, 1e-4), f16: (1e-2, 1e-2), bf16: (5e-2, 5e-2)}
# The same, for results of magnitude ~100 (e.g. long dot products of [-9, 9) values).
ACC_LARGE = {f64: (1e-7, 1e-5), f32: (1e-4, 1e-3), f16: (1e-2, 1e-1), bf16: (5e-2, 1.0)}


def acc(dtype: torch.dtype, table=ACC) -> dict:
    """`rtol=..., atol=...` keywords of an accumulating op in `dtype` (empty: exact/default)."""
    if dtype not in table:
        return {}
    rtol, atol = table[dtype]
    return {"rtol": rtol, "atol": atol}


def suffix(dtype: torch.dtype) -> str:
    """The case-id suffix of `dtype`: `.i64`, `.bool`; none for float32, the default."""
    return "" if dtype == f32 else f".{short_name(dtype)}"


def U(*shape, dtype: torch.dtype = f32) -> T:
    """An operand in [-1, 1): sums of products stay O(sqrt(K)), so ACC means the same for every size."""
    return T(*shape, dtype=dtype, low=-1.0, high=1.0)


def retype(spec: T, dtype: torch.dtype) -> T:
    return T(*spec.shape, dtype=dtype, low=spec.low, high=spec.high, gen=spec.gen)


def dtypes(id: str, fn, *inputs: T, dtypes=FLOATS, tol: dict | None = None, **kw) -> list:
    """One case per dtype; float32 inputs of the template take the dtype, the id its suffix."""
    where = caller_location()
    cases = []
    for dt in dtypes:
        spec_inputs = [retype(s, dt) if s.dtype == f32 else s for s in inputs]
        extra = acc(dt, tol) if tol is not None else {}
        cases.append(op(id + suffix(dt), fn, *spec_inputs, defined_at=where, **extra, **kw))
    return cases


# -- generators: gen(shape, dtype, generator) -> tensor -----------------------


def distinct(scale: float = 1.0, offset: float | None = None):
    """Pairwise-distinct values (a shuffled arange, centred): no ties to break."""

    def gen(shape, dtype, g):
        n = 1
        for s in shape:
            n *= s
        base = torch.randperm(n, generator=g).to(torch.float64)
        centre = (n - 1) / 2 if offset is None else offset
        values = (base - centre) * scale
        return values.reshape(shape).to(dtype)

    return gen


def small_ints(low: int = -3, high: int = 3):
    """Integers in [low, high) in any dtype: floats that compare equal often."""

    def gen(shape, dtype, g):
        return torch.randint(low, high, shape, generator=g).to(dtype)

    return gen


def nonzero(low: float = 0.5, high: float = 4.0):
    """Magnitudes in [low, high) with a random sign: safe divisors."""

    def gen(shape, dtype, g):
        mag = torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low
        sign = torch.randint(0, 2, shape, generator=g) * 2 - 1
        if not dtype.is_floating_point:
            mag = mag.ceil()  # integer divisors: magnitudes in [ceil(low), ceil(high)]
        return (mag * sign).to(dtype)

    return gen


def specials(dtype_range: float = 5.0):
    """Finite values mixed with +inf, -inf and nan (about a quarter of them special)."""

    def gen(shape, dtype, g):
        values = (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1) * dtype_range
        pick = torch.randint(0, 8, shape, generator=g)
        values = torch.where(pick == 0, torch.tensor(float("inf"), dtype=torch.float64), values)
        values = torch.where(pick == 1, torch.tensor(float("-inf"), dtype=torch.float64), values)
        values = torch.where(pick == 2, torch.tensor(float("nan"), dtype=torch.float64), values)
        return values.to(dtype)

    return gen


def with_nans(share: float = 0.25):
    """Values in [-5, 5) with about `share` of them nan."""

    def gen(shape, dtype, g):
        values = (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1) * 5
        values[torch.rand(shape, generator=g) < share] = float("nan")
        return values.to(dtype)

    return gen


def mask(p: float = 0.5):
    """A bool tensor, True with probability p."""

    def gen(shape, dtype, g):
        return torch.rand(shape, generator=g) < p

    return gen


def perm_rows(high: int):
    """Along the last dimension, distinct indices from [0, high) in each row (scatter without duplicates)."""

    def gen(shape, dtype, g):
        rows = 1
        for s in shape[:-1]:
            rows *= s
        picked = [torch.randperm(high, generator=g)[: shape[-1]] for _ in range(rows)]
        out = torch.stack(picked) if picked else torch.empty(0, shape[-1], dtype=torch.int64)
        return out.reshape(shape).to(dtype)

    return gen


def perm_cols(high: int):
    """Along the first dimension, distinct indices from [0, high) in each column (scatter along dim 0)."""

    def gen(shape, dtype, g):
        moved = perm_rows(high)((*shape[1:], shape[0]), dtype, g)
        return moved.movedim(-1, 0).contiguous()

    return gen


def unique_index(high: int):
    """A 1-d index tensor of distinct entries from [0, high) (index_put/index_copy without duplicates)."""

    def gen(shape, dtype, g):
        n = 1
        for s in shape:
            n *= s
        return torch.randperm(high, generator=g)[:n].reshape(shape).to(dtype)

    return gen


def sorted_values(low: float = -5.0, high: float = 5.0):
    """Ascending along the last dimension (searchsorted/bucketize boundaries)."""

    def gen(shape, dtype, g):
        values = torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low
        return values.sort(-1).values.to(dtype)

    return gen


def transposed(low: float = -9.0, high: float = 9.0):
    """A tensor whose storage is transposed: shape as asked, strides of its transpose."""

    def gen(shape, dtype, g):
        base = make_tensor(tuple(reversed(shape)), dtype=dtype, device="cpu", low=low, high=high)
        return base.permute(*reversed(range(len(shape))))

    return gen


def strided(step: int = 2, low: float = -9.0, high: float = 9.0):
    """A view taking every `step`-th element of the last dimension of a larger tensor."""

    def gen(shape, dtype, g):
        base = make_tensor((*shape[:-1], shape[-1] * step), dtype=dtype, device="cpu", low=low, high=high)
        return base[..., ::step]

    return gen


def keep_diagonal(p: float = 0.5):
    """A bool attention mask (..., L, S) with every row keeping at least its diagonal/first key."""

    def gen(shape, dtype, g):
        m = torch.rand(shape, generator=g) < p
        L, S = shape[-2], shape[-1]
        eye = torch.zeros(L, S, dtype=torch.bool)
        eye[torch.arange(L), torch.arange(L) % S] = True
        return m | eye

    return gen
