"""Hypothesis strategies for valid programs: drawn op by op from the table, on actual values.

A program is built the way NNSmith builds its graphs, forward: each step
draws an op from the table, its first operand among the values so far
(most recent first) or a fresh input, its attributes, and its further
operands (an existing value whose shape fits, or a fresh input shaped to
fit: broadcast, the other side of a matmul ...). The op then runs on its
operands' actual values (tiny tensors, every input set), so its result
shape and dtype are PyTorch's own, and an op that PyTorch refuses, or
whose result is not finite, too large or of a dtype the run leaves out,
is not added: every program drawn is valid by construction, and its
values stay finite without a search afterwards.

Every choice is a Hypothesis draw, so the shrinker simplifies a program
along the strategy's own lines: fewer ops (a smaller count), ops earlier
in the table, operands nearer, fewer and smaller dims (sizes toward 1),
the first dtype of the run's list, static rather than dynamic, seed 0.

A finished program is run in eager from its own case file (programs/
eager.py); one whose outputs are not finite or not well conditioned
(eager off from float64 by more than a tenth of its tolerance) is
rejected (hypothesis.reject: another is drawn). The Stats count both.
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass, field

import torch
from hypothesis import reject
from hypothesis.errors import HypothesisException, StopTest
from hypothesis import strategies as st

from conformance.cases.inputs import make_inputs
from conformance.cases.spec import Case, Dyn, T
from conformance.fuzz import ops as table
from conformance.programs import eager
from conformance.programs.program import Call, Input, Program

FLOAT_RANGES = ((-4.0, 4.0), (-1.0, 1.0), (0.0, 2.0))
INT_RANGE = (-4, 5)
MAX_INT = 2**20  # integer values beyond this are not kept (a later product could overflow)
SYMBOL = "s0"


@dataclass(frozen=True)
class Config:
    """What programs are drawn: the ops, dtypes, sizes, and the tolerance they are judged with."""

    ops: tuple[table.OpSpec, ...] = table.TABLE
    dtypes: tuple[str, ...] = ("float32", "int32", "int64", "bool")
    min_ops: int = 2
    max_ops: int = 20
    max_rank: int = 4
    max_dim: int = 6
    dynamic: bool = True  # some programs have a dynamic dim
    max_elements: int = 4096
    rtol: float = 1e-4
    atol: float = 1e-4

    def __post_init__(self):
        if not 1 <= self.min_ops <= self.max_ops:
            raise ValueError(f"ops per program: {self.min_ops}..{self.max_ops} is not a range of at least one op")
        unknown = [d for d in self.dtypes if not isinstance(getattr(torch, d, None), torch.dtype)]
        if unknown or not self.dtypes:
            raise ValueError(f"dtypes: {', '.join(unknown) or 'none given'} (use torch's names: float32, int64, bool ...)")


@dataclass
class Stats:
    """What the strategy drew: programs finished, and why others were rejected."""

    finished: int = 0
    rejected: Counter = field(default_factory=Counter)

    @property
    def drawn(self) -> int:
        return self.finished + sum(self.rejected.values())


@dataclass(eq=False)  # values are told apart by identity: their tensors do not compare to a bool
class Value:
    tensors: list[torch.Tensor]  # one per input set
    exact: bool
    input: int | None = None  # which input it is, or None for a call's result
    call: int | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.tensors[0].shape)


class Builder:
    """One program under construction: its inputs, calls and every value's actual tensors."""

    def __init__(self, draw, config: Config):
        self.draw = draw
        self.config = config
        self.seed = draw(st.integers(0, 2**16 - 1))
        self.symbol: tuple[int, ...] | None = None
        if config.dynamic and draw(st.integers(0, 3)) == 3:  # a quarter try (a 0-d first input makes one static): ~a fifth
            first = draw(st.integers(2, max(2, config.max_dim)))
            self.symbol = (first, first + draw(st.integers(1, 3)))
        self.inputs: list[Input] = []
        self.calls: list[Call] = []
        self.values: list[Value] = []  # in creation order; inputs and calls interleaved

    @property
    def sets(self) -> int:
        return 2 if self.symbol else 1

    # -- inputs --------------------------------------------------------------

    def _materialize(self) -> list[list[torch.Tensor]]:
        """The inputs' tensors as the case will draw them (make_inputs: a new input leaves earlier ones as they were)."""
        dyn = Dyn(SYMBOL, *self.symbol) if self.symbol else None
        specs = []
        for spec in self.inputs:
            shape = [dyn if d == SYMBOL else d for d in spec.shape]
            kind = spec.values[0]
            low, high = (spec.values[1], spec.values[2]) if kind == "uniform" else (None, None)
            specs.append(T(*shape, dtype=spec.torch_dtype, low=low, high=high))
        return make_inputs(Case(id="fuzz.draft", build=lambda: None, inputs=tuple(specs), seed=self.seed), 0)

    def fresh(self, shape: tuple, kinds: tuple[str, ...], range_: tuple | None = None, dtype: str | None = None) -> Value | None:
        """A new input of `shape` (ints and the symbol's name) of a dtype of `kinds`; None when the run has no such dtype."""
        allowed = [d for d in self.config.dtypes if table.kind_of(getattr(torch, d)) in kinds]
        if dtype is None:
            if not allowed:
                return None
            dtype = self.draw(st.sampled_from(allowed))
        if self.symbol and not self.inputs and SYMBOL not in shape:
            # A dynamic program runs once per size from its first input on: one without the symbol is static.
            self.symbol = None
        kind = table.kind_of(getattr(torch, dtype))
        if kind == table.BOOL:
            values = ("uniform", None, None)
        elif range_ is not None:
            low, high = range_
            values = ("uniform", int(low), int(high)) if kind == table.INT else ("uniform", float(low), float(high))
        elif kind == table.INT:
            values = ("uniform", *INT_RANGE)
        else:
            values = ("uniform", *self.draw(st.sampled_from(FLOAT_RANGES)))
        self.inputs.append(Input(tuple(shape), dtype, values))
        sets = self._materialize()
        value = Value([s[-1] for s in sets], exact=True, input=len(self.inputs) - 1)
        self.values.append(value)
        return value

    def draw_shape(self, min_rank: int, max_rank: int) -> tuple:
        rank = self.draw(st.integers(min_rank, max(min_rank, min(max_rank, self.config.max_rank))))
        dims = []
        for _ in range(rank):
            if self.symbol and self.draw(st.integers(0, 2)) == 2:
                dims.append(SYMBOL)
            else:
                dims.append(self.draw(st.integers(1, self.config.max_dim)))
        if self.symbol and not self.inputs and dims and SYMBOL not in dims:
            dims[self.draw(st.integers(0, len(dims) - 1))] = SYMBOL  # the first input carries the symbol (see fresh)
        return tuple(dims)

    def symbolic(self, value: Value) -> list:
        """Each dim of `value` as a fresh input would spell it: its size, the symbol, or None (dynamic, no name)."""
        dims = []
        for d in range(len(value.shape)):
            sizes = tuple(t.shape[d] for t in value.tensors)
            if len(set(sizes)) == 1:
                dims.append(sizes[0])
            elif self.symbol and sizes == self.symbol[: len(sizes)]:
                dims.append(SYMBOL)
            else:
                dims.append(None)
        return dims

    # -- operands ----------------------------------------------------------------

    def fits(self, value: Value, operand: table.Operand) -> bool:
        t = value.tensors[0]
        if table.kind_of(t.dtype) not in operand.kinds or not operand.min_rank <= t.dim() <= operand.max_rank:
            return False
        if operand.exact and not value.exact:
            return False
        if operand.static and any(d is None or d == SYMBOL for d in self.symbolic(value)):
            return False
        return all(operand.domain(x) for x in value.tensors)

    def pick(self, candidates: list[Value], make_fresh) -> Value | None:
        """One of `candidates` (most recent first, so a shrunk program chains its ops), or a fresh input."""
        index = self.draw(st.integers(0, len(candidates)))
        return candidates[index] if index < len(candidates) else make_fresh()

    def first_operand(self, operand: table.Operand) -> Value | None:
        candidates = [v for v in reversed(self.values) if self.fits(v, operand)]
        return self.pick(candidates, lambda: self.fresh(self.draw_shape(operand.min_rank, operand.max_rank), operand.kinds, operand.range))

    def further_operand(self, operand: table.Operand, relation: str, first: Value, attrs: dict) -> Value | None:
        dims = self.symbolic(first)
        if relation == table.BROADCAST:
            fits = lambda v: _broadcasts(first, v)  # noqa: E731
            make = lambda: self._fresh_broadcast(dims, operand)  # noqa: E731
        elif relation == table.SAME:
            fits = lambda v: all(a.shape == b.shape for a, b in zip(first.tensors, v.tensors))  # noqa: E731
            make = lambda: None if None in dims else self.fresh(tuple(dims), operand.kinds, operand.range)  # noqa: E731
        elif relation == table.CAT:
            dim = int(attrs["dim"]) % len(dims)
            fits = lambda v: _same_but(first, v, dim)  # noqa: E731
            grown = [*dims[:dim], self.draw(st.integers(1, self.config.max_dim)), *dims[dim + 1 :]]
            make = lambda: None if None in grown else self.fresh(tuple(grown), operand.kinds, operand.range)  # noqa: E731
        elif relation == table.MATMUL:
            fits = lambda v: False  # noqa: E731  (a fresh right-hand side: the shapes rarely meet by chance)
            make = lambda: self._fresh_matmul(dims, operand)  # noqa: E731
        elif relation == table.INDEX:
            dim = int(attrs["dim"]) % max(len(dims), 1)
            smallest = min(t.shape[dim] for t in first.tensors) if dims else 1
            fits = lambda v: False  # noqa: E731  (index values must lie within the dim: drawn for it)
            make = lambda: self.fresh((self.draw(st.integers(1, self.config.max_dim)),), (table.INT,), (0, smallest), "int64")  # noqa: E731
        else:
            raise ValueError(f"unknown operand relation {relation!r}")
        candidates = [v for v in reversed(self.values) if v is not first and self.fits(v, operand) and fits(v)]
        return self.pick(candidates, make)

    def _fresh_broadcast(self, dims: list, operand: table.Operand) -> Value | None:
        how = self.draw(st.sampled_from(("same", "suffix", "ones", "scalar")))
        shape = [1 if d is None else d for d in dims]
        if how == "suffix" and shape:
            shape = shape[self.draw(st.integers(1, len(shape))) :]
        elif how == "ones":
            shape = [1 if self.draw(st.booleans()) else d for d in shape]
        elif how == "scalar":
            shape = []
        return self.fresh(tuple(shape), operand.kinds, operand.range)

    def _fresh_matmul(self, dims: list, operand: table.Operand) -> Value | None:
        if None in dims[-1:]:
            return None
        k = dims[-1]
        n = self.draw(st.integers(1, self.config.max_dim))
        if len(dims) == 1:
            shape = [k] if self.draw(st.booleans()) else [k, n]
        elif len(dims) == 2:
            shape = [k, n] if self.draw(st.booleans()) else [k]
        else:
            batch = dims[0]
            shape = [k, n] if batch is None or self.draw(st.booleans()) else [batch, k, n]
        return self.fresh(tuple(shape), operand.kinds, operand.range)

    # -- one op ----------------------------------------------------------------------

    def step(self, spec: table.OpSpec) -> bool:
        """Try to add one call of `spec`; on any misfit, undo what it added and say False."""
        mark = (len(self.inputs), len(self.values))
        try:
            added = self._step(spec)
        except (HypothesisException, StopTest):
            raise
        except Exception:  # PyTorch refused the combination: not a program to keep
            added = False
        if not added:
            del self.inputs[mark[0] :]
            del self.values[mark[1] :]
        return added

    def _step(self, spec: table.OpSpec) -> bool:
        first = self.first_operand(spec.operands[0])
        if first is None or not self.fits(first, spec.operands[0]):
            return False
        attrs = spec.attrs(self.draw, [first.shape], self.config.dtypes) if spec.attrs else {}
        operands = [first]
        for operand, relation in zip(spec.operands[1:], spec.relations):
            other = self.further_operand(operand, relation, first, attrs)
            if other is None or not self.fits(other, operand):
                return False
            operands.append(other)
        if spec.check and not all(spec.check([v.tensors[s] for v in operands], attrs) for s in range(self.sets)):
            return False
        template = spec.render(attrs)
        results = []
        for s in range(self.sets):
            names = {f"a{i}": v.tensors[s] for i, v in enumerate(operands)}
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results.append(eval(template.format(*names), {"torch": torch}, names))
        if not all(self._keeps(r) for r in results) or len({r.dtype for r in results}) != 1 or len({r.dim() for r in results}) != 1:
            return False
        exact = all(v.exact for v in operands) and (spec.keeps_exact or not results[0].is_floating_point())
        position = {id(v): i for i, v in enumerate(self.values)}
        self.calls.append(Call(template, tuple(position[id(v)] for v in operands), spec.aten))
        self.values.append(Value(results, exact, call=len(self.calls) - 1))
        return True

    def _keeps(self, result) -> bool:
        if not isinstance(result, torch.Tensor) or result.numel() == 0 or result.numel() > self.config.max_elements or result.dim() > 6:
            return False
        if str(result.dtype).removeprefix("torch.") not in self.config.dtypes:
            return False
        if result.is_floating_point():
            return bool(result.isfinite().all()) and float(result.abs().max()) <= 1e4
        if result.dtype != torch.bool:
            return float(result.abs().max()) <= MAX_INT
        return True

    # -- the program -----------------------------------------------------------------

    def program(self) -> Program:
        """Inputs numbered first, then the calls; the outputs are the results no later call uses."""
        number = {}
        for i, v in enumerate(self.values):
            if v.input is not None:
                number[i] = v.input
        for i, v in enumerate(self.values):
            if v.call is not None:
                number[i] = len(self.inputs) + v.call
        calls = tuple(Call(c.template, tuple(number[o] for o in c.operands), c.op) for c in self.calls)
        used = {o for c in calls for o in c.operands}
        outputs = tuple(n for n in range(len(self.inputs), len(self.inputs) + len(calls)) if n not in used)
        return Program(
            inputs=tuple(self.inputs), calls=calls, outputs=outputs,
            symbols=((SYMBOL, self.symbol),) if self.symbol and any(SYMBOL in i.shape for i in self.inputs) else (),
            seed=self.seed, rtol=self.config.rtol, atol=self.config.atol,
        )


