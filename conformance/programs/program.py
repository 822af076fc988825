"""A straight-line tensor program, and the one-file case it is written as.

    def program(x0, x1):
        v0 = torch.add(x0, x1)
        v1 = torch.sum(v0, dim=1)
        return v1

    CASES = [op("fuzz.3f2a9c", program, T(3, 4), T(4, dtype=torch.int32, low=-3, high=4), ops=(...), seed=7, ...)]

Inputs are drawn as a case's inputs are (T: shape, dtype, values, and the
program's seed), or exact tensors saved beside the file (Exact: a reduced
activation). A dynamic dim is a symbol's name in an input's shape
(Program.symbols gives its sizes; the case runs once per size). Each call
is a Python expression over earlier values, `{0}`, `{1}` standing for its
operands; the op it exercises is named beside it, for ops= and root causes.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import runpy
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from conformance.cases.spec import Case
from conformance.digests import values_digest

# How an input's values are drawn (T(...) of the case file):
#   ("uniform", low, high)  make_tensor in [low, high), the case's seed
#   ("full", c)             every element c
#   ("ints", low, high)     integers in [low, high) of a float dtype
#   ("exact",)              the tensors in Program.exact
Values = tuple

# An integer a call's template spells out (a dim, a size): not a placeholder {0}, not part of a name or a float.
INTEGER = re.compile(r"(?<![\w.{])-?\d+(?![\w.}])")
DESCRIBED_INPUTS = 4  # a one-line description names this many inputs (a model has hundreds: its weights)
DESCRIBED_OPS = 8


@dataclass(frozen=True)
class Input:
    shape: tuple[int | str, ...]  # a str is a dynamic dim: the name of a symbol of Program.symbols
    dtype: str = "float32"  # torch's name
    values: Values = ("uniform", -4.0, 4.0)

    @property
    def torch_dtype(self) -> torch.dtype:
        return getattr(torch, self.dtype)


@dataclass(frozen=True)
class Call:
    template: str  # Python source with {0}, {1} ... for its operands, e.g. "torch.sum({0}, dim=1)"
    operands: tuple[int, ...]  # value numbers: the inputs are 0..n-1, then each call's result in order
    op: str  # the ATen op it exercises ("aten.sum"), as classification and xfail sets name ops


@dataclass(frozen=True)
class Program:
    inputs: tuple[Input, ...]
    calls: tuple[Call, ...]
    outputs: tuple[int, ...]  # value numbers returned (one: returned alone; several: as a tuple)
    symbols: tuple[tuple[str, tuple[int, ...]], ...] = ()  # dynamic dims: (name, sizes the case runs at)
    seed: int = 0
    rtol: float | None = None
    atol: float | None = None
    export_mode: str | None = None
    # Exact inputs: one list of tensors per input set (then every Input's values is ("exact",)).
    exact: tuple[tuple[torch.Tensor, ...], ...] | None = field(default=None, compare=False, hash=False)

    @property
    def ops(self) -> tuple[str, ...]:
        """The ATen ops it exercises, each once, in order (getitem and the like left out)."""
        return tuple(dict.fromkeys(c.op for c in self.calls if c.op.startswith(("aten.", "prims."))))

    def value_count(self) -> int:
        return len(self.inputs) + len(self.calls)

    def size(self) -> tuple:
        """How big it is, to keep the smallest: calls, then input elements, inputs, rank, dynamic dims,
        values' plainness, dtype widths, and the integers the calls spell out (a dim 0 is simpler than a dim 2)."""
        elements = sum(_elements(i, self.symbols) for i in self.inputs)
        rank = sum(len(i.shape) for i in self.inputs)
        plain = sum(_value_rank(i.values) for i in self.inputs)
        integers = sum(abs(int(m.group())) for c in self.calls for m in INTEGER.finditer(c.template))
        return (len(self.calls), elements, len(self.inputs), rank, len(self.symbols), plain,
                sum(_dtype_rank(i.dtype) for i in self.inputs), integers)

    def key(self) -> str:
        """A digest of what it computes and on which values (its id and provenance left out)."""
        h = hashlib.sha1(body(self).encode())
        if self.exact is not None:
            h.update(values_digest(self.exact).encode())
        return h.hexdigest()[:12]

    def describe(self) -> str:
        """One line: its ops and input types, e.g. `aten.add, aten.sum on float32[3,4], int32[4]`."""
        shown = [f"{i.dtype}[{','.join(map(str, i.shape))}]" for i in self.inputs[:DESCRIBED_INPUTS]]
        more = len(self.inputs) - DESCRIBED_INPUTS
        inputs = ", ".join(shown) + (f" and {more} more" if more > 0 else "")
        ops = ", ".join(self.ops[:DESCRIBED_OPS]) + (", ..." if len(self.ops) > DESCRIBED_OPS else "")
        count = f"{len(self.calls)} op{'s' if len(self.calls) != 1 else ''}"
        return f"{count} ({ops or 'none'}) on {inputs or 'no input'}"

    def to_json(self) -> dict:
        """Plain data (exact tensors left out)."""
        return {
            "inputs": [{"shape": list(i.shape), "dtype": i.dtype, "values": list(i.values)} for i in self.inputs],
            "calls": [{"template": c.template, "operands": list(c.operands), "op": c.op} for c in self.calls],
            "outputs": list(self.outputs),
            "symbols": [[name, list(sizes)] for name, sizes in self.symbols],
            "seed": self.seed, "rtol": self.rtol, "atol": self.atol, "export_mode": self.export_mode,
        }


