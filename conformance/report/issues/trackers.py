"""Which upstream tracker a tool's failure goes to, from the tool's name as Backend.tool(stage) gives it.

A group's tool names the public tools by their own names ("torch-mlir tosa
lowering", "iree-compile (tosa input, llvm-cpu x86-64-v3)", "TOSA reference
model", "torch.export"); a wrong answer names the path that computed it
("torch-mlir tosa lowering + IREE (...)"), and then both trackers are
candidates, in the order the path runs them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tracker:
    project: str
    url: str  # where new issues are filed


TORCH_MLIR = Tracker("torch-mlir", "https://github.com/llvm/torch-mlir/issues")
IREE = Tracker("IREE", "https://github.com/iree-org/iree/issues")
TOSA_TOOLS = Tracker("tosa-tools (tosa-opt, the TOSA reference model)", "https://gitlab.arm.com/tosa/tosa-tools/-/issues")
PYTORCH = Tracker("PyTorch", "https://github.com/pytorch/pytorch/issues")
ONNX = Tracker("ONNX", "https://github.com/onnx/onnx/issues")

# (a word in the tool's name, its tracker), tried in the order the tool's name mentions them.
_WORDS = [
    ("torch-mlir", TORCH_MLIR),
    ("iree", IREE),
    ("tosa-opt", TOSA_TOOLS),
    ("tosa reference model", TOSA_TOOLS),
    ("torch.export", PYTORCH),
    ("eager pytorch", PYTORCH),
    ("torch.onnx", PYTORCH),
    ("onnx", ONNX),
]


def trackers(tool: str) -> list[Tracker]:
    """The trackers `tool`'s name points at, in the order it names them; [] for a tool of no known project."""
    lowered = tool.lower()
    found = sorted(((lowered.find(word), tracker) for word, tracker in _WORDS if word in lowered), key=lambda item: item[0])
    ordered: list[Tracker] = []
    for _, tracker in found:
        if tracker not in ordered:
            ordered.append(tracker)
    return ordered
