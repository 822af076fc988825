"""Turning PyTorch's OpInfo samples into cases (the helpers of cases/opinfo.py).

Every OpInfo of `torch.testing._internal.common_methods_invocations.op_db`
that supports float32 on CPU gives its first MAX_SAMPLES_PER_OP float32 CPU
sample inputs; each sample that survives the exclusion rules below becomes
one case whose module's forward takes the sample's tensors and rebuilds the
call `op.op(input, *args, **kwargs)` with the non-tensor arguments baked in.

Case ids are `opinfo.<op>[.<variant>].<sample index>.<hash>`: the index is
the sample's position in OpInfo's own list (so a rule that drops a sample
never renumbers the others) and the hash covers the shapes, dtypes and
non-tensor arguments in a canonical text form. Like OpInfo's own tests,
torch's, Python's and NumPy's generators are seeded (with common_utils.SEED)
before every sample is drawn, so two processes list the same ids with the
same input values, whatever else they loaded; the generators' states are
restored afterwards. meshgrid's samples come in set order (it changes with
PYTHONHASHSEED) and are sorted first (SET_ORDERED_OPS).

The exclusion rules are cheap static tests (op names, sample arguments,
tensor properties), decided from a census that runs every sample in eager
(`python cases/_opinfo.py`, see `census()`): it counts what each rule
removes and reports any kept sample that fails in eager, returns something
other than tensors, or is nondeterministic, so a new torch release that
breaks a rule shows up there rather than as eager FAILs.

Counts below (from the census) are samples removed with torch 2.13.0 out
of the 18,762 float32 CPU samples of the 677 OpInfo entries (of 702) that
support float32 on CPU. The cap comes first; of the rest, a sample counts
under the first rule that removes it, in the order of RULES. What is left:
5,456 samples of 636 entries.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import hashlib
import linecache
import random
import re
import warnings
from typing import Any, Iterator

import torch

from conformance.cases.spec import Case, Exact, T
from conformance import dtypes

# common_utils.SEED: the seed OpInfo's own tests draw samples with.
SEED = 1234

# -- size ----------------------------------------------------------------------
# OpInfo has 18,762 float32 CPU samples; some ops enumerate a parameter grid
# (max_pool2d: 1,440 samples, logspace: 1,201), the median op has 8. Taking
# each op's first 16 keeps every op and most of the variety at a third of
# the cases (a backend compiles each case), and since sample functions are
# generators it also skips drawing the rest: 5,854 samples drawn in ~2 s
# instead of 18,762 in ~18 s. None takes them all.
MAX_SAMPLES_PER_OP: int | None = 16
# Samples whose tensors hold more than this many elements in all are left
# out: every process that loads the suite keeps every case's tensors.
MAX_SAMPLE_ELEMENTS = 1 << 20

# Comparing in float32 at torch.testing's defaults (rtol 1.3e-6, atol 1e-5)
# is right for elementwise and data-movement ops, whose result a compiler
# has no reason to change. Ops that accumulate (reductions, matmul, conv,
# norms, softmax, linear algebra, FFT, pooling, interpolation, losses) may
# sum in another order or use another algorithm; they get this tolerance.
LOOSE_RTOL = 1e-4
LOOSE_ATOL = 1e-4

# -- exclusion rules -----------------------------------------------------------
# Rule name -> reason; the comment above each gives the census count. "op"
# rules drop every sample of an op without drawing them; the others look at
# one sample.
RULES: dict[str, str] = {
    # 12,908: samples past each op's first MAX_SAMPLES_PER_OP (see above).
    "beyond-cap": "beyond the op's first MAX_SAMPLES_PER_OP samples",
    # op, 39: jiterator_* compile CUDA kernels at run time and raise on CPU.
    "needs-gpu": "the op runs on CUDA/ROCm only",
    # 190: the op draws random numbers (OpInfo calls it through
    # wrapper_set_seed so its own tests repeat): bernoulli, normal, rand*,
    # randint*, multinomial, uniform, cauchy, exponential, geometric,
    # log_normal, the dropouts, rrelu, fractional_max_pool*, svd_lowrank,
    # pca_lowrank, and scaled_dot_product_attention / multi_head_attention
    # with dropout. A backend's generator cannot match eager's. Samples that
    # switch the randomness off (training=False, p=0 or dropout_p=0) stay:
    # 66 of them, see _randomness_off.
    "random": "the op draws random numbers",
    # op, 47: empty, empty_like, empty_strided, empty_permuted, new_empty,
    # new_empty_strided return uninitialised memory; two eager runs differ.
    "uninitialised": "the op returns uninitialised memory",
    # op, 38: allclose, equal, item (a Python bool or number) and
    # broadcast_shapes (a torch.Size) return no tensor to compare.
    "non-tensor-output": "the op returns a Python value, not tensors",
    # op, 26: sparse.sampled_addmm (sparse CSR in and out), sparse.mm.reduce,
    # to_sparse (sparse out).
    "sparse": "the op takes or returns sparse tensors",
    # op, 3: as_strided.partial_views samples are views into a larger storage
    # that as_strided reaches past; a case's inputs are tensors of their own,
    # so eager reads out of bounds (RuntimeError) or other memory.
    "storage-view": "the sample relies on the storage around a view",
    # op, 41: nn.functional.max_unpool{1,2,3}d.grad (see DUPLICATE_OPS).
    "duplicate": "the samples repeat those of another OpInfo entry",
    # 0: a tensor that is not a strided CPU tensor of a dtype T() accepts
    # (complex, sparse, requires_grad, another device). The op rules above
    # already catch every such sample of this torch; kept as a guard.
    "unsupported-tensor": "a tensor that is not a strided CPU tensor of a supported dtype",
    # 0: an argument without a canonical text (a lambda, an object whose
    # repr holds an address) would make the id differ between processes.
    "no-canonical-text": "a non-tensor argument without a stable text form for the id",
    # 6: grid_sampler_3d's 20x21x22x23x24 inputs (4.6M elements, 18 MB each,
    # kept in every process that loads the suite).
    "too-large": "tensors larger than MAX_SAMPLE_ELEMENTS in all",
    # 8: linalg.lstsq and linalg.lstsq.grad_oriented with driver="gelsy":
    # two eager runs of the same inputs differ (LAPACK gelsy on this build).
    "nondeterministic-eager": "eager gives different results on two runs",
}

NEEDS_GPU_PREFIX = "jiterator_"
UNINITIALISED_OPS = frozenset(
    {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided"}
)
NON_TENSOR_OUTPUT_OPS = frozenset({"allclose", "equal", "item", "broadcast_shapes"})
SPARSE_OPS = frozenset({"sparse.sampled_addmm", "sparse.mm", "to_sparse"})
STORAGE_VIEW_OPS = frozenset({"as_strided.partial_views"})
# max_unpool*.grad samples are the max_unpool samples whose indices are
# unique (for gradcheck): the same forward calls as the max_unpool entries,
# and drawing them costs 1.4 s (max_unpool1d.grad alone 1.2 s: it draws
# max_pool samples until enough have unique indices), a fifth of cases().
DUPLICATE_OPS = frozenset(
    {"nn.functional.max_unpool1d.grad", "nn.functional.max_unpool2d.grad", "nn.functional.max_unpool3d.grad"}
)
# Ops whose sample functions iterate over a set of strings, so the order of
# their samples changes with PYTHONHASHSEED: their samples are sorted by
# their canonical text before they are numbered.
SET_ORDERED_OPS = frozenset({"meshgrid.variadic_tensors", "meshgrid.list_of_tensors"})

# Tags for readers of reports; neither removes anything.
# Real inputs, complex outputs: backends without complex support fail these.
COMPLEX_OUTPUT_OPS = frozenset(
    {
        "complex", "polar", "view_as_complex", "cfloat", "cdouble", "chalf", "stft",
        "linalg.eig", "linalg.eigvals",
        "fft.fft", "fft.fft2", "fft.fftn", "fft.ifft", "fft.ifft2", "fft.ifftn",
        "fft.rfft", "fft.rfft2", "fft.rfftn", "fft.ihfft", "fft.ihfft2", "fft.ihfftn",
    }
)  # fmt: skip
# Decompositions defined only up to signs, phases, order or pivoting: a
# backend may return another valid answer, which the comparison with eager
# calls a mismatch.
NONUNIQUE_OPS = frozenset(
    {
        "svd", "linalg.svd", "linalg.eig", "linalg.eigvals", "linalg.eigh",
        "qr", "linalg.qr", "geqrf", "linalg.ldl_factor", "linalg.ldl_factor_ex",
    }
)  # fmt: skip

# Name parts of ops that accumulate (see LOOSE_RTOL); matched against each
# part of the op name split at '.' and '_'.
_LOOSE_PART = re.compile(
    r"addmm|addmv|addbmm|baddbmm|addr|dot|vdot|bmm|mm|mv|matmul|rmatmul|einsum|tensordot|inner|outer|kron"
    r"|multi|cdist|pdist|dist|distance|pairwise|cosine|cov|corrcoef|\w*norm|normalize|softmax|softmin"
    r"|logsumexp|cumsum|cumprod|logcumsumexp|trapz|trapezoid|var|std|mean|nanmean|sum|nansum|prod|trace"
    r"|loss|entropy|attention|forward|\w*pool\w*|grid|sampler|linear|bilinear|conv\w*|interpolate|upsample"
    r"|bilinear2d|lu|qr|svd|svdvals|eig\w*|det|logdet|slogdet|solve|inv|inverse|tensorinv|tensorsolve"
    r"|cholesky|lstsq|pinv|pinverse|householder|ormqr|geqrf|matrix|exp|stft|renorm|histc|histogram\w*"
    r"|quantile|nanquantile|gaussian|bag|ctc|kl|segment|reduce|add|cross|lowrank|vander|cond|rank|windows"
    r"|put|accumulate|scatter"
)
_LOOSE_CLASSES = ("ReductionOpInfo", "SpectralFuncInfo")
_EXACT_CLASSES = ("UnaryUfuncInfo", "BinaryUfuncInfo", "ShapeFuncInfo")


# -- rules -----------------------------------------------------------------------


def _uses_wrapper_set_seed(op) -> bool:
    code = getattr(op.op, "__code__", None)
    return code is not None and "wrapper_set_seed" in code.co_names


def op_rule(op) -> str | None:
    """The rule that removes every sample of `op`, or None."""
    if op.name.startswith(NEEDS_GPU_PREFIX):
        return "needs-gpu"
    if op.name in NON_TENSOR_OUTPUT_OPS:
        return "non-tensor-output"
    if op.name in UNINITIALISED_OPS:
        return "uninitialised"
    if op.name in SPARSE_OPS:
        return "sparse"
    if full_name(op) in STORAGE_VIEW_OPS:
        return "storage-view"
    if full_name(op) in DUPLICATE_OPS:
        return "duplicate"
    return None


def _randomness_off(sample) -> bool:
    """A sample of a random op that draws nothing: dropout not training, or p == 0."""
    kw = sample.kwargs
    return kw.get("training", None) is False or kw.get("p", None) == 0.0 or kw.get("dropout_p", None) == 0.0


def sample_rule(op, sample, tensors: list[torch.Tensor], canonical: str | None) -> str | None:
    """The rule that removes this sample, or None (op rules are applied before)."""
    if _uses_wrapper_set_seed(op) and not _randomness_off(sample):
        return "random"
    for t in tensors:
        if t.layout != torch.strided or t.device.type != "cpu" or t.requires_grad or t.dtype not in dtypes.INPUT_DTYPES:
            return "unsupported-tensor"
    if canonical is None:
        return "no-canonical-text"
    if sum(t.numel() for t in tensors) > MAX_SAMPLE_ELEMENTS:
        return "too-large"
    if op.name == "linalg.lstsq" and sample.kwargs.get("driver") == "gelsy":
        return "nondeterministic-eager"
    return None


# -- structure: tensors out, placeholders in ------------------------------------


class Slot:
    """Where the forward's `index`-th tensor goes in the rebuilt call."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def __repr__(self):
        return f"Slot({self.index})"


