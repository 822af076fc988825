"""The op a failure names by its node: where the tool said which node it failed on, no search is needed.

Two tools say it:
    torch-mlir's FX importer  failing, it names the node it was importing (toolchain/torch_mlir.py's
                              ImporterError, read back by classify's IMPORTER_NODE: node and op)
    torch-mlir's pipelines    an op they reject (contract, lower) is an ATen op whose MLIR location is
                              its node's stack: the diagnostic's first frame, `"model.py":93:0`, and the op
                              (the Result's) pick the node, the first in graph order as MLIR meets them

The backend imported the program after torch-mlir's decompositions, whose
node names are mostly, not always, the exported graph's: the importer's
node is the node of that name where its op agrees, else the only node of
that op. A decomposition's own op is in no node of the exported graph:
then nothing is named and the localizer searches. Whatever is named, the
localizer runs the cut there and the one before, to confirm it is the
first to fail.
"""

from __future__ import annotations

import re

from conformance.classify.torch_mlir import IMPORTER_NODE
from conformance.localize import graph
from conformance.result import Result
from conformance.taxonomy import Stage
from conformance.toolchain.torch_mlir import fx_op_name

# The location of an MLIR error: the innermost frame of the op's node, alone or first in a callsite(...).
DIAGNOSTIC_FRAME = re.compile(r'error: (?:loc\()?(?:callsite\()?"([^"]+)":(\d+):\d+')
PIPELINE_STAGES = {Stage.CONTRACT, Stage.LOWER}


def named_op(model_graph: graph.Graph, failure: Result) -> graph.OpNode | None:
    """The op of the graph the failure names by its node, or None (not said, or not found unambiguously)."""
    text = f"{failure.details}\n{failure.explanation}"
    if failure.stage == Stage.IMPORT:
        said = IMPORTER_NODE.search(text)
        return _by_name(model_graph, said.group(1), said.group(2)) if said else None
    if failure.stage in PIPELINE_STAGES and (failure.op or "").startswith("aten."):
        frame = DIAGNOSTIC_FRAME.search(text)
        return _by_frame(model_graph, failure.op, *frame.groups()) if frame else None
    return None


def _same_op(o: graph.OpNode, op: str) -> bool:
    """`op` as the tools spell it: aten.index.Tensor (the importer), aten.erfinv or aten.median.dim (classification)."""
    return op in (fx_op_name(o.node.target), o.aten, o.target)


def _by_name(model_graph: graph.Graph, node: str, op: str) -> graph.OpNode | None:
    same_op = [o for o in model_graph.ops if _same_op(o, op)]
    by_name = [o for o in same_op if o.name == node]
    if by_name:
        return by_name[0]
    return same_op[0] if len(same_op) == 1 else None


def _by_frame(model_graph: graph.Graph, op: str, path: str, line: str) -> graph.OpNode | None:
    frame = f'File "{path}", line {line},'
    return next((o for o in model_graph.ops if _same_op(o, op) and frame in (o.node.meta.get("stack_trace") or "")), None)
