"""torch.export of a batch of cases as one program, split back into each case's own.

Most of a small case's export is the fixed cost of one call (dynamo's frame
set-up and guards in strict mode, the AOT trace in both): 141 static tests of
torch-mlir's e2e registry export strictly in 11.5-14 s one by one and in
3.2-3.6 s sixteen at a time; the registry's 1,212 static op cases in 20.5 s
and 9.6 s (non-strict). So the torch frontend's export stage exports its
batch's static cases as one module whose forward calls each case's module
on its own inputs (`Together`), then splits the program into one per case:

- its user inputs, its parameters, buffers and constants (those under the
  joint module's `cases.<i>.`, without it; a constant the trace lifted, by
  the case that uses it, renumbered from 0), and its outputs;
- the nodes its outputs depend on, and the checks no output depends on
  (`_assert_tensor_metadata`) by their inputs, in the joint trace's order;
  each node's stack trace and module stack without the joint module's
  frame and entry (the FX importer makes locations of the first; the ONNX
  exporter writes both into the model);
- placeholders named by torch.export's own naming pass, and forward's
  argument names, as the case's own export has them (the ONNX exporter
  names the model's inputs after them).

The imported IR (locations included) and the ONNX model (its bytes) are then
the ones the case's own export gives: checked for every static op case of
the registry and torch-mlir's sample (tests/test_export_together.py keeps a
few of each kind). Nodes are named as a trace of the case alone numbers
them (sort, sort_1, ...).

The decomposition that follows retraces the program, a cost in part per
call (about 40 % of it for the registry's op cases), so the joint program is kept beside the programs split from it,
and the first case of a batch to be decomposed has the whole joint program
decomposed, with that table, and split the same way (`decomposed_together`):
the torch-mlir import's and the ONNX exporter's decompositions (a mutation
of an input is an output there, split with the input it writes). The ONNX
exporter writes node names into the model; a trace numbers them counting
the nodes it then drops as dead, so a case whose names the joint graph
cannot vouch for (`_unsure_names`) is decomposed alone for it.

What a split cannot vouch for is left to the case's own export (None in its
place): a non-tensor output (a bool). A whole batch is, for a non-tensor
input, a subgraph (cond, map: get_attr targets numbered across the batch),
a node two cases share, or a symbol in the ShapeEnv every case's fake values
share (nonzero's size; a size scatter's meta function reasons about): a
decomposition of any member would report it. A joint export that
fails raises: the stage walk runs the case it failed in alone, exported by
itself, and the rest together again (`failing_member`: the case Together
was tracing, or strictly the one whose forward dynamo's stack names); where
the error does not say, it splits the batch until the case that fails stands
alone. Each verdict is its own export's.
"""

from __future__ import annotations

import re
import sys
import weakref
from dataclasses import dataclass, field

import torch

from conformance.backends.protocol import BatchFailure

LIFTED = re.compile(r"lifted_tensor_\d+")  # a tensor constant the trace made an input
JOINT_PREFIX = "cases."  # the parameters, buffers and constants of case i are under cases.<i>. in the joint program