def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def extract(obj: Any, tensors: list[torch.Tensor], seen: dict[int, int]) -> Any:
    """`obj` with each tensor replaced by a Slot; the same tensor object gets one slot."""
    if isinstance(obj, torch.Tensor):
        if id(obj) not in seen:
            seen[id(obj)] = len(tensors)
            tensors.append(obj)
        return Slot(seen[id(obj)])
    if type(obj) in (list, tuple):
        return type(obj)(extract(x, tensors, seen) for x in obj)
    if _is_namedtuple(obj):
        return type(obj)(*(extract(x, tensors, seen) for x in obj))
    if type(obj) is dict:
        return {k: extract(v, tensors, seen) for k, v in obj.items()}
    return obj


def fill(template: Any, tensors: tuple[torch.Tensor, ...]) -> Any:
    if isinstance(template, Slot):
        return tensors[template.index]
    if type(template) in (list, tuple):
        return type(template)(fill(x, tensors) for x in template)
    if _is_namedtuple(template):
        return type(template)(*(fill(x, tensors) for x in template))
    if type(template) is dict:
        return {k: fill(v, tensors) for k, v in template.items()}
    return template


class NoCanonicalText(Exception):
    pass


def canonical(obj: Any) -> str:
    """A text form of a sample's structure that is the same in every process."""
    if isinstance(obj, Slot):
        return f"%{obj.index}"
    if obj is None or isinstance(obj, (bool, int, float, complex, str)):
        return repr(obj)
    if obj is Ellipsis:
        return "..."
    if isinstance(obj, (torch.dtype, torch.layout, torch.memory_format, torch.device)):
        return str(obj)
    if isinstance(obj, torch.Size):
        return f"Size({','.join(str(d) for d in obj)})"
    if type(obj) in (list, tuple) or _is_namedtuple(obj):
        open_, close = ("[", "]") if isinstance(obj, list) else ("(", ")")
        prefix = type(obj).__qualname__ if _is_namedtuple(obj) else ""
        return prefix + open_ + ",".join(canonical(x) for x in obj) + close
    if type(obj) is dict:
        return "{" + ",".join(f"{k!r}:{canonical(v)}" for k, v in sorted(obj.items(), key=lambda kv: repr(kv[0]))) + "}"
    if isinstance(obj, slice):
        return f"slice({canonical(obj.start)},{canonical(obj.stop)},{canonical(obj.step)})"
    if isinstance(obj, enum.Enum):
        return f"{type(obj).__qualname__}.{obj.name}"
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = ",".join(f"{f.name}={canonical(getattr(obj, f.name))}" for f in dataclasses.fields(obj))
        return f"{type(obj).__qualname__}({fields})"
    if isinstance(obj, torch.nn.Module) and not any(obj.children()) and not any(True for _ in obj.parameters()):
        attrs = sorted((k, v) for k, v in vars(obj).items() if not k.startswith("_") and k != "training")
        return f"{type(obj).__qualname__}(" + ",".join(f"{k}={canonical(v)}" for k, v in attrs) + ")"
    if callable(obj):
        qualname = getattr(obj, "__qualname__", "")
        module = getattr(obj, "__module__", None) or ""
        if qualname and "<" not in qualname:
            return f"{module}.{qualname}"
    raise NoCanonicalText(type(obj).__name__)