def _elements(spec: Input, symbols) -> int:
    sizes = dict(symbols)
    count = 1
    for d in spec.shape:
        count *= max(sizes[d]) if isinstance(d, str) else d
    return count


def _value_rank(values: Values) -> int:
    """Zeros before ones before small integers before drawn floats before exact tensors."""
    kind = values[0]
    if kind == "full":
        return 0 if values[1] == 0 else 1
    return {"ints": 2, "uniform": 3}.get(kind, 4)


def _dtype_rank(dtype: str) -> int:
    """Narrower first: a reduced case prefers bool to int8 ... to float64."""
    return getattr(torch, dtype).itemsize * 8 + (1 if getattr(torch, dtype).is_floating_point else 0)


# -- the case file -------------------------------------------------------------

# Value generators a case file defines when its inputs use them (T(..., gen=...)).
HELPERS = {
    "full": '''

def full(value):
    """Every element `value`."""
    return lambda shape, dtype, generator: torch.full(shape, value, dtype=dtype)
''',
    "ints": '''

def ints(low, high):
    """Integers in [low, high), as a float tensor."""
    return lambda shape, dtype, generator: torch.randint(low, high, shape, generator=generator).to(dtype)
''',
}

EXACT_LOADER = '''
HERE = Path(__file__).resolve().parent


def _inputs():
    return torch.load(HERE / "{file}", weights_only=True)
'''


def value_name(program: Program, number: int) -> str:
    n = len(program.inputs)
    return f"x{number}" if number < n else f"v{number - n}"


def function_source(program: Program, name: str = "program") -> str:
    """`def program(x0, ...):` with one line per call."""
    params = ", ".join(value_name(program, i) for i in range(len(program.inputs)))
    lines = [f"def {name}({params}):"]
    base = len(program.inputs)
    for k, call in enumerate(program.calls):
        expression = call.template.format(*(value_name(program, o) for o in call.operands))
        lines.append(f"    {value_name(program, base + k)} = {expression}")
    returned = ", ".join(value_name(program, o) for o in program.outputs)
    lines.append(f"    return {returned}" if program.outputs else "    return None")
    return "\n".join(lines) + "\n"


def _spec(program: Program, spec: Input) -> str:
    dims = [d if isinstance(d, str) else str(d) for d in spec.shape]
    args = list(dims)
    if spec.dtype != "float32":
        args.append(f"dtype=torch.{spec.dtype}")
    kind = spec.values[0]
    if kind == "uniform":
        args += [f"low={spec.values[1]!r}", f"high={spec.values[2]!r}"] if spec.values[1] is not None else []
    elif kind == "full":
        args.append(f"gen=full({spec.values[1]!r})")
    elif kind == "ints":
        low, high = spec.values[1:]
        args += [f"low={low!r}", f"high={high!r}"] if not spec.torch_dtype.is_floating_point else [f"gen=ints({low!r}, {high!r})"]
    else:
        raise ValueError(f"input values {spec.values!r} are not drawn")
    return f"T({', '.join(args)})"


