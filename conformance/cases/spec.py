"""How a case is declared: input specs, dynamic dimensions, and the Case record.

A case is data plus a tiny function, declared in one line:

    op("tanh", torch.tanh, T(3, 4))
    op("add.broadcast", torch.add, T(3, 4), T(4))
    model("resnet18", ResNet18, T(1, 3, 224, 224), tags={"vision"})
    op("mul.given", torch.mul, Exact.tensors(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])))
    op("abs.onnx", torch.abs, Exact(load_inputs), reference=Stored(load_outputs, 1e-3, 1e-5, "ONNX test data"))

Inputs are drawn (T) or exact (Exact: tensors a suite's own test passes);
the reference is eager PyTorch (Eager, the default) or outputs a suite
ships (Stored). Everything here is cheap to construct: a registry of
thousands of cases is built on every start-up, and nothing is run (no
exact input or stored output loaded) until a case is executed.
"""

from __future__ import annotations

import contextlib
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, ContextManager, Iterable, Mapping, Sequence

import torch

from conformance import dtypes
from conformance.content import PROJECT_ROOT
from conformance.export_modes import EXPORT_MODES

KINDS = ("op", "model", "opinfo")
# What a case's build() returns: a PyTorch module, or an ONNX model (an onnx.ModelProto,
# judged against a Stored reference: there is no eager PyTorch to run). A backend
# names the formats it takes (Backend.formats); the others are SKIP there.
FORMATS = ("torch", "onnx")


class CaseError(ValueError):
    """A case declaration is malformed; the message names the case and where."""


class CaseUnavailable(Exception):
    """A case that cannot run here, found out when its exact inputs are loaded (in the worker).

    With `skip` it is a SKIP with `reason` (a package that is not installed,
    a test the importer cannot express); otherwise a CASE_ERROR at `stage`
    (e.g. the suite's own test fails in eager PyTorch).
    """

    def __init__(self, reason: str, *, skip: bool = False, stage: str = "case"):
        super().__init__(reason)
        self.reason, self.skip, self.stage = reason, skip, stage


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


def check_dtype(dtype: Any, where: str) -> None:
    """Raise CaseError naming `where` unless `dtype` is one a case input may have."""
    if dtype not in dtypes.INPUT_DTYPES:
        known = ", ".join(sorted(dtypes.name(d) for d in dtypes.INPUT_DTYPES))
        raise CaseError(f"{where}: input dtype {dtype!r} is not supported; use one of {known}")


@dataclass(frozen=True)
class Exact:
    """Exact input tensors: one list per input set, as a suite's own test passes them.

    `load()` returns the input sets. It is called in the process that runs the
    case, when the case runs, so a suite's inputs are never all in memory
    (torch-mlir's registry holds 2.8 GB of them); the tensors reach every
    backend and every bundle as they are. Every set runs on one compiled
    program: sets must agree on shapes except in the `dynamic` dims, a mapping
    {input index: dims} or a function returning one (called after `load()`),
    which are exported as dynamic with the sizes torch.export infers.
    """

    load: Callable[[], Sequence[Sequence[torch.Tensor]]]
    description: str = "exact"
    dynamic: Mapping[int, Iterable[int]] | Callable[[], Mapping[int, Iterable[int]]] | None = None

    @classmethod
    def tensors(cls, *tensors: torch.Tensor) -> Exact:
        """One input set, given now (small tensors; a large suite passes a loader instead)."""
        given = tuple(tensors)
        return cls(lambda: [list(given)], ", ".join(f"{dtypes.name(t.dtype)}{list(t.shape)}" for t in given))

    def dynamic_dims(self) -> dict[int, tuple[int, ...]]:
        """{input index: its dynamic dims}; for a function, call it only after `load()`."""
        found = self.dynamic() if callable(self.dynamic) else self.dynamic or {}
        return {int(i): tuple(sorted(dims)) for i, dims in found.items() if dims}


@dataclass(frozen=True)
class Eager:
    """The reference is eager PyTorch running the case's module (the default)."""

    label: ClassVar[str] = "eager"  # how mismatch explanations name the reference
    values: ClassVar[bool] = True  # outputs are judged on their values, not only their structure


@dataclass(frozen=True)
class Stored:
    """The reference is outputs a suite ships, judged with the suite's own tolerances.

    `outputs()` returns one expected output (a tensor or a structure of them)
    per input set; like exact inputs it is called in the worker, when the
    case runs. `source` names the data in explanations: "expected (ONNX test
    data) gives float32[3]" where an eager reference says "eager gives".
    `draws=True`: the outputs are one draw of a random op (ONNX's Bernoulli
    test), which no backend can reproduce; a backend's outputs are then
    judged on structure, dtype and shape only.
    """

    outputs: Callable[[], Sequence[Any]]
    rtol: float | None = None
    atol: float | None = None
    source: str = "stored outputs"
    draws: bool = False

    @property
    def label(self) -> str:
        return f"expected ({self.source})"

    @property
    def values(self) -> bool:
        return not self.draws