# -- the module a case builds ---------------------------------------------------


class OpInfoCall(torch.nn.Module):
    """forward(*tensors) = op(input, *args, **kwargs) with the tensors put back in place.

    The call is made from a one-line function whose file name is `where` (the case's
    defined_at, naming the op and the sample): the exported graph's stack traces, and so
    the MLIR locations of every diagnostic, then point at the sample, not at this forward,
    the same line for all 5,456 samples.
    """

    def __init__(self, fn, template, where: str = "<OpInfo sample>"):
        super().__init__()
        self.fn = fn
        self.template = template
        self.call = _call_from(where)

    def forward(self, *tensors):
        input, args, kwargs = fill(self.template, tensors)
        return self.call(self.fn, input, args, kwargs)


# Named `forward`: torch.export keeps only the stack frames of functions of that name in a node's trace.
CALL_SOURCE = "def forward(fn, input, args, kwargs): return fn(input, *args, **kwargs)\n"


@functools.cache
def _call_from(where: str):
    """`fn(input, *args, **kwargs)` as a function defined in a 'file' named `where`, line 1 (linecache
    holds its source, so a traceback shows the call)."""
    linecache.cache[where] = (len(CALL_SOURCE), None, [CALL_SOURCE], where)
    namespace: dict = {}
    exec(compile(CALL_SOURCE, where, "exec"), namespace)
    return namespace["forward"]


