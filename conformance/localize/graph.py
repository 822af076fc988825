"""The exported program as localization sees it: its ops in order, prefixes cut at an op, one op alone.

A model case is exported once (torch.export, the case's own mode) and saved
beside its inputs; the parent and the supervised child both read that file,
so they number the ops alike. The ops are the graph's call_function nodes
except `getitem` (which belongs to the op whose tuple it unpacks). Cut `k`
keeps ops 1..k and returns every value they computed that a later op (or
the model's output) still needs: the activations at the cut, so an error
anywhere in the prefix shows there, on a branch not yet merged too.

Higher-order ops (`torch.no_grad()` regions, autocast, cond, while_loop ...)
are inlined first (inline.py): the ops inside them are ops of the graph.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch
import torch.fx

from conformance.content import PROJECT_ROOT
from conformance.localize import inline
from conformance.toolchain.decompose import decompose as core_aten

PROGRAM = "program.pt2"
INPUTS = "inputs.pt"
# torch's own frames (nn.Module.__call__, F.conv2d ...) are not the model's code; the venv may be a symlink.
TORCH_DIRS = {str(Path(torch.__file__).parent) + "/", str(Path(torch.__file__).resolve().parent) + "/"}


def export_case(module: torch.nn.Module, inputs: list[torch.Tensor], strict: bool) -> torch.export.ExportedProgram:
    return flat_outputs(torch.export.export(module, tuple(inputs), strict=strict))


def flat_outputs(program: torch.export.ExportedProgram) -> torch.export.ExportedProgram:
    """`program` returning its outputs as one flat tuple (changed in place).

    A model's outputs may be a library's container (a transformers
    ModelOutput): the saved program would name its class, and the child
    loading it, which never imports that library, could not read it back.
    The cuts return flat tuples anyway.
    """
    signature = program.module_call_graph[0].signature
    if signature is not None:
        signature.out_spec = torch.utils._pytree.tree_structure(tuple(range(signature.out_spec.num_leaves)))
    return program


def decompose(program: torch.export.ExportedProgram) -> torch.export.ExportedProgram:
    """`program` in torch's core ATen ops (an op case of one op may be several there)."""
    return flat_outputs(core_aten(program))


def of_program(program: torch.export.ExportedProgram, inputs: list[torch.Tensor]) -> Graph:
    """The graph of `program`, its higher-order ops inlined as eager runs on `inputs`."""
    return Graph(*inline.inline(program.module(), inputs))


