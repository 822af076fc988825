"""The typed table of ops a fuzz run draws from: what each takes, its attributes' domains, and how it is written.

One row per op. A row says
  - its source: a Python expression, `{0}`, `{1}` for its operands and
    `{name}` for the attributes `attrs` draws (dims, keepdim, bounds ...);
  - which values it takes (Operand): dtype kinds, ranks, a domain its
    values must lie in (log: positive), whether they must be exact;
  - how each further operand's shape follows from the first (Relation:
    broadcast, same shape, the other side of a matmul, ...);
  - whether it keeps values exact (see below), and whether it bakes sizes
    into its attributes (reshape, narrow: not on dynamic dims).

Result shapes and dtypes are not restated here: the generator runs each
op on its actual operands (tiny tensors) and takes what PyTorch gives,
its own shape and type-promotion rules, so no second copy can disagree.
An attribute combination PyTorch refuses is simply not added.

Exact values: a value every IEEE backend computes to the same bits (drawn
inputs, and what neg, abs, max, comparisons, shape ops, integer
arithmetic make of them). Discontinuous ops (floor, sign, comparisons,
argmax, a cast to an integer) take exact values only: applied to a
rounded value, a last-bit difference a backend may rightly make would
flip their answer, a false failure (NNSmith's "numeric instability").
"""

from __future__ import annotations

import ast

from dataclasses import dataclass, field
from typing import Callable

import torch
from hypothesis import strategies as st

# Dtype kinds an operand accepts.
FLOAT, INT, BOOL = "float", "int", "bool"
NUMERIC = (FLOAT, INT)
ANY = (FLOAT, INT, BOOL)
BITS = (INT, BOOL)


def kind_of(dtype: torch.dtype) -> str:
    if dtype == torch.bool:
        return BOOL
    return FLOAT if dtype.is_floating_point else INT


# -- domains: what an operand's values must satisfy (checked on the actual values) --

Domain = Callable[[torch.Tensor], bool]


def anything(t: torch.Tensor) -> bool:
    return True


def positive(t: torch.Tensor) -> bool:
    return t.numel() == 0 or float(t.min()) > 0.05


def non_negative(t: torch.Tensor) -> bool:
    return t.numel() == 0 or float(t.min()) >= 0


def away_from_zero(t: torch.Tensor) -> bool:
    return t.numel() == 0 or float(t.abs().min()) > 0.05


def bounded(limit: float) -> Domain:
    def within(t: torch.Tensor) -> bool:
        return t.numel() == 0 or float(t.abs().max()) <= limit

    within.__name__ = f"bounded({limit})"
    return within


def between(low: float, high: float) -> Domain:
    def inside(t: torch.Tensor) -> bool:
        return t.numel() == 0 or (float(t.min()) >= low and float(t.max()) <= high)

    return inside


# Drawn values that satisfy a domain from the start: (low, high) for make_tensor.
DOMAIN_RANGES = {positive: (0.5, 4.0), non_negative: (0.0, 4.0), away_from_zero: (0.5, 4.0)}


@dataclass(frozen=True)
class Operand:
    kinds: tuple[str, ...] = ANY
    min_rank: int = 0
    max_rank: int = 4
    domain: Domain = anything
    exact: bool = False  # only exact values (see the module's docstring)
    static: bool = False  # no dynamic dim (its sizes are baked into the op's attributes)
    range: tuple[float, float] | None = None  # values a fresh input for it is drawn from


# How an operand after the first gets its shape from the first's (see strategies.py).
BROADCAST = "broadcast"  # any shape that broadcasts with it
SAME = "same"  # the same shape
MATMUL = "matmul"  # [..., k] @ [k, n] / batched
CAT = "cat"  # the same shape but in `dim`
INDEX = "index"  # a 1-d int64 index into `dim`