def _state_kinds():
    from torch.export.graph_signature import InputKind

    return (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


class Together(torch.nn.Module):
    """The cases' modules as one: forward takes every case's inputs in turn and returns every case's outputs."""

    def __init__(self, modules: list[torch.nn.Module], arities: list[int]):
        super().__init__()
        self.cases = torch.nn.ModuleList(modules)
        self.arities = arities

    def forward(self, *inputs):
        outputs, start = [], 0
        for module, arity in zip(self.cases, self.arities):
            outputs.append(module(*inputs[start : start + arity]))
            start += arity
        return tuple(outputs)


def export_together(modules: list[torch.nn.Module], inputs: list[tuple], strict: bool) -> list:
    """Each case's ExportedProgram from one export of them all, or None for a case the split cannot vouch for.

    A joint export that fails raises BatchFailure naming the case it failed in (failing_member), or where the
    error does not say, the error as it is: the caller splits the batch."""
    joint = Together(modules, [len(i) for i in inputs])
    try:
        with torch.no_grad():
            program = torch.export.export(joint, tuple(t for i in inputs for t in i), strict=strict)
    except Exception as error:
        member = failing_member(error, modules)
        if member is None:
            raise
        raise BatchFailure([member], error) from error
    programs = split(program, modules, inputs)
    if any(piece is not None for piece in programs):
        batch = _Joint(program, modules, inputs)
        for index, piece in enumerate(programs):
            if piece is not None:
                _JOINTS[piece] = (batch, index)
    return programs


def failing_member(error: BaseException, modules: list[torch.nn.Module]) -> int | None:
    """Which case a joint export failed in, where the error says so beyond doubt; else None.

    Without it the stage walk bisects the batch, exporting it together four times and more before the
    case stands alone: as dear as exporting each case alone. Non-strict, the error's traceback holds
    Together.forward's frame, which knows how many cases it had traced. Strict, dynamo traced that frame
    without running it; its error's stack of user frames names the one Together.forward called, which is
    one case's when no other case's forward is that code (torch-mlir's tests: a class each)."""
    traceback = error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code is Together.forward.__code__:
            traced = len(traceback.tb_frame.f_locals["outputs"])
            return traced if traced < len(modules) else None  # (past the last case: none of them to blame)
        traceback = traceback.tb_next
    frames = list(getattr(error, "real_stack", None) or ())
    callers = [at for at, frame in enumerate(frames) if frame.filename == __file__ and frame.name == "forward"]
    if not callers or callers[-1] + 1 >= len(frames):
        return None
    called = frames[callers[-1] + 1]
    suspects = [index for index, module in enumerate(modules) if _runs_line(type(module).forward, called.filename, called.lineno)]
    return suspects[0] if len(suspects) == 1 else None


def _runs_line(function, filename: str, line: int | None) -> bool:
    code = getattr(function, "__code__", None)
    lines = [number for *_, number in code.co_lines() if number is not None] if code is not None else []
    return bool(lines) and code.co_filename == filename and line is not None and min(lines) <= line <= max(lines)


def decomposed_together(program, table: dict, table_key: str, exact_names: bool = False):
    """`program` decomposed with `table`, as its own decomposition would give it, taken from one decomposition
    of the joint program it was split from; None for a program that was not split from one (the caller
    decomposes it alone).

    A decomposition, like an export, has a fixed cost per retrace, if a smaller share of it: the registry's
    static op cases decompose in about 60 % of the time sixteen at a time (288 cases: 11.4 -> 7.3 s with
    torch-mlir's table, 10.5 -> 6.4 s with torch.onnx's, the split included). The joint program is decomposed once per table (`table_key`
    names it) and split as the export was; a case the split cannot vouch for, or a joint decomposition
    that fails (one member's failure fails them all), leaves each case to its own decomposition, so each
    verdict stays its own decomposition's. `exact_names`: the caller writes the nodes' names out (the ONNX
    exporter), so a case whose names the split cannot promise (_unsure_names) is left to its own too."""
    try:
        found = _JOINTS.get(program)
    except TypeError:  # not an object a weak reference can name: no export split it
        return None
    return None if found is None else found[0].piece(found[1], table, table_key, exact_names)


@dataclass
class _Joint:
    """A batch's joint export, kept beside the programs split from it, for their decomposition."""

    program: object  # the joint ExportedProgram of Together
    modules: list
    inputs: list
    decomposed: dict = field(default_factory=dict)  # (table key, exact names) -> the split decomposed programs (None: alone)

    def piece(self, index: int, table: dict, table_key: str, exact_names: bool):
        from conformance.toolchain.decompose import decompose

        key = (table_key, exact_names)  # which cases a split vouches for depends on both
        if key not in self.decomposed:
            try:
                self.decomposed[key] = split(decompose(self.program, table), self.modules, self.inputs, exact_names)
            except Exception as error:  # noqa: BLE001 - each case's own decomposition says what fails
                # On stderr, in the stage's captured output: a batching problem must not hide as slowness.
                print(f"conformance: the joint decomposition of {len(self.inputs)} cases failed "
                      f"({type(error).__name__}); decomposing them one by one", file=sys.stderr)  # fmt: skip
                self.decomposed[key] = [None] * len(self.inputs)
        pieces = self.decomposed[key]
        piece, pieces[index] = pieces[index], None  # handed out once: a second decomposition is the case's own
        return piece


# Each program export_together split -> (its batch's joint export, its index there); gone with the program.
_JOINTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def split(program, modules: list[torch.nn.Module], inputs: list[tuple], exact_names: bool = False) -> list:
    """The joint `program` of Together as one program per case; None for a case it cannot vouch for.
    `exact_names`: also None for a case whose nodes may be named otherwise by a trace of its own (_unsure_names)."""
    shares = None if _refused(program, inputs) else _shares(program, inputs)
    if shares is None:
        return [None] * len(inputs)
    unsure = _unsure_names(program.graph, shares.owner) if exact_names else set()
    order = {id(spec): position for position, spec in enumerate(program.graph_signature.input_specs)}
    programs = []
    for index, case_inputs in enumerate(inputs):
        if index in unsure or any(not isinstance(output, torch.fx.Node) for output in shares.outputs[index]):  # or a constant output (a bool)
            programs.append(None)
            continue
        nodes = [node for node in program.graph.nodes if shares.owner.get(node) == index and node.op != "placeholder"]
        state = sorted(shares.inputs[index], key=lambda pair: order[id(pair[0])])  # the joint signature's order
        out_spec = program.call_spec.out_spec.child(index)
        programs.append(_program(program, index, state, shares.placeholders, nodes, shares.mutations[index], shares.outputs[index], modules[index],
                                 case_inputs, out_spec))  # fmt: skip
    return programs


def _refused(program, inputs: list[tuple]) -> bool:
    """Whether the whole batch is left to the cases' own exports (the module's docstring says why each)."""
    from torch.export.graph_signature import InputKind, OutputKind, TensorArgument

    signature, out_spec = program.graph_signature, program.call_spec.out_spec
    user_inputs = [spec for spec in signature.input_specs if spec.kind == InputKind.USER_INPUT]
    return bool(
        program.range_constraints
        or _symbols_made(program.graph)
        or any(spec.kind not in _output_kinds() for spec in signature.output_specs)
        or any(not isinstance(spec.arg, TensorArgument) for spec in user_inputs)
        or any(spec.kind not in _state_kinds() for spec in signature.input_specs if spec.kind != InputKind.USER_INPUT)
        or any(node.op == "get_attr" for node in program.graph.nodes)
        or out_spec is None
        or out_spec.num_children != len(inputs)
        or len(user_inputs) != sum(len(i) for i in inputs)
    )


def _output_kinds():
    from torch.export.graph_signature import OutputKind

    # A mutation's output (a decomposed program's in-place op on an input or a buffer) comes before the user
    # outputs, in the order of the inputs it writes: so each case's in its own order.
    return (OutputKind.USER_OUTPUT, OutputKind.USER_INPUT_MUTATION, OutputKind.BUFFER_MUTATION)


@dataclass
class _Shares:
    inputs: list[list]  # per case: (InputSpec, its name in the case's own program: None for a user input)
    outputs: list[list]  # per case: its flat user outputs (nodes, or a constant)
    mutations: list[list]  # per case: (OutputSpec, node) of each input or buffer it writes
    owner: dict  # node -> the case it belongs to
    placeholders: dict  # the joint graph's placeholders by name


def _shares(program, inputs: list[tuple]) -> _Shares | None:
    """What each case owns of the joint program; None where a node or a constant is not one case's."""
    from torch.export.graph_signature import InputKind, OutputKind

    signature, graph = program.graph_signature, program.graph
    output_node = graph.output_node()
    flat_outputs = list(output_node.args[0])
    placeholders = {node.name: node for node in graph.nodes if node.op == "placeholder"}
    shares = _Shares([[] for _ in inputs], [], [[] for _ in inputs], {}, placeholders)
    user_inputs = iter(spec for spec in signature.input_specs if spec.kind == InputKind.USER_INPUT)
    for index, case_inputs in enumerate(inputs):  # user inputs by position
        shares.inputs[index] = [(next(user_inputs), None) for _ in case_inputs]
        for spec, _ in shares.inputs[index]:
            shares.owner[placeholders[spec.arg.name]] = index
    mutations = [spec for spec in signature.output_specs if spec.kind != OutputKind.USER_OUTPUT]
    start = len(mutations)  # the mutations' outputs come first
    for child in program.call_spec.out_spec.children():  # outputs by the output's structure
        shares.outputs.append(flat_outputs[start : start + child.num_leaves])
        start += child.num_leaves
    for index, outputs in enumerate(shares.outputs):  # nodes by the outputs that depend on them
        for node in _ancestors([output for output in outputs if isinstance(output, torch.fx.Node)]):
            if shares.owner.setdefault(node, index) != index:
                return None  # a node two cases share
    for spec, node in zip(mutations, flat_outputs):  # a mutation by the input or buffer it writes
        written = placeholders.get(spec.target) if spec.kind == OutputKind.USER_INPUT_MUTATION else None
        index = shares.owner.get(written) if written is not None else _owner(spec.target, len(inputs))[0]
        if index is None:
            return None
        shares.mutations[index].append((spec, node))
        for ancestor in _ancestors([node]):
            if shares.owner.setdefault(ancestor, index) != index:
                return None
    for spec in signature.input_specs:  # state by its prefix; a lifted constant by who uses it
        if spec.kind == InputKind.USER_INPUT:
            continue
        node = placeholders[spec.arg.name]
        index, local = _owner(spec.target, len(inputs))
        index = shares.owner.get(node) if index is None else index
        if index is None:
            users = {shares.owner.get(user) for user in node.users}
            if len(users) != 1 or None in users:
                return None
            index = users.pop()
        shares.owner.setdefault(node, index)
        if LIFTED.fullmatch(local):  # numbered across the batch; the case's own export numbers its own from 0
            local = f"lifted_tensor_{sum(LIFTED.fullmatch(name or '') is not None for _, name in shares.inputs[index])}"
        shares.inputs[index].append((spec, local))
    for node in graph.nodes:  # nodes no output depends on (a check such as _assert_tensor_metadata): their inputs' case
        if node not in shares.owner and node is not output_node:
            owners = {shares.owner.get(n) for n in node.all_input_nodes}
            if len(owners) != 1 or None in owners:
                return None
            shares.owner[node] = owners.pop()
    return shares


def _symbols_made(graph) -> bool:
    """Whether tracing made any symbol in the ShapeEnv of the program's fake values."""
    from torch._guards import detect_fake_mode

    fake_mode = detect_fake_mode([node.meta.get("val") for node in graph.nodes if node.op == "placeholder"])
    shape_env = getattr(fake_mode, "shape_env", None)
    return shape_env is not None and bool(shape_env.var_to_range)  # every symbol made, backed or not, has a range


def _owner(target: str, cases: int) -> tuple[int | None, str]:
    """The case a joint parameter, buffer or constant belongs to, and its name in the case's own program."""
    if not target.startswith(JOINT_PREFIX):
        return None, target
    index, _, local = target[len(JOINT_PREFIX) :].partition(".")
    if not index.isdigit() or int(index) >= cases or not local:
        return None, target
    return int(index), local


def _ancestors(outputs: list) -> set:
    seen, stack = set(), list(outputs)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(node.all_input_nodes)
    return seen


def _program(joint, index: int, owned_inputs: list, placeholders: dict, nodes: list, mutations: list, outputs: list, module: torch.nn.Module,
             case_inputs: tuple, out_spec):  # fmt: skip
    """One case's ExportedProgram, built from its part of the joint one, its inputs named as its own export names them."""
    from torch._export.utils import placeholder_naming_pass
    from torch.export import ExportedProgram
    from torch.export._trace import _get_forward_arg_names
    from torch.export.exported_program import ModuleCallEntry, ModuleCallSignature
    from torch.export.graph_signature import ExportGraphSignature, InputKind, InputSpec, OutputKind, OutputSpec, TensorArgument
    from torch.utils import _pytree as pytree

    graph = torch.fx.Graph()
    env: dict = {}
    input_specs, state_dict, constants = [], {}, {}
    for spec, local in owned_inputs:
        old = placeholders[spec.arg.name]
        new = graph.node_copy(old, lambda n: env[n])
        env[old] = new
        if spec.kind == InputKind.USER_INPUT:
            input_specs.append(InputSpec(spec.kind, TensorArgument(new.name), None))
            continue
        input_specs.append(InputSpec(spec.kind, TensorArgument(new.name), local, spec.persistent))
        if spec.target in joint.constants:
            constants[local] = joint.constants[spec.target]
    # The module's whole state, as its own export keeps it, the state no node reads included.
    cases = len(joint.call_spec.out_spec.children())
    for kept, mine in ((joint.state_dict, state_dict), (joint.constants, constants)):
        for target, value in kept.items():
            owner, local = _owner(target, cases)
            if owner == index:
                mine.setdefault(local, value)
    for old in nodes:
        args, kwargs = torch.fx.map_arg((old.args, old.kwargs), lambda n: env[n])
        new = graph.create_node(old.op, old.target, args, kwargs, _traced_name(graph, old), old.type)
        new.meta = dict(old.meta)
        if "stack_trace" in old.meta:
            new.meta["stack_trace"] = _without_joint_frame(old.meta["stack_trace"])
        if "nn_module_stack" in old.meta:
            new.meta["nn_module_stack"] = _without_joint_module(old.meta["nn_module_stack"])
        env[old] = new
    graph.output(tuple([*(env[node] for _, node in mutations), *(env[o] for o in outputs)]))
    output_specs = [
        *(OutputSpec(spec.kind, TensorArgument(env[node].name), _mutated(spec, placeholders, env, cases)) for spec, node in mutations),
        *(OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(env[o].name), None) for o in outputs),
    ]
    graph_module = torch.fx.GraphModule(torch.nn.Module(), graph)
    signature = ExportGraphSignature(input_specs=input_specs, output_specs=output_specs)
    # torch.export's own pass, as it ends every export: user inputs after forward's parameters
    # (`x`, `args_0`: the ONNX exporter keeps them as the model's input names), state after its FQN.
    placeholder_naming_pass(graph_module, signature, module, tuple(case_inputs), {}, {}, constants)
    in_spec = pytree.tree_flatten((tuple(case_inputs), {}))[1]
    names = _get_forward_arg_names(module, tuple(case_inputs), {})  # the ONNX exporter's input names
    call = ModuleCallEntry("", ModuleCallSignature([], [], in_spec, out_spec, forward_arg_names=names))
    return ExportedProgram(
        root=graph_module,
        graph=graph_module.graph,
        graph_signature=signature,
        state_dict=state_dict,
        range_constraints={},
        module_call_graph=[call],
        example_inputs=(tuple(case_inputs), {}),
        constants=constants,
        verifiers=joint.verifiers,  # torch.export's: its training IR keeps in-place ops
    )


