"""A case's reference outputs: eager PyTorch on its module, or the outputs a suite ships.

Eager runs the module twice on copies of each input set, inside the case's
eager context: the first run's outputs are the reference, the inputs it
left behind are what in-place updates are judged against, and a second run
that disagrees means the case is nondeterministic where it says it is not,
unless eager called a random op (one PyTorch tags nondeterministic_seeded:
rand, bernoulli, dropout, uniform_ ...): then the case is random whatever it
declares (a suite's random tests, a user's model in training mode), and its
outputs are judged as samples. Stored outputs are loaded as they are;
nothing runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from conformance.cases.outputs import check_outputs
from conformance.cases.spec import Case, CaseError, Stored
from conformance.compare import compare


class NondeterministicReference(Exception):
    """Eager gave different outputs on two runs of the same inputs."""


@dataclass
class Reference:
    expected: list[Any]  # one output (structure) per input set
    inputs_after: list[list[torch.Tensor]]  # the input sets as the reference left them (in-place ops)
    random_ops: tuple[str, ...] = ()  # the random ops that made two eager runs differ, when that is why


def clone_inputs(inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    # In-place cases mutate their inputs; every consumer gets its own copy.
    return [t.clone() for t in inputs]


def reference_outputs(case: Case, module: torch.nn.Module, inputs: list[list[torch.Tensor]]) -> Reference:
    if isinstance(case.reference, Stored):
        expected = list(case.reference.outputs())
        if len(expected) != len(inputs):
            raise CaseError(f"case {case.id!r}: {len(expected)} stored output(s) for {len(inputs)} input set(s)")
        return Reference(expected, inputs)  # nothing ran: the inputs are as given
    with torch.no_grad(), case.eager():
        inputs_after = [clone_inputs(i) for i in inputs]
        expected = [module(*after) for after in inputs_after]  # in-place ops update inputs_after
        check_outputs(case.id, expected[0])  # an object nothing can compare is the case's fault, not eager's
        if not case.nondeterministic:
            for first, given in zip(expected, inputs):
                mismatch = compare(first, module(*clone_inputs(given)), rtol=0.0, atol=0.0)
                if mismatch:
                    random_ops = seeded_random_ops(module, clone_inputs(given))
                    if not random_ops:
                        raise NondeterministicReference(mismatch.explanation)
                    return Reference(expected, inputs_after, random_ops)
    return Reference(expected, inputs_after)


def seeded_random_ops(module: torch.nn.Module, inputs: list[torch.Tensor]) -> tuple[str, ...]:
    """The ATen ops tagged nondeterministic_seeded that a run of `module` calls (sorted), e.g. ("aten.bernoulli.p",)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    seen: set[str] = set()

    class Recording(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if torch.Tag.nondeterministic_seeded in func.tags:
                seen.add(str(func).removesuffix(".default"))
            return func(*args, **(kwargs or {}))

    with Recording():
        module(*inputs)
    return tuple(sorted(seen))


def float64_outputs(case: Case, module: torch.nn.Module, inputs: list[torch.Tensor]) -> Any | None:
    """The case's program in float64 on `inputs` (float inputs and weights upcast): the oracle a numeric
    mismatch is measured against. None where it cannot run so (a stored reference, an op without float64)."""
    import copy

    if isinstance(case.reference, Stored):
        return None
    try:
        double = copy.deepcopy(module).double()
        upcast = [t.double() if t.is_floating_point() else t for t in clone_inputs(inputs)]
        with torch.no_grad(), case.eager():
            return double(*upcast)
    except Exception:  # the oracle is a refinement of the explanation: without it the mismatch stands as it is
        return None