def _clone_of(tensor: torch.Tensor, shape, dtype, generator) -> torch.Tensor:
    return tensor.clone()


# -- enumeration ---------------------------------------------------------------------


@contextlib.contextmanager
def _fixed_generators() -> Iterator[None]:
    """Run with the generators seeded by each op's draw; leave them as they were."""
    py_state = random.getstate()
    try:
        import numpy

        np_state = numpy.random.get_state()
    except ImportError:  # pragma: no cover - numpy is a dependency
        numpy = np_state = None
    try:
        with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        random.setstate(py_state)
        if numpy is not None:
            numpy.random.set_state(np_state)


def _seed_all() -> None:
    # torch.manual_seed would also queue seeds for CUDA, XPU and MTIA, each
    # recording a stack trace (3 ms a call); only the CPU generator matters.
    torch.default_generator.manual_seed(SEED)
    random.seed(SEED)
    try:
        import numpy

        numpy.random.seed(SEED)
    except ImportError:  # pragma: no cover
        pass


def draw_samples(op, limit: int | None) -> list:
    """The op's first `limit` float32 CPU samples, the same in every process.

    This is `op.sample_inputs("cpu", torch.float32, requires_grad=False)`
    without its bookkeeping for PyTorch's own test suite: that wrapper
    crawls the stack with inspect.stack() twice per op and reseeds through
    torch.manual_seed (together 80% of the time cases() took). Like it, the
    generators are reseeded before every sample, so a sample's values do not
    depend on how many samples came before it.
    """
    _seed_all()
    samples = iter(op.sample_inputs_func(op, "cpu", torch.float32, False))
    want = limit
    if full_name(op) in SET_ORDERED_OPS:
        limit = None  # all of them, to sort, then the first `want`
    drawn = []
    while limit is None or len(drawn) < limit:
        _seed_all()
        try:
            drawn.append(next(samples))
        except StopIteration:
            break
    if full_name(op) in SET_ORDERED_OPS:
        drawn = sorted(drawn, key=_order_key)[:want]
    return drawn


