"""Checking a module after the rewrite: valid TOSA, no torch dialect left, every tosa.custom readable.

Three checks, each a StageFailure when it fails:
  - MLIR's verifier and TOSA's own validation pass (`tosa-validate`,
    strict, against TARGET): VERIFIER_ERROR;
  - no torch dialect op, type or attribute anywhere (and, for the all-ops
    mode, nothing but func, tosa.const and tosa.custom): VERIFIER_ERROR;
  - each tosa.custom of domain "torch" names an operator torch.ops knows
    and its implementation_attrs decode under the contract, with as many
    tensor references as operands and results: VERIFIER_ERROR.
"""

from __future__ import annotations

from collections import Counter

from conformance.backends.protocol import StageFailure
from conformance.custom_ops import contract
from conformance.taxonomy import Code
from conformance.toolchain.mlir import PipelineError, run_pipeline, walk

# The TOSA target the modules are validated against: the 1.1 draft (dynamic
# shapes are an extension there), both profiles, the extensions PyTorch's
# dtypes and shapes need; spec alignment is strict.
TARGET = (
    "tosa-attach-target{specification_version=1.1.draft profiles=pro_int,pro_fp"
    " extensions=int16,int64,bf16,fp8e4m3,fp8e5m2,dynamic}"
)
VALIDATE = f"builtin.module({TARGET}, tosa-validate{{strict-op-spec-alignment}})"
ALL_OPS_MODE = {"builtin.module", "func.func", "func.return", "tosa.const", "tosa.custom"}


def _torch_leftover(operation) -> str | None:
    """A description of the first torch-dialect op, type or attribute in `operation`, else None."""
    for op in walk(operation):
        name = op.name
        if name.startswith(("torch.", "torch_c.")):
            return f"op {name}"
        types = [str(r.type) for r in op.results] + [str(v.type) for v in op.operands]
        for region in op.regions:
            for block in region.blocks:
                types += [str(a.type) for a in block.arguments]
        for text in types:
            if "!torch." in text:
                return f"type {text} (in {name})"
        for attr in op.attributes:
            text = str(op.attributes[attr])
            if "!torch." in text or "#torch." in text:
                return f"attribute {attr} of {name}"
    return None


def check_custom_op(op) -> tuple[str, contract.Call]:
    """(operator_name, decoded call) of one tosa.custom; ValueError says what is wrong."""
    attrs = op.attributes
    operator = attrs["operator_name"].value
    domain = attrs["domain_name"].value
    if domain != contract.DOMAIN:
        raise ValueError(f"tosa.custom {operator} has domain_name {domain!r}, not {contract.DOMAIN!r}")
    try:
        call = contract.decode(attrs["implementation_attrs"].value)
        contract.resolve(operator)
        used = sorted(_tensor_indices([a.value for a in call.args]))
        declared = sorted(i for group in contract.result_indices(call.results) for i in group if i is not None)
    except contract.ContractError as e:
        raise ValueError(f"tosa.custom {operator}: {e}") from None
    if used != list(range(len(op.operands))):
        raise ValueError(
            f"tosa.custom {operator}: implementation_attrs refers to tensors {used} but input_list has {len(op.operands)}"
        )
    if declared != list(range(len(op.results))):
        raise ValueError(
            f"tosa.custom {operator}: implementation_attrs declares outputs {declared} but output_list has {len(op.results)}"
        )
    return operator, call


def _tensor_indices(values) -> list[int]:
    out = []
    for v in values:
        if isinstance(v, contract.TensorRef):
            out.append(v.index)
        elif isinstance(v, list):
            out += _tensor_indices(v)
    return out


def custom_ops(module) -> list:
    """Every tosa.custom in `module`, in order."""
    return [op for op in walk(module.operation) if op.name == "tosa.custom"]


def verify(module, *, only_custom: bool, validate: bool = True) -> Counter:
    """Raise StageFailure unless `module` passes every check; return the count of each op name.

    `validate`: also run TOSA's validation against TARGET (the selective mode
    leaves it out: the rest of its module is torch-mlir's own TOSA lowering,
    which the tosa backend tests on its own).
    """
    from torch_mlir import ir

    with module.context:
        try:
            module.operation.verify()
        except ir.MLIRError as e:
            raise StageFailure(Code.VERIFIER_ERROR, f"the module does not verify: {_first_line(str(e))}", details=str(e))
    leftover = _torch_leftover(module.operation)
    if leftover:
        raise StageFailure(Code.VERIFIER_ERROR, f"torch dialect left after conversion: {leftover}")
    counts: Counter = Counter()
    for op in walk(module.operation):
        counts[op.name] += 1
        if only_custom and op.name not in ALL_OPS_MODE:
            raise StageFailure(Code.VERIFIER_ERROR, f"{op.name} is in the module, where only func, tosa.const and tosa.custom belong")
        if op.name == "tosa.custom":
            try:
                check_custom_op(op)
            except ValueError as e:
                raise StageFailure(Code.VERIFIER_ERROR, str(e), op=op.attributes["operator_name"].value) from None
    if not validate:
        return counts
    try:
        run_pipeline(module.operation.clone(), VALIDATE)
    except PipelineError as e:
        raise StageFailure(
            Code.VERIFIER_ERROR, f"TOSA validation rejects the module: {_first_error(e.diagnostics)}", details=e.diagnostics
        ) from None
    return counts


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return next((line for line in lines if "error" in line), lines[0] if lines else "")


def _first_error(text: str) -> str:
    for line in text.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()
    return _first_line(text)
