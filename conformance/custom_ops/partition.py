"""Running a TOSA module that holds tosa.custom ops: TOSA on IREE, the custom ops on ATen.

IREE cannot execute a tosa.custom. The selective mode's module is cut at
its custom ops instead: the TOSA ops are grouped into segments by phase
(phase 0 needs only the function's arguments; a custom op whose operands
are ready after phase p runs between segments p and p+1; an op reading a
custom op's result belongs to a later phase), each segment becomes a
function of one module that iree-compile compiles, and the custom ops are
dispatched to `torch.ops.<operator_name>` exactly as the interpreter does.
The TOSA that torch-mlir produced is thus run by a real runtime, and the
custom ops by the contract alone.

    segment functions   @seg<k>(original arguments..., values from earlier
                        phases...) -> (values later phases, custom ops or
                        the return need)
    constants           cloned into every segment that uses them; read in
                        Python when a custom op or the return uses them
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from conformance.custom_ops import constants, contract


class PartitionError(Exception):
    pass


@dataclass
class Segment:
    name: str
    inputs: list[int]  # slots passed after the function's own arguments
    outputs: list[int]  # slots its results fill


@dataclass
class Custom:
    operator_name: str
    call: contract.Call
    overload: Any
    inputs: list[int]
    outputs: list[int]


@dataclass
class Plan:
    """What to execute, in order: segments (on IREE) and custom ops (on ATen), over numbered slots."""

    arguments: int
    steps: list[Segment | Custom | tuple[int, torch.Tensor]] = field(default_factory=list)  # (slot, constant)
    returns: list[int] = field(default_factory=list)
    slots: int = 0

    @property
    def segments(self) -> list[Segment]:
        return [s for s in self.steps if isinstance(s, Segment)]

    def run(self, inputs: list[torch.Tensor], call_segment) -> list[torch.Tensor]:
        """Execute; `call_segment(name, tensors) -> list of tensors` runs one compiled segment."""
        if len(inputs) != self.arguments:
            raise PartitionError(f"@main takes {self.arguments} argument(s), got {len(inputs)}")
        env: list[Any] = [None] * self.slots
        env[: len(inputs)] = inputs
        for step in self.steps:
            if isinstance(step, tuple):
                env[step[0]] = step[1].clone()
            elif isinstance(step, Segment):
                outputs = call_segment(step.name, list(inputs) + [env[i] for i in step.inputs])
                if len(outputs) != len(step.outputs):
                    raise PartitionError(f"{step.name} returned {len(outputs)} value(s), {len(step.outputs)} expected")
                for slot, value in zip(step.outputs, outputs):
                    env[slot] = value
            else:
                positional, keywords = contract.bind(step.call, [env[i] for i in step.inputs])
                with torch.no_grad():
                    returned = step.overload(*positional, **keywords)
                for slot, value in zip(step.outputs, contract.outputs(step.operator_name, step.call, returned)):
                    env[slot] = value
        return [env[i] for i in self.returns]


def _is_free(op) -> bool:
    """A constant: no operands, one result, no regions; cloned wherever it is needed."""
    return not list(op.operation.operands) and len(op.operation.results) == 1 and not len(op.operation.regions) and (
        op.operation.name in ("tosa.const", "arith.constant", "tosa.const_shape")
    )


def split(module) -> tuple[Any, Plan]:
    """(a module of segment functions @seg<k>, in `module`'s context, the Plan); `module` is untouched."""
    from torch_mlir import ir

    mains = [op for op in module.body.operations if op.operation.name == "func.func"]
    if len(mains) != 1:
        raise PartitionError(f"the module must hold one function, it holds {len(mains)}")
    main = mains[0]
    block = main.regions[0].blocks[0]
    ops = list(block.operations)
    returned = ops[-1]
    body = ops[:-1]

    slot: dict = {}
    phase: dict = {}
    for arg in block.arguments:
        slot[arg] = len(slot)
        phase[arg] = 0
    op_phase: dict[int, int] = {}  # index in body -> phase (segments) or boundary (custom ops)
    free: set[int] = set()
    customs: list[int] = []
    for i, op in enumerate(body):
        for r in op.operation.results:
            slot[r] = len(slot)
        if _is_free(op):
            free.add(i)
            phase[op.result] = 0
            continue
        p = max((phase[v] for v in op.operation.operands), default=0)
        op_phase[i] = p
        if op.operation.name == "tosa.custom":
            customs.append(i)
            for r in op.operation.results:
                phase[r] = p + 1
        else:
            for r in op.operation.results:
                phase[r] = p
    producer: dict = {}
    index: dict = {}  # Operation -> its position in body
    for i, op in enumerate(body):
        index[op.operation] = i
        for r in op.operation.results:
            producer[r] = i

    plan = Plan(arguments=len(block.arguments), slots=len(slot))
    segment_module = ir.Module.parse("module {}", context=module.context)
    read_consts: set[int] = set()
    resources: dict | None = None

    def const_step(i: int):
        nonlocal resources
        if i in read_consts:
            return
        read_consts.add(i)
        if resources is None:
            resources = constants.blobs(module.operation)
        attr = body[i].operation.attributes["values" if body[i].operation.name == "tosa.const" else "value"]
        plan.steps.append((slot[body[i].result], constants.to_tensor(attr, resources)))

    last = max(op_phase.values(), default=0)
    for k in range(last + 1):
        members = [i for i, p in op_phase.items() if p == k and i not in customs]
        member_set = set(members)
        inputs, outputs = [], []
        for i in members:
            for v in body[i].operation.operands:
                source = producer.get(v)
                if source is None or source in member_set or source in free:
                    continue  # a function argument (always passed), a member, or a constant (cloned)
                if v not in inputs:
                    inputs.append(v)
        for i in members:
            for r in body[i].operation.results:
                users = [u.owner for u in r.uses]
                if any(index.get(u.operation) not in member_set for u in users):
                    outputs.append(r)
        if outputs:
            name = f"seg{k}"
            _build_segment(segment_module, main, body, producer, members, free, inputs, outputs, name)
            plan.steps.append(Segment(name, [slot[v] for v in inputs], [slot[v] for v in outputs]))
        for i in (c for c in customs if op_phase[c] == k):
            op = body[i]
            for v in op.operation.operands:
                if producer.get(v) in free:
                    const_step(producer[v])
            attrs = op.operation.attributes
            operator = attrs["operator_name"].value
            try:
                call = contract.decode(attrs["implementation_attrs"].value)
                overload = contract.resolve(operator)
            except contract.ContractError as e:
                raise PartitionError(f"tosa.custom {operator}: {e}") from None
            plan.steps.append(
                Custom(operator, call, overload, [slot[v] for v in op.operation.operands], [slot[r] for r in op.operation.results])
            )
    for v in returned.operation.operands:
        if producer.get(v) in free:
            const_step(producer[v])
    plan.returns = [slot[v] for v in returned.operation.operands]
    return segment_module, plan


def _build_segment(segment_module, main, body, producer, members, free, inputs, outputs, name) -> None:
    """Clone @main into `segment_module` as @name keeping only `members` (and the constants they use)."""
    from torch_mlir import ir
    from torch_mlir.dialects import func as func_d

    with main.context, ir.Location.unknown(main.context):
        clone = main.operation.clone(ir.InsertionPoint(segment_module.body))
        block = clone.regions[0].blocks[0]
        cloned = list(block.operations)

        def mirror(value):
            # The clone's counterpart of an original op result: same op position, same result number.
            i = producer[value]
            number = list(body[i].operation.results).index(value)
            return cloned[i].operation.results[number]

        for value in inputs:
            argument = block.add_argument(value.type, ir.Location.unknown())
            mirror(value).replace_all_uses_with(argument)
        cloned[-1].operation.erase()  # the original return
        with ir.InsertionPoint(block):
            func_d.ReturnOp([mirror(v) for v in outputs])
        keep = set(members)
        keep |= {producer[v] for i in members for v in body[i].operation.operands if producer.get(v) in free}
        for i in reversed(range(len(body))):
            if i not in keep:
                cloned[i].operation.erase()
        arg_types = [a.type for a in block.arguments]
        clone.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(arg_types, [v.type for v in outputs]))
        clone.attributes["sym_name"] = ir.StringAttr.get(name)