def _order_key(sample) -> str:
    tensors: list[torch.Tensor] = []
    template = extract((sample.input, tuple(sample.args), dict(sample.kwargs)), tensors, {})
    return canonical(template) + "|" + ";".join(f"{t.dtype}{list(t.shape)}" for t in tensors)


@dataclasses.dataclass
class Sample:
    op: Any
    index: int
    sample: Any
    template: Any  # (input, args, kwargs) with Slots
    tensors: list[torch.Tensor]
    canonical: str | None
    rule: str | None


def prepare(op, index: int, sample) -> Sample:
    tensors: list[torch.Tensor] = []
    template = extract((sample.input, tuple(sample.args), dict(sample.kwargs)), tensors, {})
    try:
        text = canonical(template)
    except NoCanonicalText:
        text = None
    rule = sample_rule(op, sample, tensors, text)
    return Sample(op, index, sample, template, tensors, text, rule)


def _aten_name(op) -> str | None:
    """The ATen op under test, when ATen has an op of the name OpInfo suggests.

    op.aten_name, then the name with dots as underscores (linalg.svd ->
    linalg_svd, special.i1 -> special_i1); nn.functional.X -> X. Other
    namespaces (masked., signal.windows.) are compositions of several ATen
    ops, and the dunder variants (__radd__) are spelt differently: no name.
    """
    if op.name.startswith("torch.ops.aten."):
        return "aten." + op.name.split(".")[3]
    names = [op.aten_name, op.name.replace(".", "_")]
    if op.name.startswith("nn.functional."):
        names.append(op.name.removeprefix("nn.functional."))
    for name in dict.fromkeys(n for n in names if n and n.isidentifier()):
        if hasattr(torch.ops.aten, name):
            return f"aten.{name}"
    return None


