"""Running a custom-op module by dispatching each `tosa.custom` back to PyTorch.

The module may hold only func.func @main, func.return, tosa.const and
tosa.custom with domain_name "torch". Arguments are bound to @main's block
arguments, constants are read from their attributes (resource blobs
included), and each tosa.custom calls `torch.ops.<operator_name>` with the
arguments decoded from implementation_attrs. Nothing of the original torch
IR is consulted: what the outputs are made of is exactly what the contract
kept.

`Program.load` reads the module once into a list of steps; `Program.run`
executes it on one input set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from conformance.custom_ops import constants, contract


class InterpreterError(Exception):
    """The module holds something the interpreter does not run, or a call went wrong."""

    def __init__(self, message: str, op: str | None = None):
        super().__init__(message)
        self.op = op


@dataclass
class Step:
    kind: str  # "const" | "custom"
    outputs: list[int]  # slots written
    inputs: list[int]  # slots read (custom)
    value: Any = None  # the tensor (const)
    operator_name: str = ""
    overload: Any = None
    call: contract.Call | None = None


@dataclass
class Program:
    arguments: int
    steps: list[Step]
    returns: list[int]
    slots: int

    @classmethod
    def load(cls, module) -> Program:
        main = [op for op in module.body.operations if op.operation.name == "func.func"]
        if len(main) != 1:
            raise InterpreterError(f"the module must hold one function, it holds {len(main)}")
        block = main[0].regions[0].blocks[0]
        slot: dict = {}

        def new(value) -> int:
            slot[value] = len(slot)
            return slot[value]

        def read(value) -> int:
            if value not in slot:
                raise InterpreterError(f"value {value.get_name()} is used before it is defined")
            return slot[value]

        for arg in block.arguments:
            new(arg)
        steps: list[Step] = []
        returns: list[int] | None = None
        resources: dict[str, bytes] | None = None
        for op in block.operations:
            name = op.operation.name
            if name == "tosa.const":
                if resources is None:
                    resources = constants.blobs(module.operation)
                tensor = constants.to_tensor(op.operation.attributes["values"], resources)
                steps.append(Step("const", [new(op.result)], [], value=tensor))
            elif name == "tosa.custom":
                attrs = op.operation.attributes
                domain = attrs["domain_name"].value
                operator = attrs["operator_name"].value
                if domain != contract.DOMAIN:
                    raise InterpreterError(f"tosa.custom {operator} has domain {domain!r}, not {contract.DOMAIN!r}")
                text = attrs["implementation_attrs"].value
                try:
                    overload = contract.resolve(operator)
                    call = contract.decode(text)
                except contract.ContractError as e:
                    raise InterpreterError(f"tosa.custom {operator}: {e}") from None
                inputs = [read(v) for v in op.operation.operands]
                outputs = [new(r) for r in op.operation.results]
                steps.append(Step("custom", outputs, inputs, operator_name=operator, overload=overload, call=call))
            elif name == "func.return":
                returns = [read(v) for v in op.operation.operands]
            else:
                raise InterpreterError(f"the interpreter runs tosa.const and tosa.custom only, not {name}")
        if returns is None:
            raise InterpreterError("@main has no func.return")
        return cls(len(block.arguments), steps, returns, len(slot))

    def run(self, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
        if len(inputs) != self.arguments:
            raise InterpreterError(f"@main takes {self.arguments} argument(s), got {len(inputs)}")
        env: list[Any] = [None] * self.slots
        env[: len(inputs)] = inputs
        for step in self.steps:
            if step.kind == "const":
                env[step.outputs[0]] = step.value.clone()  # ops may write into what they get; keep the constant
                continue
            tensors = [env[i] for i in step.inputs]
            try:
                positional, keywords = contract.bind(step.call, tensors)
                with torch.no_grad():
                    returned = step.overload(*positional, **keywords)
                outputs = contract.outputs(step.operator_name, step.call, returned)
            except Exception as e:  # the op itself refused the decoded arguments: name it
                first = str(e).strip().splitlines()[0] if str(e).strip() else ""
                raise InterpreterError(f"{step.operator_name} raised {type(e).__name__}: {first}", step.operator_name) from e
            if len(outputs) != len(step.outputs):
                raise InterpreterError(
                    f"{step.operator_name} gave {len(outputs)} output(s) for the {len(step.outputs)} of its tosa.custom",
                    step.operator_name,
                )
            for index, value in zip(step.outputs, outputs):
                env[index] = value
        return [env[i] for i in self.returns]


def interpret(module, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    return Program.load(module).run(inputs)