def _unsure_names(graph, owner: dict) -> set[int]:
    """The cases whose nodes' names _traced_name may not give as a trace of the case alone would.

    A trace numbers the names of an op's nodes in the order it makes them (sort, sort_1, ...), the nodes it
    later drops as dead included (a getitem of an output nobody reads). Numbered afresh within each case
    (_traced_name), a case's names are its own trace's if no node of that op was dropped before its own:
    then the joint graph numbers that op's nodes without a gap. After a gap, or out of order, the cases
    holding the op's later nodes are unsure."""
    following, gapped, unsure = {}, set(), set()
    for node in graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        base, number = _numbered(node.name)
        if number != following.get(base, 0):
            gapped.add(base)
        following[base] = number + 1
        if base in gapped:
            unsure.add(owner.get(node))
    return unsure


def _numbered(name: str) -> tuple[str, int]:
    """`sort_3` -> ("sort", 3), `sort` -> ("sort", 0), as torch.fx's namespace numbers a name."""
    base, _, number = name.rpartition("_")
    return (base, int(number)) if base and number.isdigit() else (name, 0)


def _traced_name(graph, node) -> str:
    """The name a trace of the case alone gives the node: its op's (as torch's proxy tracer names an ATen op,
    after its overload packet), numbered by the graph. The joint trace numbered them across the batch, and
    the ONNX exporter writes node names into the model."""
    target = node.target.overloadpacket.__name__ if isinstance(node.target, torch._ops.OpOverload) else node.target
    return graph._target_to_str(target)


