"""The op a failure names by its node: where the tool said which node it failed on, no search is needed.

torch-mlir's FX importer, failing, names the node it was importing
(toolchain/torch_mlir.py's ImporterError, read back by classify's
IMPORTER_NODE: node and op). The backend imported the program after
torch-mlir's decompositions, whose node names are mostly, not always, the
exported graph's: the op named is the node of that name where its op
agrees, else the only node of that op. The localizer still runs the cut
there and the one before, to confirm it is the first to fail.
"""

from __future__ import annotations

from conformance.classify.torch_mlir import IMPORTER_NODE
from conformance.localize import graph
from conformance.result import Result
from conformance.taxonomy import Stage
from conformance.toolchain.torch_mlir import fx_op_name


def named_op(model_graph: graph.Graph, failure: Result) -> graph.OpNode | None:
    """The op of the graph the failure names by its node, or None (not said, or not found unambiguously)."""
    if failure.stage != Stage.IMPORT:
        return None
    said = IMPORTER_NODE.search(f"{failure.details}\n{failure.explanation}")
    if not said:
        return None
    node, op = said.group(1), said.group(2)
    same_op = [o for o in model_graph.ops if fx_op_name(o.node.target) == op]
    by_name = [o for o in same_op if o.name == node]
    if by_name:
        return by_name[0]
    return same_op[0] if len(same_op) == 1 else None

