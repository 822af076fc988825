"""A registered test's inputs, captured by running its test function against a recorder.

torch-mlir's tests make their inputs inside the test function, which calls
`forward` on them. Here the function runs on a recording stand-in for the
module, seeded as torch-mlir seeds it (the factory, then its TestUtils,
which seeds 0), within the test's own timeout; each `forward` call's
arguments become an input set, and whether oneDNN was on around it the
case's eager context. What a case cannot express (keyword or non-tensor
arguments, other methods, sets of different shapes) is a CaseUnavailable
(SKIP); a test whose own eager run fails is one at stage eager (CASE_ERROR).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from dataclasses import dataclass, field
from typing import Any

import torch

from conformance.cases.sources.torch_mlir_e2e.loading import first_line
from conformance.cases.sources.torch_mlir_e2e.stand_ins import OPTIONAL_PACKAGES, MissingPackage
from conformance.cases.spec import CaseUnavailable

ANNOTATIONS = "_torch_mlir_arg_annotations"  # what the checkout's annotate_args sets on forward


@dataclass
class Call:
    method: str
    args: tuple
    kwargs: dict
    mkldnn: bool  # whether oneDNN was on when the call was made


class _Recorder:
    """Stands for the module in a test function: records each method call, then makes it.

    Arguments are copied before the call (forward may update them in place);
    attributes that are not methods are handed through.
    """

    def __init__(self, module: torch.nn.Module, calls: list[Call]):
        self._module, self._calls = module, calls

    def __getattr__(self, name: str):
        target = getattr(self._module, name)
        if not callable(target):
            return target

        def record(*args, **kwargs):
            copied = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]
            self._calls.append(Call(name, tuple(copied), dict(kwargs), bool(torch.backends.mkldnn.enabled)))
            return target(*args, **kwargs)

        return record


class _TimeLimit(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Stop a Python loop after `seconds` (SIGALRM, main thread only; elsewhere the run's own timeout applies)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise _TimeLimit()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class E2eTest:
    """One registered test, as a case loads it: capture its inputs, say its eager context and dynamic dims."""

    test: Any
    module: str
    test_utils: type
    dynamic: bool
    mkldnn: bool | None = None  # as the last capture found it
    dims: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def load(self) -> list[list[torch.Tensor]]:
        calls, annotations = self._run_test_function()
        sets = _input_sets(calls)
        self.mkldnn = calls[0].mkldnn
        if self.dynamic:
            self.dims = _dynamic_dims(annotations, sets)
            if not self.dims:
                raise CaseUnavailable(
                    "no -1 dim of its @annotate_args is 2 or more in the real inputs: nothing to export as dynamic "
                    "(the static case covers it)",
                    skip=True,
                )
        return sets

    def eager_context(self):
        if self.mkldnn is None:
            self.load()  # the flags are known from a capture only
        return torch.backends.mkldnn.flags(enabled=False) if self.mkldnn is False else contextlib.nullcontext()

    def dynamic_dims(self) -> dict[int, tuple[int, ...]]:
        return self.dims

    def _run_test_function(self) -> tuple[list[Call], list]:
        """Run the test function on a recorder, in torch-mlir's order: factory, TestUtils() (seeds 0), test."""
        calls: list[Call] = []
        timeout = self.test.timeout_seconds
        try:
            with torch.random.fork_rng(devices=[]), _time_limit(timeout):
                module = self.test.program_factory()
                self.test.program_invoker(_Recorder(module, calls), self.test_utils())
        except MissingPackage as e:
            raise CaseUnavailable(str(e), skip=True) from None
        except ModuleNotFoundError as e:  # imported inside a factory or forward, after registration
            if (e.name or "").split(".")[0] in OPTIONAL_PACKAGES:
                raise CaseUnavailable(str(MissingPackage(e.name.split(".")[0])), skip=True) from None
            raise CaseUnavailable(f"the test's own eager run fails: ModuleNotFoundError: {e}", stage="eager") from None
        except _TimeLimit:
            raise CaseUnavailable(
                f"the test function ran past its own timeout ({timeout} s) while its inputs were captured", stage="eager"
            ) from None
        except Exception as e:
            raise CaseUnavailable(f"the test's own eager run fails: {type(e).__name__}: {first_line(str(e))}", stage="eager") from None
        return calls, list(getattr(module.forward, ANNOTATIONS, None) or [])


def _input_sets(calls: list[Call]) -> list[list[torch.Tensor]]:
    """Each forward call's arguments as an input set; what a case cannot express is a CaseUnavailable (SKIP)."""
    others = sorted({c.method for c in calls if c.method != "forward"})
    if others:
        raise CaseUnavailable(f"the test function calls {', '.join(others)}, not only forward", skip=True)
    if not calls:
        raise CaseUnavailable("the test function never calls forward", skip=True)
    if any(c.kwargs for c in calls):
        raise CaseUnavailable("the test function passes keyword arguments to forward", skip=True)
    kinds = sorted({type(a).__name__ for c in calls for a in c.args if not isinstance(a, torch.Tensor)})
    if kinds:
        raise CaseUnavailable(f"the test function passes {', '.join(kinds)} to forward (a case's inputs are tensors)", skip=True)
    if len({c.mkldnn for c in calls}) > 1:
        raise CaseUnavailable("the test function calls forward with oneDNN on and off", skip=True)
    signatures = {tuple((a.dtype, tuple(a.shape)) for a in c.args) for c in calls}
    if len(signatures) > 1:
        raise CaseUnavailable(
            f"the test function calls forward {len(calls)} times on inputs of different shapes (one static program runs every set)",
            skip=True,
        )
    return [list(c.args) for c in calls]


def _dynamic_dims(annotations: list, sets: list[list[torch.Tensor]]) -> dict[int, tuple[int, ...]]:
    """The -1 dims of @annotate_args (whose first entry is `self`) that are 2 or more in every input set.

    The real inputs win where the annotation disagrees with them (a rank that
    differs makes no dim of that input dynamic).
    """
    found = {}
    for index, annotation in enumerate(annotations[1:]):
        if annotation is None or index >= len(sets[0]):
            continue
        shape = list(annotation[0])
        if len(shape) != sets[0][index].dim():
            continue
        dims = tuple(d for d, size in enumerate(shape) if size == -1 and all(s[index].shape[d] >= 2 for s in sets))
        if dims:
            found[index] = dims
    return found