@dataclass(frozen=True)
class OpSpec:
    name: str
    aten: str  # the ATen op exercised, as torch.export names it (a case's ops=)
    source: str  # e.g. "torch.sum({0}, dim={dim}, keepdim={keepdim})"
    operands: tuple[Operand, ...]
    relations: tuple[str, ...] = ()  # one per operand after the first
    attrs: Callable | None = None  # (draw, shapes of the operands, the run's dtypes) -> {name: literal}
    keeps_exact: bool = False  # float output exact when its operands are
    check: Callable | None = None  # (operand tensors, attrs) -> bool: a condition on the actual values
    max_abs: float = 1e4  # a float result beyond this is not kept (precision, overflow later)
    tags: frozenset[str] = field(default_factory=frozenset)

    def render(self, attrs: dict) -> str:
        """The call's template: attributes filled in, `{0}`, `{1}` left for the operands."""
        return self.source.format(*(f"{{{i}}}" for i in range(len(self.operands))), **attrs)


# -- attribute domains -------------------------------------------------------


def _rank(shapes) -> int:
    return len(shapes[0])


def dim_attrs(keepdim: bool = True, several: bool = False):
    """`dim` in [-rank, rank) (negative dims exercise normalisation), `keepdim` a bool."""

    def draw_attrs(draw, shapes, *_):
        rank = max(_rank(shapes), 1)
        if several and rank > 1 and draw(st.booleans()):
            dims = draw(st.lists(st.integers(0, rank - 1), min_size=2, max_size=min(rank, 3), unique=True))
            dim = repr(tuple(dims))
        else:
            dim = draw(st.integers(-rank, rank - 1))
        out = {"dim": dim}
        if keepdim:
            out["keepdim"] = draw(st.booleans())
        return out

    return draw_attrs


def clamp_attrs(draw, shapes, *_):
    low = draw(st.integers(-3, 0))
    return {"low": low, "high": low + draw(st.integers(1, 4))}


def unsqueeze_attrs(draw, shapes, *_):
    rank = _rank(shapes)
    return {"dim": draw(st.integers(-rank - 1, rank))}


def flatten_attrs(draw, shapes, *_):
    rank = max(_rank(shapes), 1)
    start = draw(st.integers(0, rank - 1))
    return {"start": start, "end": draw(st.integers(start, rank - 1))}


def transpose_attrs(draw, shapes, *_):
    rank = max(_rank(shapes), 1)
    return {"a": draw(st.integers(0, rank - 1)), "b": draw(st.integers(-rank, rank - 1))}


def permute_attrs(draw, shapes, *_):
    rank = _rank(shapes)
    return {"perm": repr(tuple(draw(st.permutations(range(rank)))))}


def reshape_attrs(draw, shapes, *_):
    """A shape of the same number of elements: its factors regrouped, one of them perhaps -1."""
    numel = 1
    for d in shapes[0]:
        numel *= d
    factors, n, p = [], numel, 2
    while n > 1 and p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    if n > 1:
        factors.append(n)
    factors = draw(st.permutations(factors)) if factors else []
    rank = draw(st.integers(1, 4))
    shape = [1] * rank
    for i, f in enumerate(factors):
        shape[draw(st.integers(0, rank - 1)) if i else 0] *= f
    if draw(st.booleans()):
        shape[draw(st.integers(0, rank - 1))] = -1
    return {"shape": repr(tuple(shape))}


def narrow_attrs(draw, shapes, *_):
    rank = max(_rank(shapes), 1)
    dim = draw(st.integers(0, rank - 1))
    size = shapes[0][dim] if shapes[0] else 1
    start = draw(st.integers(0, max(size - 1, 0)))
    return {"dim": dim, "start": start, "length": draw(st.integers(0 if size == 0 else 1, size - start))}


def slice_attrs(draw, shapes, *_):
    """`x[:, a:b:s]`: a slice with a step in one dim (aten.slice)."""
    rank = max(_rank(shapes), 1)
    dim = draw(st.integers(0, rank - 1))
    size = shapes[0][dim] if shapes[0] else 1
    start = draw(st.integers(0, max(size - 1, 0)))
    step = draw(st.integers(1, 3))
    prefix = ":, " * dim
    return {"index": f"{prefix}{start}::{step}"}