def _tolerance(op) -> tuple[float | None, float | None]:
    cls = type(op).__name__
    if cls in _EXACT_CLASSES:
        return None, None
    parts = [p for p in re.split(r"[._]", full_name(op)) if p]
    if cls in _LOOSE_CLASSES or any(_LOOSE_PART.fullmatch(p) for p in parts) or op.name.startswith(("linalg.", "fft.", "masked.")):
        return LOOSE_RTOL, LOOSE_ATOL
    return None, None


def full_name(op) -> str:
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def make_case(s: Sample, aten: str | None, tolerance) -> Case:
    op = s.op
    tensors = [t.detach().clone() for t in s.tensors]  # own storage: no large base tensor kept alive
    digest_text = s.canonical + "|" + ";".join(f"{dtypes.name(t.dtype)}{list(t.shape)}" for t in tensors)
    digest = hashlib.sha1(digest_text.encode()).hexdigest()[:8]
    name = full_name(op)
    tags = {op.name, "opinfo"}
    if any(0 in t.shape for t in tensors):
        tags.add("zero-size")
    if op.name in COMPLEX_OUTPUT_OPS:
        tags.add("complex")
    if op.name in NONUNIQUE_OPS:
        tags.add("nonunique")
    rtol, atol = tolerance
    where = f"cases/opinfo.py (OpInfo {name} sample {s.index})"
    return Case(
        id=f"opinfo.{name}.{s.index}.{digest}",
        build=functools.partial(OpInfoCall, op.op, s.template, where),
        inputs=tuple(T(*t.shape, dtype=t.dtype, gen=functools.partial(_clone_of, t)) for t in tensors),
        kind="opinfo",
        ops=(aten,) if aten else (),
        tags=frozenset(tags),
        rtol=rtol,
        atol=atol,
        defined_at=where,
    )


def dynamic_variant(case: Case) -> Case | None:
    """`case` with every input dim of size 2 or more exported as dynamic (cases/opinfo_dynamic.py), or None if it has none."""
    tensors = [spec.gen(spec.shape, spec.dtype, None) for spec in case.inputs]
    dims = {i: [d for d, size in enumerate(t.shape) if size >= 2] for i, t in enumerate(tensors)}
    dims = {i: ds for i, ds in dims.items() if ds}
    if not dims:
        return None
    shapes = ", ".join(
        f"{dtypes.name(t.dtype)}[{','.join('?' if d in dims.get(i, ()) else str(n) for d, n in enumerate(t.shape))}]"
        for i, t in enumerate(tensors)
    )
    return dataclasses.replace(
        case,
        id=f"{case.id}.dynamic",
        inputs=(),
        exact=Exact(functools.partial(_one_set, tuple(tensors)), f"{shapes} (? dynamic)", dims),
        tags=case.tags | {"dynamic"},
    )