EAGER = Eager()


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
    weights are reproducible). Inputs are drawn from `inputs` (T specs) or,
    with `exact`, loaded as they are. `reference` is what outputs are judged
    against: eager PyTorch, or stored outputs (whose tolerances become the
    case's). Tolerances left as None mean torch.testing's per-dtype
    defaults. `skip` maps a backend name to the reason the case does not
    apply to it. `eager_context()`, when given, returns the context eager
    PyTorch runs the case in (the reference, the eager backend): a backend
    flag the suite's own test sets, such as
    `torch.backends.mkldnn.flags(enabled=False)`. `export_mode` is the
    torch.export mode the case needs ("strict" or "non-strict"; None: the
    run's --export-mode). `format` says what `build()` returns: "torch" (an
    nn.Module) or "onnx" (an onnx.ModelProto, with a Stored reference).
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
    exact: Exact | None = None
    reference: Eager | Stored = EAGER
    eager_context: Callable[[], ContextManager] | None = None
    export_mode: str | None = None
    format: str = "torch"

    def __post_init__(self):
        where = f" (defined at {self.defined_at})" if self.defined_at else ""
        if not self.id or any(c.isspace() for c in self.id) or "[" in self.id:
            raise CaseError(f"case id {self.id!r} must be non-empty, without spaces or '['{where}")
        if self.kind not in KINDS:
            raise CaseError(f"case {self.id!r}: kind {self.kind!r} is not one of {KINDS}{where}")
        for i, spec in enumerate(self.inputs):
            if not isinstance(spec, T):
                raise CaseError(f"case {self.id!r}: input {i} is {spec!r}, not a T(...) spec{where}")
            check_dtype(spec.dtype, f"case {self.id!r}, input {i}{where}")
        if self.exact is not None and (self.inputs or not isinstance(self.exact, Exact)):
            raise CaseError(f"case {self.id!r}: give T(...) inputs or one Exact(...), not both{where}")
        if not isinstance(self.reference, (Eager, Stored)):
            raise CaseError(f"case {self.id!r}: reference {self.reference!r} is neither Eager() nor Stored(...){where}")
        stored = self.reference
        if isinstance(stored, Stored) and stored.rtol is not None and (self.rtol, self.atol) != (stored.rtol, stored.atol):
            if self.rtol is not None:  # (equal ones: a copy of the case, made by dataclasses.replace)
                raise CaseError(f"case {self.id!r}: tolerances are given twice, on the case and on its Stored reference{where}")
            object.__setattr__(self, "rtol", self.reference.rtol)
            object.__setattr__(self, "atol", self.reference.atol)
        if self.format not in FORMATS:
            raise CaseError(f"case {self.id!r}: format {self.format!r} is not one of {FORMATS}{where}")
        if self.format != "torch" and not isinstance(self.reference, Stored):
            raise CaseError(f"case {self.id!r}: an {self.format} model has no eager PyTorch to compare with; give it a Stored reference{where}")
        if self.export_mode is not None and self.export_mode not in EXPORT_MODES:
            raise CaseError(f"case {self.id!r}: export_mode {self.export_mode!r} is not one of {EXPORT_MODES}{where}")
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
        if self.exact is not None:
            return self.exact.dynamic is not None
        return any(spec.dynamic_dims for spec in self.inputs)

    @property
    def size_count(self) -> int:
        """How many input sets drawn inputs run with: one, or one per dynamic size (exact inputs: as loaded)."""
        sizes = [len(d.sizes) for s in self.inputs for d in s.dynamic_dims.values()]
        return max(sizes, default=1)

    def eager(self) -> ContextManager:
        """The context eager PyTorch runs this case in."""
        return self.eager_context() if self.eager_context is not None else contextlib.nullcontext()

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

    def record(self) -> dict:
        """The case as reports know it (cases.json): kind, family, declared ops, tags, suite (`conformance list --json` adds more)."""
        return {"kind": self.kind, "family": self.family, "ops": list(self.ops), "tags": sorted(self.all_tags), "suite": self.suite}

    def describe_inputs(self) -> str:
        if self.exact is not None:
            return self.exact.description
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
    exact = [spec for spec in inputs if isinstance(spec, Exact)]
    if exact:  # op(id, fn, Exact(...)): the inputs are the Exact's
        if len(inputs) != 1:
            raise CaseError(f"case {id!r}: give T(...) inputs or one Exact(...), not both (defined at {caller_location(3)})")
        kw["exact"], inputs = exact[0], ()
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


def op(id: str, fn: Callable[..., Any], *inputs: T | Exact, ops: Iterable[str] | None = None, **kw) -> Case:
    """Declare an op case: `fn` is a function of the input tensors (T specs, or one Exact).

    `ops` names the ATen ops under test; by default `aten.<first part of id>`.
    """
    if ops is None:
        ops = (f"aten.{id.split('.')[0]}",)
    return _declare("op", id, lambda: FunctionModule(fn), inputs, ops=ops, **kw)


def model(id: str, factory: Callable[[], torch.nn.Module], *inputs: T | Exact, eval_mode: bool = True, **kw) -> Case:
    """Declare a model case: `factory()` builds the module (weights seeded).

    The module runs in eval mode; `eval_mode=False` keeps the mode `factory`
    left it in (a model tested in training mode).
    """

    def build():
        module = factory()
        return module.eval() if eval_mode else module

    return _declare("model", id, build, inputs, **kw)