def cat_attrs(draw, shapes, *_):
    rank = max(_rank(shapes), 1)
    return {"dim": draw(st.integers(-rank, rank - 1))}


def stack_attrs(draw, shapes, *_):
    rank = _rank(shapes)
    return {"dim": draw(st.integers(-rank - 1, rank))}


def expand_attrs(draw, shapes, *_):
    """Size-1 dims grown, -1 elsewhere (kept as they are, dynamic ones too), perhaps a new leading dim."""
    sizes = [draw(st.integers(2, 4)) if d == 1 else -1 for d in shapes[0]]
    if draw(st.booleans()):
        sizes.insert(0, draw(st.integers(1, 3)))
    return {"shape": repr(tuple(sizes))}


def flip_attrs(draw, shapes, *_):
    rank = max(_rank(shapes), 1)
    return {"dims": repr(tuple(draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True))))}


def cast_attrs(draw, shapes, dtypes):
    """A cast to one of the run's dtypes."""
    return {"dtype": draw(st.sampled_from(dtypes))}


def pow_attrs(draw, shapes, *_):
    return {"exponent": draw(st.sampled_from((2, 3, 0.5, -1, 1.5)))}


def layer_norm_attrs(draw, shapes, *_):
    rank = max(_rank(shapes), 1)
    last = draw(st.integers(1, min(rank, 2)))
    return {"shape": repr(tuple(shapes[0][-last:]))}


# -- checks on actual values ---------------------------------------------------


def no_ties(operands, attrs) -> bool:
    """argmax/argmin: the extreme along `dim` is unique (which of equal ones is first is torch's rule, not a backend's duty)."""
    x = operands[0]
    if x.dim() == 0 or x.numel() == 0:
        return x.numel() > 0
    dim = int(attrs["dim"])
    if x.shape[dim] < 2:
        return True
    top = x.double().topk(2, dim).values
    bottom = (-x.double()).topk(2, dim).values
    return bool((top.select(dim, 0) != top.select(dim, 1)).all() and (bottom.select(dim, 0) != bottom.select(dim, 1)).all())


def small_product(operands, attrs) -> bool:
    x = operands[0]
    return x.numel() == 0 or float(x.abs().max()) <= 2.0


def nonempty_dim(operands, attrs) -> bool:
    x = operands[0]
    if x.dim() == 0:
        return True
    dims = attrs["dim"] if isinstance(attrs["dim"], int) else ast.literal_eval(attrs["dim"])
    dims = dims if isinstance(dims, tuple) else (dims,)
    return all(x.shape[d] > 0 for d in dims) and x.numel() > 0


def at_least_two(operands, attrs) -> bool:
    x = operands[0]
    return x.dim() > 0 and x.shape[int(attrs["dim"])] >= 2


# -- the table -------------------------------------------------------------------

F = Operand((FLOAT,))
N = Operand(NUMERIC)
A = Operand(ANY)
EXACT_ANY = Operand(ANY, exact=True)
EXACT_F = Operand((FLOAT,), exact=True)


def unary(name, source=None, operand=F, aten=None, keeps_exact=False, **kw) -> OpSpec:
    return OpSpec(name, aten or f"aten.{name}", source or f"torch.{name}({{0}})", (operand,), keeps_exact=keeps_exact, **kw)


def binary(name, source=None, first=N, second=None, aten=None, keeps_exact=False, **kw) -> OpSpec:
    return OpSpec(name, aten or f"aten.{name}", source or f"torch.{name}({{0}}, {{1}})", (first, second or first), (BROADCAST,),
                  keeps_exact=keeps_exact, **kw)


def reduction(name, operand=N, keepdim=True, several=False, aten=None, **kw) -> OpSpec:
    keep = ", keepdim={keepdim}" if keepdim else ""
    return OpSpec(name, aten or f"aten.{name}", f"torch.{name}({{0}}, dim={{dim}}{keep})", (operand,),
                  attrs=dim_attrs(keepdim, several), **{"check": nonempty_dim, **kw})


