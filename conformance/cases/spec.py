"""How a case is declared: input specs, dynamic dimensions, and the Case record.

A case is data plus a tiny function, declared in one line:

    op("tanh", torch.tanh, T(3, 4))
    op("add.broadcast", torch.add, T(3, 4), T(4))
    model("resnet18", ResNet18, T(1, 3, 224, 224), tags={"vision"})

Everything here is cheap to construct: a registry of thousands of cases is
built on every start-up, and nothing is run until a case is executed.
"""

from __future__ import annotations

import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import torch

from conformance import dtypes
from conformance.content import PROJECT_ROOT

KINDS = ("op", "model", "opinfo")


class CaseError(ValueError):
    """A case declaration is malformed; the message names the case and where."""


@dataclass(frozen=True)
class Dyn:
    """A dynamic dimension: a named symbol and the sizes the case runs at.

    Every input dimension that uses the same Dyn shares one torch.export.Dim.
    The first size is the export example; the case runs once per size, so a
    backend compiles once and proves it handles at least two sizes.
    """

    name: str
    sizes: tuple[int, ...]

    def __init__(self, name: str, *sizes: int):
        if not sizes:
            raise CaseError(f"Dyn({name!r}) needs at least one size")
        if len(sizes) == 1:
            sizes = (sizes[0], 2 * sizes[0] + 1)
        if any(not isinstance(s, int) or s < 2 for s in sizes):
            # torch.export specialises sizes 0 and 1, so they cannot be dynamic.
            raise CaseError(f"Dyn({name!r}) sizes must be ints >= 2, got {sizes}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "sizes", tuple(sizes))


Generator = Callable[[tuple[int, ...], torch.dtype, torch.Generator], torch.Tensor]


@dataclass(frozen=True)
class T:
    """A tensor input: shape (ints or Dyn), dtype, and how values are drawn.

    Values come from torch.testing.make_tensor in [low, high) unless `gen`
    is given; `gen(shape, dtype, generator)` returns the tensor itself (for
    index tensors, permutations, masks with a given density, ...).
    """

    shape: tuple[int | Dyn, ...]
    dtype: torch.dtype = torch.float32
    low: float | None = None
    high: float | None = None
    gen: Generator | None = None

    def __init__(
        self,
        *shape: int | Dyn,
        dtype: torch.dtype = torch.float32,
        low: float | None = None,
        high: float | None = None,
        gen: Generator | None = None,
    ):
        if dtype not in dtypes.INPUT_DTYPES:  # anything else is a spec error at once
            known = ", ".join(sorted(str(d) for d in dtypes.INPUT_DTYPES))
            raise CaseError(f"input dtype {dtype!r} is not supported; use one of {known}")
        for dim in shape:
            if not isinstance(dim, Dyn) and (not isinstance(dim, int) or dim < 0):
                raise CaseError(f"input dimension {dim!r} is neither an int >= 0 nor a Dyn")
        object.__setattr__(self, "shape", tuple(shape))
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "gen", gen)

    @property
    def dynamic_dims(self) -> dict[int, Dyn]:
        return {i: d for i, d in enumerate(self.shape) if isinstance(d, Dyn)}

    def concrete_shape(self, size_index: int) -> tuple[int, ...]:
        """The shape at the `size_index`-th run (dynamic dims take that size)."""
        return tuple(
            d.sizes[min(size_index, len(d.sizes) - 1)] if isinstance(d, Dyn) else d
            for d in self.shape
        )

    def describe(self) -> str:
        dims = ",".join(d.name if isinstance(d, Dyn) else str(d) for d in self.shape)
        return f"{dtypes.name(self.dtype)}[{dims}]"


class FunctionModule(torch.nn.Module):
    """Wraps a plain function of tensors so it can be exported like a model."""

    def __init__(self, fn: Callable[..., Any]):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