def _mutated(spec, placeholders: dict, env: dict, cases: int) -> str:
    """The target of a mutation's output in the case's program: the input (the naming pass renames it) or the buffer it writes."""
    from torch.export.graph_signature import OutputKind

    if spec.kind == OutputKind.USER_INPUT_MUTATION:
        return env[placeholders[spec.target]].name
    return _owner(spec.target, cases)[1]


def _without_joint_frame(stack_trace: str) -> str:
    """A node's stack trace without Together.forward's frame: the trace the case's own export records."""
    kept, skip, dropped_first = [], False, False
    for number, line in enumerate(stack_trace.splitlines(keepends=True)):
        if line.lstrip().startswith("File "):
            skip = f'"{__file__}"' in line
            dropped_first = dropped_first or (skip and number == 0)
        if not skip:
            kept.append(line)
    if dropped_first and kept:  # the first frame is written unindented, the next ones indented
        kept[0] = kept[0].lstrip(" ")
    return "".join(kept)


def _without_joint_module(stack: dict) -> dict:
    """A node's module stack (key -> (path, type)) as the case's own export records it: Together's entry
    left out, the case's module the root (key L__self__, path ""), the paths below it without `cases.<i>.`."""
    entries = list(stack.items())[1:]
    if not entries:
        return dict(stack)
    root_path = entries[0][1][0]
    kept = {}
    for key, (path, kind) in entries:
        local = path[len(root_path) :].lstrip(".") if path.startswith(root_path) else path
        if not local:
            key = "L__self__"
        elif key.startswith("L__self__"):  # non-strict names them by path; strict by the module's id
            key = "L__self__" + local
        kept[key] = (local, kind)
    return kept