def _broadcasts(a: Value, b: Value) -> bool:
    try:
        for x, y in zip(a.tensors, b.tensors):
            torch.broadcast_shapes(x.shape, y.shape)
    except RuntimeError:
        return False
    return True


def _same_but(a: Value, b: Value, dim: int) -> bool:
    return all(
        x.dim() == y.dim() and all(x.shape[d] == y.shape[d] for d in range(x.dim()) if d != dim)
        for x, y in zip(a.tensors, b.tensors)
    )


def programs(config: Config, stats: Stats | None = None) -> st.SearchStrategy[Program]:
    """Valid programs of `config.min_ops`..`config.max_ops` ops; `stats` counts what was drawn."""
    stats = stats if stats is not None else Stats()

    @st.composite
    def one_step(draw, builder: Builder) -> None:
        # A step's choices are one span of the choice sequence, so the shrinker can delete a whole op.
        builder.draw = draw
        builder.step(draw(st.sampled_from(config.ops)))

    @st.composite
    def draw_program(draw) -> Program:
        builder = Builder(draw, config)
        attempts = 0
        while len(builder.calls) < config.max_ops and attempts < 4 * config.max_ops:
            # Past the minimum, one step in twenty is the last (as Hypothesis's lists decide "one more?"):
            # shrinking turns that choice to 0, ending the program there.
            if len(builder.calls) >= config.min_ops and draw(st.integers(0, 19)) == 0:
                break
            attempts += 1
            draw(one_step(builder))
        if len(builder.calls) < config.min_ops:
            stats.rejected["too few ops fit"] += 1
            reject()
        program = builder.program()
        evaluation = eager.evaluate(program)
        if evaluation.error is not None:
            stats.rejected["eager fails on the case file"] += 1
            reject()
        if not evaluation.finite:
            stats.rejected["outputs not finite"] += 1
            reject()
        if eager.conditioning(evaluation) > eager.CONDITIONING:
            stats.rejected["ill-conditioned (eager far from float64)"] += 1
            reject()
        stats.finished += 1
        return program

    return draw_program()
