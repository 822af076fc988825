"""torch's run_decompositions, without the set-up it redoes on every call.

A child process decomposes hundreds of small programs with the same table.
For each, torch first (1) asks which CompositeImplicitAutograd (CIA) ops it
may keep, looking up every registration of ~27 op namespaces, (2) splits the
table into those CIA ops and the rest, asking of each of its ops whether it
is a CIA op it may keep (~770 questions for torch.onnx's table), and then (3)
patches ~500 CIA ops' Python kernels (some 5,700 py_impl registrations) for the call
(`_override_composite_implicit_decomp`: py_impl for the autograd, CIA and
backend keys, a fake-tensor rule) and takes it all down again. For a
two-op program that is ~80 % of the call's time (0.195 of 0.246 s,
measured on a busy 2-core machine), though the answers and the patch are
the same every time.

So all three are remembered, and used only while the state they were taken
from holds: the census per set of registrations; the split per set of
registrations and table (the same ops, in the same order, with the same
functions); the patch per (table, every patched op's kernels and fake rule
before the patch) — a replay puts back exactly the kernels and rules torch's
own patch set, and takes them down as torch does. Anything else (a new
table, an op registered since, another torch without these functions) goes
through torch's own code, unchanged. The decomposed programs are the same
(tests/test_decompositions_remembered.py).
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass

import torch

from conformance.toolchain.versions import toolchain_versions


def decompose(program, table=None):
    """`program.run_decompositions(table)` (torch's core ATen table when None), the same program, cheaper."""
    with set_up_remembered():
        return program.run_decompositions() if table is None else program.run_decompositions(table)


def table_identity(table: dict) -> str:
    """What a decomposition's outcome depends on in `table`, besides torch's version: which ops it decomposes,
    and with whose function. torch-mlir chooses the ops; the functions are torch's own (torch._decomp,
    torch._refs). A function from any other package (torch-mlir's own, one day) brings every tool's version in.

    Asked for every case and table (naming 200-800 ops takes ~3 ms): remembered per table content, by the
    identity of its ops and functions; the remembered tables are kept, so no identity is reused for another."""
    content = frozenset((id(op), id(function)) for op, function in table.items())
    if content not in _IDENTITIES:
        _IDENTITIES[content] = (_identity(table), dict(table))
    return _IDENTITIES[content][0]


_IDENTITIES: dict = {}  # table content -> (its identity, the table: its ops and functions kept alive)


def _identity(table: dict) -> str:
    origins = {op: _origin(function) for op, function in table.items()}
    identity = "\n".join(sorted(f"{op}={origin}" for op, origin in origins.items()))
    if {origin.split(".", 1)[0] for origin in origins.values()} - {"torch"}:
        identity += f"\n{sorted(toolchain_versions().items())}"
    return identity


def _origin(function) -> str:
    inner = getattr(function, "func", function)  # torch's refs come wrapped in functools.partial
    return f"{getattr(inner, '__module__', '?')}.{getattr(inner, '__qualname__', type(inner).__name__)}"


@contextlib.contextmanager
def set_up_remembered():
    """Every run_decompositions in the block, ours or one torch calls itself (torch.onnx's exporter), cheaper."""
    settle()
    with preservable_ops_remembered(), split_remembered(), override_remembered():
        yield


def settle() -> None:
    """Once per process, torch's own run_decompositions on a one-op program, so every later call starts alike.

    torch's patch, as it ends, drops the fake-tensor rule of every op it
    patched, also the rules registered before it began (torch 2.13:
    `_deregister_op_impl` for each). So the first decomposition in a process
    runs with rules every later one lacks, and a verdict would hang on the
    order of a child's jobs: OpInfo's nonzero_numpy on a 0-d input fails to
    decompose the first time (IndexError) and passes after. After this call
    every decomposition meets the state torch leaves behind; the torch-mlir
    frontend calls it before its first export too, since export traces with
    the same fake-tensor rules.
    """
    if _SETTLED:
        return
    _SETTLED.append(True)

    class OneOp(torch.nn.Module):
        def forward(self, x):
            return x + 1

    torch.export.export(OneOp(), (torch.zeros(1),), strict=False).run_decompositions({})


_SETTLED: list[bool] = []


@contextlib.contextmanager
def preservable_ops_remembered():
    """torch's census of preservable CIA ops (`_collect_all_valid_cia_ops`), asked again only when ops are registered."""
    from torch.export import exported_program

    collect = getattr(exported_program, "_collect_all_valid_cia_ops", None)
    if collect is None:
        yield
        return

    def remembered():
        key = registrations_key()
        if _CENSUS.get("key") != key:
            _CENSUS.update(key=key, ops=frozenset(collect()))
        return set(_CENSUS["ops"])

    exported_program._collect_all_valid_cia_ops = remembered
    try:
        yield
    finally:
        exported_program._collect_all_valid_cia_ops = collect


_CENSUS: dict = {}  # the last answer of torch's _collect_all_valid_cia_ops, and the registrations it holds for


def registrations_key() -> tuple:
    """What torch's census of CIA ops depends on: the CIA registrations and the op namespaces."""
    registrations = torch._C._dispatch_get_registrations_for_dispatch_key("CompositeImplicitAutograd")
    return len(registrations), hash(tuple(registrations)), tuple(torch.ops._dir)


@contextlib.contextmanager
def split_remembered():
    """torch's split of a table into the CIA ops its patch takes and the rest
    (`_split_decomp_table_to_cia_and_python_decomp`), replayed for a table it has split before.

    torch's split deletes the CIA ops from the table it is given and returns
    it; a replay deletes the same ones. It is 11 of the 76 ms torch.onnx's
    exporter takes for one op.
    """
    from torch.export import exported_program

    split = getattr(exported_program, "_split_decomp_table_to_cia_and_python_decomp", None)
    if split is None:
        yield
        return

    def remembered(table):
        key = registrations_key()
        for last in _SPLITS:
            if last.key == key and _same_items(last.before, table):
                for op in last.removed:
                    del table[op]
                return dict(last.cia), table
        before = list(table.items())
        cia, rest = split(table)
        _SPLITS.insert(0, _Split(key, before, [op for op, _ in before if op not in rest], list(cia.items())))
        del _SPLITS[_SPLITS_KEPT:]  # torch-mlir's table, torch.onnx's, and a spare
        return cia, rest

    exported_program._split_decomp_table_to_cia_and_python_decomp = remembered
    try:
        yield
    finally:
        exported_program._split_decomp_table_to_cia_and_python_decomp = split


@dataclass
class _Split:
    key: tuple  # registrations_key() when torch split the table
    before: list  # the table's (op, function) items, in order, as torch was given them
    removed: list  # the ops torch's split deleted from it
    cia: list  # the (op, callable) items of the CIA dict it returned, in order


_SPLITS: list[_Split] = []  # the latest first
_SPLITS_KEPT = 3


def _same_items(items: list, table: dict) -> bool:
    return len(items) == len(table) and all(op is key and table[key] is fn for (op, fn), key in zip(items, table))


@contextlib.contextmanager
def override_remembered():
    """torch's patch of the CIA ops' kernels replayed from the last identical one (see the module's docstring)."""
    from torch.export import exported_program

    original = getattr(exported_program, "_override_composite_implicit_decomp", None)
    fake = _fake_impls()
    if original is None or fake is None:
        yield
        return
    exported_program._override_composite_implicit_decomp = functools.partial(_replay_or_record, original, fake)
    try:
        yield
    finally:
        exported_program._override_composite_implicit_decomp = original


@dataclass
class _Patch:
    table: dict  # CIA op -> the callable torch registers for it (its decomposition, or "preserve")
    before: dict  # op -> (its Python kernels, its fake-tensor rule) before the patch
    after: dict  # the same, with the patch in place
    checks: tuple  # torch's list of fake-rule checks, by identity, with the patch in place


_LAST: dict[str, _Patch] = {}


@contextlib.contextmanager
def _replay_or_record(original, fake, cia_ops_to_callable):
    ops = list(cia_ops_to_callable)
    before = _kernels_and_rules(ops, fake)
    last = _LAST.get("patch")
    if last is None or not _same_table(last.table, cia_ops_to_callable) or last.before != before or not _same_checks(last, fake):
        with original(cia_ops_to_callable):
            _LAST["patch"] = _Patch(dict(cia_ops_to_callable), before, _kernels_and_rules(ops, fake), _checks(fake))
            yield
        return
    for op in ops:
        kernels, rule = last.after[op]
        op.py_kernels.clear()
        op.py_kernels.update(kernels)
        op._dispatch_cache.clear()
        if rule is not None:
            fake.op_implementations_dict[op] = rule
    try:
        yield
    finally:
        for op in ops:  # as torch's own patch ends
            op.py_kernels.clear()
            op.py_kernels.update(before[op][0])
            op._dispatch_cache.clear()
            fake._deregister_op_impl(op)


def _kernels_and_rules(ops, fake) -> dict:
    rules = fake.op_implementations_dict
    return {op: (dict(op.py_kernels), rules.get(op)) for op in ops}


def _same_table(a: dict, b: dict) -> bool:
    return len(a) == len(b) and all(b.get(op, _MISSING) is fn for op, fn in a.items())


def _checks(fake) -> tuple:
    return tuple(map(id, (check for check, _ in fake.op_implementations_checks)))


def _same_checks(last: _Patch, fake) -> bool:
    # The patch adds no check; the ones in place while it was taken must still be the ones there are.
    return _checks(fake) == last.checks


_MISSING = object()


def _fake_impls():
    """torch's registry of fake-tensor rules, if it still has the parts the patch uses."""
    try:
        from torch._subclasses import fake_impls
    except ImportError:
        return None
    needed = ("op_implementations_dict", "op_implementations_checks", "_deregister_op_impl")
    return fake_impls if all(hasattr(fake_impls, name) for name in needed) else None