def body(program: Program) -> str:
    """The source of what the program computes (no id, no provenance): its identity."""
    return function_source(program) + json.dumps([program.to_json()["inputs"], program.to_json()["symbols"], program.seed])


def source(program: Program, case_id: str, doc: str, tags: tuple[str, ...] = (), exact_file: str | None = None) -> str:
    """The case file: `doc` as its docstring, the program as a function, one op(...) declaration."""
    exact = program.exact is not None
    helpers = [] if exact else [h for h in HELPERS if any(f"gen={h}(" in _spec(program, i) for i in program.inputs)]
    names = ["Dyn"] * bool(program.symbols) + (["Exact"] if exact else ["T"]) + ["op"]
    parts = [f'"""{doc.strip()}\n"""\n']
    if exact:
        parts.append("from pathlib import Path\n\n")
    parts.append(f"import torch\n\nfrom conformance import {', '.join(names)}\n")
    if exact:
        parts.append(EXACT_LOADER.format(file=exact_file))
    parts += [HELPERS[h] for h in helpers]
    if program.symbols:
        parts.append("\n" + "".join(f"{name} = Dyn({name!r}, {', '.join(map(str, sizes))})\n" for name, sizes in program.symbols))
    parts.append("\n\n" + function_source(program) + "\n\n")
    if exact:
        described = ", ".join(f"{i.dtype}[{', '.join(map(str, i.shape))}]" for i in program.inputs)
        dynamic = {k: tuple(d for d, s in enumerate(i.shape) if isinstance(s, str)) for k, i in enumerate(program.inputs)}
        dynamic = {k: v for k, v in dynamic.items() if v}
        extra = f", dynamic={dynamic!r}" if dynamic else ""
        inputs = [f'Exact(_inputs, "{described}"{extra})']
    else:
        inputs = [_spec(program, i) for i in program.inputs]
    keywords = [f"ops={program.ops!r}"]
    if not exact:
        keywords.append(f"seed={program.seed}")
    if program.rtol is not None:
        keywords.append(f"rtol={program.rtol!r}, atol={program.atol!r}")
    if program.export_mode:
        keywords.append(f"export_mode={program.export_mode!r}")
    if tags:
        keywords.append(f"tags={set(tags)!r}")
    declaration = ",\n        ".join([repr(case_id), "program", *inputs, *keywords])
    parts.append(f"CASES = [\n    op(\n        {declaration},\n    ),\n]\n")
    return "".join(parts)


def write(program: Program, directory: Path, stem: str, case_id: str, doc: str, tags: tuple[str, ...] = ()) -> Path:
    """Write `<directory>/<stem>.py` (and `<stem>.inputs.pt` for exact inputs); returns the case file."""
    directory.mkdir(parents=True, exist_ok=True)
    exact_file = None
    if program.exact is not None:
        exact_file = f"{stem}.inputs.pt"
        buffer = io.BytesIO()
        torch.save([[t.detach().clone() for t in inputs] for inputs in program.exact], buffer)
        (directory / exact_file).write_bytes(buffer.getvalue())
    path = directory / f"{stem}.py"
    path.write_text(source(program, case_id, doc, tags, exact_file))
    return path


def load(path: Path) -> Case:
    """The one case a program's file declares (run afresh: the file may have been rewritten)."""
    found = runpy.run_path(str(path))["CASES"]
    if len(found) != 1:
        raise ValueError(f"{path} declares {len(found)} cases, not one")
    return found[0]


def with_exact(program: Program, inputs: list[torch.Tensor]) -> Program:
    """The program on these exact inputs (one set: a program with exact inputs is static)."""
    specs = tuple(Input(tuple(t.shape), str(t.dtype).removeprefix("torch."), ("exact",)) for t in inputs)
    return replace(program, inputs=specs, exact=(tuple(inputs),), symbols=())