@dataclass(frozen=True, eq=False)
class Case:
    """One end-to-end case: a module factory, its inputs, and how to judge it.

    `build()` returns the module (called under the case's seed, so random
    weights are reproducible). Tolerances left as None mean torch.testing's
    per-dtype defaults. `skip` maps a backend name to the reason the case
    does not apply to it.
    """

    id: str
    build: Callable[[], torch.nn.Module]
    inputs: tuple[T, ...]
    kind: str = "op"
    family: str = ""
    ops: tuple[str, ...] = ()
    tags: frozenset[str] = frozenset()
    rtol: float | None = None
    atol: float | None = None
    seed: int | None = None
    nondeterministic: bool = False
    skip: Mapping[str, str] = field(default_factory=dict)
    suite: str = "default"
    defined_at: str = ""
    origin: str = ""  # the source tree the case comes from (its changes invalidate cached results)

    def __post_init__(self):
        where = f" (defined at {self.defined_at})" if self.defined_at else ""
        if not self.id or any(c.isspace() for c in self.id) or "[" in self.id:
            raise CaseError(f"case id {self.id!r} must be non-empty, without spaces or '['{where}")
        if self.kind not in KINDS:
            raise CaseError(f"case {self.id!r}: kind {self.kind!r} is not one of {KINDS}{where}")
        for i, spec in enumerate(self.inputs):
            if not isinstance(spec, T):
                raise CaseError(f"case {self.id!r}: input {i} is {spec!r}, not a T(...) spec{where}")
        if (self.rtol is None) != (self.atol is None):
            raise CaseError(f"case {self.id!r}: give both rtol and atol, or neither{where}")
        dyns: dict[str, Dyn] = {}
        for spec in self.inputs:
            for d in spec.dynamic_dims.values():
                if dyns.setdefault(d.name, d) != d:
                    raise CaseError(f"case {self.id!r}: Dyn {d.name!r} is declared with two size lists{where}")

    @property
    def effective_seed(self) -> int:
        """The case's own seed: declared, or derived from its id (stable across runs)."""
        return self.seed if self.seed is not None else zlib.crc32(self.id.encode())

    @property
    def is_dynamic(self) -> bool:
        return any(spec.dynamic_dims for spec in self.inputs)

    @property
    def size_count(self) -> int:
        """How many input sets the case runs with: one, or one per dynamic size."""
        sizes = [len(d.sizes) for s in self.inputs for d in s.dynamic_dims.values()]
        return max(sizes, default=1)

    @property
    def all_tags(self) -> frozenset[str]:
        """Declared tags plus the ones implied: kind, family, dtype and dynamic."""
        implied = {self.kind}
        if self.family:
            implied.add(self.family)
        if self.is_dynamic:
            implied.add("dynamic")
        if self.nondeterministic:
            implied.add("nondeterministic")
        return self.tags | implied

    def describe_inputs(self) -> str:
        return ", ".join(spec.describe() for spec in self.inputs)


def caller_location(depth: int = 2) -> str:
    """`file:line` of the code `depth` frames up the stack; project files relative to the project root.

    The default is the caller of the function asking: a helper that declares
    cases for its caller passes `defined_at=caller_location()`, so the cases
    point at the declaration, not at the helper.
    """
    # sys._getframe, not inspect.stack(): the latter reads source files for every
    # frame and made loading a 1,500-case registry take 14 s.
    frame = sys._getframe(depth)
    path = Path(frame.f_code.co_filename).resolve()
    shown = path.relative_to(PROJECT_ROOT) if PROJECT_ROOT in path.parents else path
    return f"{shown}:{frame.f_lineno}"


def _declare(kind: str, id: str, build, inputs, *, tags: Iterable[str] = (), ops: Iterable[str] | None = None, **kw) -> Case:
    return Case(
        id=id,
        build=build,
        inputs=tuple(inputs),
        kind=kind,
        tags=frozenset(tags),
        ops=tuple(ops) if ops is not None else (),
        defined_at=kw.pop("defined_at", None) or caller_location(3),
        **kw,
    )


def op(id: str, fn: Callable[..., Any], *inputs: T, ops: Iterable[str] | None = None, **kw) -> Case:
    """Declare an op case: `fn` is a function of the input tensors.

    `ops` names the ATen ops under test; by default `aten.<first part of id>`.
    """
    if ops is None:
        ops = (f"aten.{id.split('.')[0]}",)
    return _declare("op", id, lambda: FunctionModule(fn), inputs, ops=ops, **kw)


def model(id: str, factory: Callable[[], torch.nn.Module], *inputs: T, **kw) -> Case:
    """Declare a model case: `factory()` builds the module (weights seeded, eval mode)."""

    def build():
        return factory().eval()

    return _declare("model", id, build, inputs, **kw)
