"""The `onnx-node` suite: ONNX's backend node tests, unchanged, as cases.

    pytest --backend=onnx-linalg --suite onnx-node -k onnx-node

One case per test of `onnx.backend.test.loader.load_model_tests(kind="node")`
(1,884 with onnx 1.23.2): the test's model is the case (format "onnx", so
only backends that take ONNX run it), its data set's inputs are the case's
exact inputs and its outputs the reference, "expected (ONNX test data)".
onnx no longer ships the test files; it builds the tests in memory by
running its generator scripts (7-28 s here), so the built suite is kept in
the cache directory ($CONFORMANCE_CACHE, else .conformance-cache/), one file
per onnx version, and loads in about a second.

Ids `onnx-node:<test name>`; family `onnx-node`; ops the ONNX ops under test
(`onnx.Abs`; an `_expanded` test, whose op is replaced by its function body,
names its op's); tags `onnx`, and `expanded`.

ONNX's runner judges a backend's outputs so (Runner.assert_similar_outputs),
and so does this suite:
  - the same number of outputs, each of the same shape and dtype, values by
    np.testing.assert_allclose with the test's rtol and atol (1e-3, 1e-7 for
    every node test), NaN equal to NaN: the case's tolerances (conformance's
    comparison reports NaNs out of place as NAN_MISMATCH, values as
    NUMERIC_MISMATCH);
  - bfloat16 outputs with rtol at least 2**-6 (two bfloat16 ulps): the case's
    rtol when any output is bfloat16 (the one such test with other outputs
    adds int64 ones, compared exactly either way);
  - a random op's outputs (Bernoulli, RandomNormal[Like], RandomUniform[Like],
    Multinomial, Dropout given a training mode) are one draw no backend can
    reproduce: structure, dtype and shape only (Stored(draws=True)).

Values PyTorch has no dtype for travel in one holding them exactly: int4 and
int2 in int8, uint4 and uint2 in uint8, float4e2m1 in float32 (the ONNX
backends skip or do not run those cases, see conformance/toolchain/onnx.py).
A value no tensor can hold (a string, a sequence, an empty optional) makes
the case a SKIP, with the reason, when its inputs are loaded.
"""

from __future__ import annotations

import functools
import os
import pickle
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.onnx_graph import nodes

SUITE = "onnx-node"
ID_PREFIX = "onnx-node:"
SOURCE = "ONNX test data"  # how explanations name the reference
CACHE_FORMAT = 1  # bump when NodeTest's fields change
RANDOM_OPS = {"Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike"}
BFLOAT16_MIN_RTOL = 2**-6
# ml_dtypes types PyTorch has no tensor dtype for -> the NumPy dtype that holds their values exactly.
CARRIERS = {"int4": "int8", "int2": "int8", "uint4": "uint8", "uint2": "uint8", "float4_e2m1fn": "float32"}


@dataclass(frozen=True)
class NodeTest:
    """One node test as kept in the cache: plain data (model bytes, NumPy/ml_dtypes values)."""

    name: str
    model: bytes = field(repr=False)
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    data_sets: tuple[tuple[tuple[Any, ...], tuple[Any, ...]], ...] = field(repr=False)  # (inputs, expected outputs) per set
    rtol: float
    atol: float


def cases():
    from conformance.cases.spec import Case, Exact, Stored

    tests = load_tests()
    ops_of = {test.name: ops_under_test(test) for test in tests}
    made = []
    for test in tests:
        model = _model(test.model)
        random = is_random(model)
        base = test.name.removesuffix("_expanded")
        rtol = max(test.rtol, BFLOAT16_MIN_RTOL) if _has_bfloat16_output(model) else test.rtol
        made.append(
            Case(
                id=ID_PREFIX + test.name,
                build=functools.partial(_model, test.model),
                inputs=(),
                kind="op",
                family=SUITE,
                ops=ops_of.get(base, ops_of[test.name]),
                tags=frozenset({"onnx", "expanded"} if test.name.endswith("_expanded") else {"onnx"}),
                nondeterministic=random,
                exact=Exact(functools.partial(input_sets, test), description=describe(test)),
                reference=Stored(functools.partial(output_sets, test), rtol=rtol, atol=test.atol, source=SOURCE, draws=random),
                defined_at=f"onnx {_onnx_version()} node test {test.name}",
                format="onnx",
            )
        )
    return made


# -- the tests, built by onnx or read from the cache -----------------------------


@functools.cache
def load_tests() -> list[NodeTest]:
    path = cache_path()
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except FileNotFoundError:
        pass
    except Exception as e:  # a torn or foreign file: build it again
        print(f"conformance: rebuilding the onnx-node suite ({path} unreadable: {type(e).__name__})", file=sys.stderr)
    tests = build_tests()
    _write_atomically(path, pickle.dumps(tests, protocol=pickle.HIGHEST_PROTOCOL))
    return tests