def save(directory: Path, program: torch.export.ExportedProgram, input_sets: list[list[torch.Tensor]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    torch.export.save(program, directory / PROGRAM)
    torch.save(input_sets, directory / INPUTS)
    _LOADED.pop(str(Path(directory).resolve()), None)  # an earlier program saved there is not this one


def load_inputs(directory: Path) -> list[list[torch.Tensor]]:
    return torch.load(Path(directory) / INPUTS, weights_only=True)


_LOADED: dict[str, Graph] = {}


def load(directory: Path) -> Graph:
    """The saved program of `directory` (read once per process: every cut of it shares it)."""
    key = str(Path(directory).resolve())
    if key not in _LOADED:
        _LOADED[key] = of_program(torch.export.load(Path(directory) / PROGRAM), load_inputs(directory)[0])
    return _LOADED[key]


@dataclass(frozen=True)
class OpNode:
    """One op of the graph: its 1-based index, the FX node, where the model's source calls it."""

    index: int
    node: torch.fx.Node

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def aten(self) -> str:
        """`aten.relu_.default` -> `aten.relu_`: the name classification and xfail sets use."""
        target = str(self.node.target)
        parts = target.split(".")
        return ".".join(parts[:2]) if len(parts) > 2 else target

    @property
    def target(self) -> str:
        return str(self.node.target)

    @property
    def source(self) -> str:
        """`file:line` of the model's own code that called the op (the innermost frame outside torch)."""
        frames = [line.strip() for line in (self.node.meta.get("stack_trace") or "").splitlines() if line.strip().startswith("File ")]
        # Nor is code torch generated (`File "<eval_with_key>.3"`: a cond's branch as dynamo traced it).
        own = [f for f in frames if not any(d in f for d in TORCH_DIRS) and not f.startswith('File "<')]
        if not own:  # a model with no code of its own (an nn.Sequential): module_path says where
            return ""
        # 'File "/path/model.py", line 35, in forward'
        text = own[-1]
        try:
            path = text.split('"')[1]
            line = text.split(", line ")[1].split(",")[0]
        except IndexError:
            return text
        return f"{path.removeprefix(str(PROJECT_ROOT) + '/')}:{line}"

    @property
    def within(self) -> list[str]:
        """The higher-order ops the op sat in before inlining, outermost first (`wrap_with_set_grad_enabled ...`)."""
        return inline.within(self.node)

    @property
    def module_path(self) -> str:
        """The submodule that called it, as nn_module_stack names it (`layer1.0.conv1 (Conv2d)`)."""
        stack = self.node.meta.get("nn_module_stack") or {}
        if not stack:
            return ""
        path, kind = list(stack.values())[-1]
        kind = getattr(kind, "__name__", str(kind)).rsplit(".", 1)[-1]
        return f"{path or '(top)'} ({kind})"


class Graph:
    def __init__(self, module: torch.fx.GraphModule, inlined: inline.Inlined | None = None):
        self.module = module
        self.inlined = inlined or inline.Inlined()  # the higher-order ops opened, and those kept whole
        self.nodes = list(module.graph.nodes)
        self.ops = [
            OpNode(i + 1, n)
            for i, n in enumerate(n for n in self.nodes if n.op == "call_function" and n.target is not operator.getitem)
        ]
        self.owner: dict[torch.fx.Node, int] = {}  # node -> index of the op it belongs to
        for op in self.ops:
            self.owner[op.node] = op.index
        for n in self.nodes:
            if n.op == "call_function" and n.target is operator.getitem:
                self.owner[n] = self.owner.get(n.args[0], 0)

    def op(self, index: int) -> OpNode:
        return self.ops[index - 1]

    def live_at(self, index: int) -> list[torch.fx.Node]:
        """The values ops 1..index computed that a later op or the output still needs."""
        live = []
        for n, owner in self.owner.items():
            if owner == 0 or owner > index or _is_tuple(n):
                continue
            if any(u.op == "output" or self.owner.get(u, 0) > index for u in n.users):
                live.append(n)
        live.sort(key=self.nodes.index)
        return live

    def cut(self, index: int) -> torch.fx.GraphModule:
        """Ops 1..index, returning the activations at the cut; the model's inputs are its inputs."""
        graph = torch.fx.Graph()
        env: dict[torch.fx.Node, torch.fx.Node] = {}

        def value(n: torch.fx.Node) -> torch.fx.Node:
            if n not in env and n.op == "get_attr":  # a weight, taken when first used
                env[n] = graph.node_copy(n)
            return env[n]

        for n in self.nodes:
            if n.op == "placeholder":
                env[n] = graph.node_copy(n)
            elif 0 < self.owner.get(n, 0) <= index:
                env[n] = graph.node_copy(n, value)
        outputs = [env[n] for n in self.live_at(index)]
        graph.output(tuple(outputs))
        return torch.fx.GraphModule(self.module, graph)

    def activations(self, input_set: list[torch.Tensor], wanted: set[torch.fx.Node]) -> dict[torch.fx.Node, Any]:
        """The values eager computes for `wanted` nodes on one input set (cloned: later in-place ops do not touch them)."""
        seen: dict[torch.fx.Node, Any] = {}

        class Recorder(torch.fx.Interpreter):
            def run_node(self, n):
                result = super().run_node(n)
                if n in wanted:
                    seen[n] = torch.utils._pytree.tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, result)
                return result

        with torch.no_grad():
            Recorder(self.module).run(*input_set)
        return seen


def _is_tuple(n: torch.fx.Node) -> bool:
    return isinstance(n.meta.get("val"), (tuple, list))