TABLE: tuple[OpSpec, ...] = (
    # elementwise, one operand
    unary("neg", operand=N, keeps_exact=True),
    unary("abs", operand=N, keeps_exact=True),
    unary("relu", operand=N, keeps_exact=True),
    unary("sigmoid"),
    unary("tanh"),
    unary("exp", operand=Operand((FLOAT,), domain=bounded(8.0))),
    unary("log", operand=Operand((FLOAT,), domain=positive, range=(0.5, 4.0))),
    unary("sqrt", operand=Operand((FLOAT,), domain=non_negative, range=(0.0, 4.0))),
    unary("rsqrt", operand=Operand((FLOAT,), domain=positive, range=(0.5, 4.0))),
    unary("reciprocal", operand=Operand((FLOAT,), domain=away_from_zero, range=(0.5, 4.0))),
    unary("sin", operand=Operand((FLOAT,), domain=bounded(50.0))),
    unary("cos", operand=Operand((FLOAT,), domain=bounded(50.0))),
    unary("erf"),
    unary("gelu", "torch.nn.functional.gelu({0})"),
    unary("silu", "torch.nn.functional.silu({0})"),
    unary("square", operand=N),
    unary("floor", operand=EXACT_F, keeps_exact=True),
    unary("ceil", operand=EXACT_F, keeps_exact=True),
    unary("round", operand=EXACT_F, keeps_exact=True),
    unary("sign", operand=Operand(NUMERIC, exact=True), keeps_exact=True),
    unary("logical_not", operand=EXACT_ANY),
    unary("bitwise_not", operand=Operand(BITS)),
    OpSpec("clamp", "aten.clamp", "torch.clamp({0}, min={low}, max={high})", (N,), attrs=clamp_attrs, keeps_exact=True),
    OpSpec("pow", "aten.pow", "torch.pow({0}, {exponent})", (Operand((FLOAT,), domain=between(0.1, 8.0), range=(0.5, 2.0)),),
           attrs=pow_attrs),
    # elementwise, two or three operands (broadcasting)
    binary("add"),
    binary("sub"),
    binary("mul"),
    binary("div", second=Operand(NUMERIC, domain=away_from_zero, range=(0.5, 4.0))),
    binary("maximum", keeps_exact=True),
    binary("minimum", keeps_exact=True),
    binary("remainder", first=Operand((INT,)), second=Operand((INT,), domain=positive, range=(1, 5))),
    binary("eq", first=EXACT_ANY),
    binary("ne", first=EXACT_ANY),
    binary("lt", first=Operand(NUMERIC, exact=True)),
    binary("ge", first=Operand(NUMERIC, exact=True)),
    binary("logical_and", first=EXACT_ANY),
    binary("logical_or", first=EXACT_ANY),
    binary("bitwise_and", first=Operand(BITS)),
    binary("bitwise_xor", first=Operand(BITS)),
    OpSpec("where", "aten.where", "torch.where({0}, {1}, {2})", (Operand((BOOL,), exact=True), N, N), (BROADCAST, BROADCAST),
           keeps_exact=True),
    # reductions
    reduction("sum", operand=A, several=True),
    reduction("mean", operand=F, several=True),
    reduction("amax", several=True, keeps_exact=True),
    reduction("amin", several=True, keeps_exact=True),
    reduction("argmax", operand=Operand(NUMERIC, exact=True, min_rank=1), check=no_ties),
    reduction("argmin", operand=Operand(NUMERIC, exact=True, min_rank=1), check=no_ties),
    reduction("prod", operand=Operand((FLOAT,), min_rank=1, range=(0.5, 1.5)), check=small_product),
    reduction("any", operand=Operand((BOOL,), min_rank=1)),
    reduction("all", operand=Operand((BOOL,), min_rank=1)),
    reduction("logsumexp", operand=Operand((FLOAT,), min_rank=1, domain=bounded(8.0))),
    reduction("var", operand=Operand((FLOAT,), min_rank=1), check=at_least_two),
    reduction("cumsum", operand=Operand(NUMERIC, min_rank=1), keepdim=False),
    reduction("softmax", operand=Operand((FLOAT,), min_rank=1), keepdim=False),
    reduction("log_softmax", operand=Operand((FLOAT,), min_rank=1), keepdim=False),
    # layout
    OpSpec("reshape", "aten.reshape", "{0}.reshape({shape})", (Operand(ANY, static=True),), attrs=reshape_attrs, keeps_exact=True),
    OpSpec("flatten", "aten.flatten", "torch.flatten({0}, {start}, {end})", (Operand(ANY, min_rank=1),), attrs=flatten_attrs,
           keeps_exact=True),
    OpSpec("unsqueeze", "aten.unsqueeze", "torch.unsqueeze({0}, {dim})", (Operand(ANY, max_rank=3),), attrs=unsqueeze_attrs,
           keeps_exact=True),
    OpSpec("squeeze", "aten.squeeze", "torch.squeeze({0}, {dim})", (Operand(ANY, min_rank=1, static=True),),
           attrs=dim_attrs(keepdim=False), keeps_exact=True),
    OpSpec("permute", "aten.permute", "{0}.permute({perm})", (Operand(ANY, min_rank=2),), attrs=permute_attrs, keeps_exact=True),
    OpSpec("transpose", "aten.transpose", "torch.transpose({0}, {a}, {b})", (Operand(ANY, min_rank=2),), attrs=transpose_attrs,
           keeps_exact=True),
    OpSpec("narrow", "aten.narrow", "torch.narrow({0}, {dim}, {start}, {length})", (Operand(ANY, min_rank=1, static=True),),
           attrs=narrow_attrs, keeps_exact=True),
    OpSpec("slice", "aten.slice", "{0}[{index}]", (Operand(ANY, min_rank=1, static=True),), attrs=slice_attrs, keeps_exact=True),
    OpSpec("expand", "aten.expand", "{0}.expand{shape}", (Operand(ANY, max_rank=3),), attrs=expand_attrs, keeps_exact=True),
    OpSpec("flip", "aten.flip", "torch.flip({0}, {dims})", (Operand(ANY, min_rank=1),), attrs=flip_attrs, keeps_exact=True),
    OpSpec("cat", "aten.cat", "torch.cat([{0}, {1}], dim={dim})", (Operand(ANY, min_rank=1), A), (CAT,), attrs=cat_attrs,
           keeps_exact=True),
    OpSpec("stack", "aten.stack", "torch.stack([{0}, {1}], dim={dim})", (Operand(ANY, max_rank=3), A), (SAME,), attrs=stack_attrs,
           keeps_exact=True),
    OpSpec("index_select", "aten.index_select", "torch.index_select({0}, {dim}, {1})", (Operand(ANY, min_rank=1), Operand((INT,))),
           (INDEX,), attrs=dim_attrs(keepdim=False), keeps_exact=True),
    OpSpec("to", "aten.to", "{0}.to(torch.{dtype})", (EXACT_ANY,), attrs=cast_attrs, keeps_exact=True),
    OpSpec("to_float", "aten.to", "{0}.to(torch.float32)", (Operand(BITS),), keeps_exact=True),
    # linear algebra, normalisation
    OpSpec("matmul", "aten.matmul", "torch.matmul({0}, {1})", (Operand((FLOAT,), min_rank=1, max_rank=3), F), (MATMUL,)),
    OpSpec("layer_norm", "aten.layer_norm", "torch.nn.functional.layer_norm({0}, {shape})",
           (Operand((FLOAT,), min_rank=1, static=True),), attrs=layer_norm_attrs),
)

BY_NAME = {spec.name: spec for spec in TABLE}


def select(names: list[str] | None, leave_out: list[str] | None = None) -> tuple[OpSpec, ...]:
    """The rows named (all by default), less those left out; a name not in the table is an error naming the known ones."""
    for name in [*(names or []), *(leave_out or [])]:
        if name not in BY_NAME:
            raise ValueError(f"no op {name!r} in the fuzz table (known: {', '.join(sorted(BY_NAME))})")
    chosen = [BY_NAME[n] for n in names] if names else list(TABLE)
    return tuple(s for s in chosen if s.name not in set(leave_out or ()))
