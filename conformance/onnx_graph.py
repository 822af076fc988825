"""Reading ONNX graphs: every node (subgraphs included), and value types as text.

Shared by the onnx-node suite (conformance/cases/sources/onnx_node.py) and the
ONNX frontend (conformance/toolchain/onnx.py); onnx is imported only when used.
"""

from __future__ import annotations


def nodes(graph):
    """Every node of `graph`, the nodes of its subgraphs (If, Loop, Scan bodies) included, in order."""
    for node in graph.node:
        yield node
        for attribute in node.attribute:
            if attribute.HasField("g"):
                yield from nodes(attribute.g)
            for subgraph in attribute.graphs:
                yield from nodes(subgraph)


def type_text(type_proto) -> str:
    """An ONNX TypeProto as text: `tensor<FLOAT>`, `sequence<tensor<INT64>>`, `map<INT64, tensor<FLOAT>>`."""
    from onnx import TensorProto

    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        return f"tensor<{TensorProto.DataType.Name(type_proto.tensor_type.elem_type)}>"
    if kind == "sparse_tensor_type":
        return f"sparse_tensor<{TensorProto.DataType.Name(type_proto.sparse_tensor_type.elem_type)}>"
    if kind == "sequence_type":
        return f"sequence<{type_text(type_proto.sequence_type.elem_type)}>"
    if kind == "optional_type":
        return f"optional<{type_text(type_proto.optional_type.elem_type)}>"
    if kind == "map_type":
        key = TensorProto.DataType.Name(type_proto.map_type.key_type)
        return f"map<{key}, {type_text(type_proto.map_type.value_type)}>"
    return "undefined"


def kinds_and_elements(type_proto) -> tuple[set[str], set[int]]:
    """The container kinds a TypeProto nests and the element types it ends in."""
    kind = type_proto.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        return {kind}, {getattr(type_proto, kind).elem_type}
    inner = {
        "sequence_type": lambda: type_proto.sequence_type.elem_type,
        "optional_type": lambda: type_proto.optional_type.elem_type,
        "map_type": lambda: type_proto.map_type.value_type,
    }.get(kind)
    if inner is None:
        return {str(kind)}, set()
    kinds, elements = kinds_and_elements(inner())
    return kinds | {kind}, elements