def _one_set(tensors: tuple[torch.Tensor, ...]) -> list[list[torch.Tensor]]:
    return [[t.clone() for t in tensors]]


def _op_db():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    return [op for op in op_db if torch.float32 in op.supported_dtypes("cpu")]


def build_cases() -> list[Case]:
    cases: list[Case] = []
    with _fixed_generators():
        for op in _op_db():
            if op_rule(op):
                continue
            aten, tolerance = _aten_name(op), _tolerance(op)
            for index, sample in enumerate(draw_samples(op, MAX_SAMPLES_PER_OP)):
                s = prepare(op, index, sample)
                if s.rule is None:
                    cases.append(make_case(s, aten, tolerance))
    return cases


# -- census: what each rule removes, and whether the rules still hold -------------


def _leaves(obj) -> Iterator[Any]:
    if isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _leaves(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _leaves(x)
    else:
        yield obj


def _same(a, b) -> bool:
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return a == b
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_complex():
        a, b = torch.view_as_real(a.to(torch.complex128)), torch.view_as_real(b.to(torch.complex128))
    if a.dtype.is_floating_point:
        a, b = a.double(), b.double()
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return torch.equal(a, b)


def census(run: bool = True) -> dict[str, int]:
    """Draw every sample of every op (cap and op rules included) and count each rule.

    With `run`, every kept sample is also run in eager twice, under two
    different seeds of the global generator and on fresh copies of its
    inputs (as the framework does); any failure, non-tensor output or
    difference is printed: the rules need updating.
    """
    counts = {rule: 0 for rule in RULES}
    kept = ops_kept = 0
    problems: list[str] = []
    with _fixed_generators():
        for op in _op_db():
            rule_of_op = op_rule(op)
            samples = draw_samples(op, None)
            kept_before = kept
            for index, sample in enumerate(samples):
                s = prepare(op, index, sample)
                if MAX_SAMPLES_PER_OP is not None and index >= MAX_SAMPLES_PER_OP:
                    rule = "beyond-cap"
                else:
                    rule = rule_of_op or s.rule
                if rule:
                    counts[rule] += 1
                    continue
                kept += 1
                if run:
                    problem = _check(s)
                    if problem:
                        problems.append(f"{full_name(op)} sample {index}: {problem}")
            ops_kept += kept > kept_before
    for rule, n in counts.items():
        print(f"{rule:24} {n:6}  {RULES[rule]}")
    print(f"kept {kept} samples of {ops_kept} ops")
    for p in problems:
        print("PROBLEM", p)
    return counts


def _check(s: Sample) -> str | None:
    module = OpInfoCall(s.op.op, s.template)
    outs = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        try:
            with torch.no_grad():
                outs.append(module(*[t.clone() for t in s.tensors]))
        except Exception as e:
            return f"eager raises {type(e).__name__}: {str(e)[:200]}"
    leaves = [list(_leaves(o)) for o in outs]
    for leaf in leaves[0]:
        if not isinstance(leaf, torch.Tensor):
            return f"output holds a {type(leaf).__name__}"
        if leaf.layout != torch.strided:
            return f"output has layout {leaf.layout}"
        if leaf.is_complex() and s.op.name not in COMPLEX_OUTPUT_OPS:
            return "complex output, not tagged"
    if len(leaves[0]) != len(leaves[1]) or not all(_same(a, b) for a, b in zip(*leaves)):
        return "eager is nondeterministic"
    return None


if __name__ == "__main__":
    import sys

    census(run="--no-run" not in sys.argv)
