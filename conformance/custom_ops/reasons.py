"""Why an op cannot become a `tosa.custom`: the kinds, each with its explanation.

A kind is a stable short name (it lands in Results' extras and in the audit
table); its explanation says, once, why contract v1 does not convert that
kind of op. Per-op sentences (in Results) name the op and the operand.
"""

from __future__ import annotations

from enum import StrEnum

# The fates of an op other than an unconvertible kind.
CONVERTED = "converted"  # became one tosa.custom
ERASED = "erased-assertion"  # a metadata assertion, checked against the static IR types and erased

FOLDED = "folded-constant"  # a scalar op of compile-time constants, evaluated and spelt where used

FOLDED_EXPLANATION = (
    "a scalar op whose operands are all compile-time constants (aten.Int.bool of a literal, which the importer "
    "emits itself) is evaluated by PyTorch during the conversion, as torch-mlir's canonicalizer folds it, and its "
    "value is written into the implementation_attrs of the ops using it"
)

ERASED_EXPLANATION = (
    "aten._assert_tensor_metadata only asserts a dtype, sizes or strides that the IR's static tensor type already "
    "states; the conversion checks it against that type and erases it (as torch-mlir's canonicalizer does), so it "
    "is neither converted nor a reason to fail"
)


class Reason(StrEnum):
    """The kind of reason an op is not converted; its value lands in Results' extras, so it is never renamed."""

    RUNTIME_SCALAR = "runtime-scalar"
    NON_TENSOR_RESULT = "non-tensor-result"
    TENSOR_LIST_RESULT = "tensor-list-result"
    NO_RESULT = "no-result"
    DEVICE_ARGUMENT = "device-argument"
    GENERATOR_ARGUMENT = "generator-argument"
    MUTATION = "mutation"
    CONTROL_FLOW = "control-flow"
    NON_TOSA_ELEMENT_TYPE = "non-tosa-element-type"
    EMPTY_TENSOR = "empty-tensor"
    UNKNOWN_TENSOR_TYPE = "unknown-tensor-type"
    OUTSIDE_CONTRACT = "outside-contract"
    UNKNOWN_OPERATOR = "unknown-operator"
    SCHEMA_MISMATCH = "schema-mismatch"
    UNENCODABLE_OPERAND = "unencodable-operand"
    NON_TENSOR_ARGUMENT = "non-tensor-argument"
    UNIMPORTABLE_WEIGHT_LIST = "unimportable-weight-list"


EXPLANATIONS: dict[Reason, str] = {
    Reason.RUNTIME_SCALAR: (
        "an operand that must go into implementation_attrs (an int, float, bool or a list of them) is computed at "
        "run time (e.g. from aten.size or aten.item), and contract v1 encodes only values known at compile time; "
        "TOSA has no dynamically computed scalars"
    ),
    Reason.NON_TENSOR_RESULT: (
        "the op returns a Python scalar or a list of them, not a tensor, and a tosa.custom can only produce tensors"
    ),
    Reason.TENSOR_LIST_RESULT: (
        "the op returns a list of tensors whose length the IR does not fix (no torch.prim.ListUnpack of it), so its "
        "results cannot be laid out in output_list"
    ),
    Reason.NO_RESULT: (
        "the op returns nothing and acts by side effect (an assertion, a print), which a value-semantic tosa.custom "
        "cannot express"
    ),
    Reason.DEVICE_ARGUMENT: (
        "the op takes a torch.Device operand; a TOSA program has no devices, and contract v1 does not encode one"
    ),
    Reason.GENERATOR_ARGUMENT: (
        "the op takes a random-number Generator, which is PyTorch run-time state with no encoding in contract v1"
    ),
    Reason.MUTATION: (
        "the op writes into one of its operands (in-place or out= semantics, or a non-value tensor), and tosa.custom "
        "has value semantics"
    ),
    Reason.CONTROL_FLOW: "the op holds regions (control flow, a higher-order op), which one tosa.custom cannot carry",
    Reason.NON_TOSA_ELEMENT_TYPE: (
        "a tensor operand or result has an element type no TOSA profile or extension allows (f64, unsigned "
        "integers, complex, quantized)"
    ),
    Reason.EMPTY_TENSOR: (
        "an empty tensor (a zero-sized dimension) crosses the function boundary as a result, or has a dynamic size "
        "too; contract v1 spells empty operands and results of ops in implementation_attrs by shape and dtype, but "
        "no TOSA op can produce one for the function to return, TOSA shapes having no zero dimension"
    ),
    Reason.UNKNOWN_TENSOR_TYPE: "a tensor operand or result has no known rank or dtype, so it has no TOSA tensor type",
    Reason.OUTSIDE_CONTRACT: (
        "the op is torch-mlir IR plumbing or TorchScript's (torch.prim.*, torch.operator of another namespace), not "
        "an ATen or prims operator, and contract v1 converts only torch.aten.* and torch.prims.* ops"
    ),
    Reason.UNKNOWN_OPERATOR: (
        "the op is not registered in torch.ops, so its schema (operand names, kinds and order) cannot be recovered"
    ),
    Reason.SCHEMA_MISMATCH: "the op's operands in the IR do not line up with its PyTorch schema",
    Reason.UNENCODABLE_OPERAND: "an operand is of a kind contract v1 has no encoding for",
    Reason.NON_TENSOR_ARGUMENT: "the function takes a non-tensor argument, which a TOSA function cannot receive",
    Reason.UNIMPORTABLE_WEIGHT_LIST: (
        "the op takes a list of weights (aten.lstm's params); torch-mlir's FX importer freezes weights into "
        "literals and cannot put them in a torch list, so without decomposing the op there is no torch IR to convert"
    ),
}


def explain(kind: str) -> str:
    """The explanation of a reason kind or of a handled fate (a plain string read back from a Result works too)."""
    if kind == ERASED:
        return ERASED_EXPLANATION
    if kind == FOLDED:
        return FOLDED_EXPLANATION
    return EXPLANATIONS.get(kind, "no explanation recorded for this kind")