def cache_path() -> Path:
    from conformance.run_options import default_cache_dir

    return Path(default_cache_dir()) / "suites" / f"onnx-node-{_onnx_version()}-{CACHE_FORMAT}.pickle"


def build_tests() -> list[NodeTest]:
    """onnx's node tests, converted to plain data: TensorProtos and NumPy scalars become arrays."""
    import numpy as np
    from onnx.backend.test.loader import load_model_tests

    # The generator scripts compute expected outputs with NumPy and overflow on purpose (casts).
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        loaded = load_model_tests(kind="node")
    tests = []
    for t in sorted(loaded, key=lambda t: t.name):
        initialized = {i.name for i in t.model.graph.initializer}
        tests.append(
            NodeTest(
                name=t.name,
                model=t.model.SerializeToString(),
                input_names=tuple(v.name for v in t.model.graph.input if v.name not in initialized),
                output_names=tuple(v.name for v in t.model.graph.output),
                data_sets=tuple((tuple(map(_plain, inputs)), tuple(map(_plain, outputs))) for inputs, outputs in t.data_sets),
                rtol=float(t.rtol),
                atol=float(t.atol),
            )
        )
    return tests


def _plain(value: Any) -> Any:
    """A data-set value as NumPy (ml_dtypes) arrays: a TensorProto, a NumPy scalar, a list of them, or None."""
    import numpy as np
    from onnx import TensorProto, numpy_helper

    if value is None:
        return None
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    return np.asarray(value)


def _write_atomically(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)  # parallel workers: each sees the whole file or none
    except OSError as e:  # a read-only cache: build the suite every time, and say so
        print(f"conformance: cannot keep the onnx-node suite in {path.parent} ({e}); it is rebuilt each run", file=sys.stderr)


@functools.cache
def _onnx_version() -> str:
    from importlib.metadata import version

    return version("onnx")


# -- what a test is about ---------------------------------------------------------


def _model(data: bytes):
    import onnx

    return onnx.load_from_string(data)


def ops_under_test(test: NodeTest) -> tuple[str, ...]:
    """The graph's ONNX ops, in order (a Constant only when it is the op under test)."""
    types = list(dict.fromkeys(node.op_type for node in _model(test.model).graph.node))
    kept = [t for t in types if t != "Constant"] or types
    return tuple(f"onnx.{t}" for t in kept)


def is_random(model) -> bool:
    """Whether the outputs are random draws: a random op, or a Dropout given its training_mode input."""
    for node in nodes(model.graph):
        if node.op_type in RANDOM_OPS:
            return True
        if node.op_type == "Dropout" and len(node.input) > 2 and node.input[2]:
            return True
    return False


def _has_bfloat16_output(model) -> bool:
    from onnx import TensorProto

    return any(
        v.type.WhichOneof("value") == "tensor_type" and v.type.tensor_type.elem_type == TensorProto.BFLOAT16
        for v in model.graph.output
    )


def describe(test: NodeTest) -> str:
    """The first input set, as `conformance list` shows inputs: `float32[3, 4], int64[]`."""
    return ", ".join(_describe(value) for value in test.data_sets[0][0]) if test.data_sets else ""


def _describe(value: Any) -> str:
    if value is None:
        return "empty optional"
    if isinstance(value, list):
        return f"sequence of {len(value)}"
    return f"{value.dtype.name}{list(value.shape)}"


# -- values as tensors ------------------------------------------------------------


def input_sets(test: NodeTest) -> list[list]:
    return [[_tensor(value, f"input '{name}'") for name, value in zip(test.input_names, inputs)] for inputs, _ in test.data_sets]


def output_sets(test: NodeTest) -> list:
    sets = []
    for _, outputs in test.data_sets:
        tensors = [_tensor(value, f"output '{name}'", sequences=True) for name, value in zip(test.output_names, outputs)]
        sets.append(tensors[0] if len(tensors) == 1 else tuple(tensors))
    return sets


def _tensor(value: Any, what: str, sequences: bool = False):
    """A data-set value as a tensor (a list of them for an expected sequence); CaseUnavailable (a SKIP) if it cannot be one."""
    import numpy as np

    from conformance.cases.spec import CaseUnavailable
    from conformance.arrays import to_tensor

    if value is None:
        raise CaseUnavailable(f"{what} is an empty optional: the case API passes tensors only", skip=True)
    if isinstance(value, list):
        if not sequences:
            raise CaseUnavailable(f"{what} is a sequence of {len(value)} tensors: the case API passes tensors only", skip=True)
        return [_tensor(v, what) for v in value]
    if value.dtype.kind in "OUS":
        raise CaseUnavailable(f"{what} holds strings: no PyTorch tensor can", skip=True)
    carrier = CARRIERS.get(value.dtype.name)
    return to_tensor(value.astype(np.dtype(carrier)) if carrier else value)
