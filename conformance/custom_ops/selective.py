"""The selective mode: torch-mlir's TOSA lowering, with chosen ops kept whole as tosa.custom.

The RFC's own flow (torch-mlir #1519): the ops listed in --custom-ops
(CUSTOM_OPS, this backend's own option) are

    import    left out of PyTorch's decomposition table
    contract  marked backend-legal (torchdynamo-export-to-torch-backend-
              pipeline's `backend-legal-ops`), so torch-mlir keeps them whole
    convert   rewritten to tosa.custom under contract v1 (torch_c casts link
              them to the torch IR around; their literal operands become
              tosa.const)
    lower     torch-mlir's TOSA pipeline lowers everything else
    verify    the MLIR verifier, no torch dialect, each kept op present as a
              tosa.custom whose attributes decode (not TOSA's strict spec
              validation: the rest is torch-mlir's own lowering, and the
              tosa backend answers for it)
    compile   IREE cannot run tosa.custom: the module is cut at its custom
              ops (partition.py) and the TOSA segments are compiled by
              iree-compile
    run       the segments on IREE, the custom ops on ATen, compared with eager
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from conformance.backends.protocol import CaseRun, StageFailure, shared
from conformance.custom_ops import convert, partition, verify
from conformance.run_options import Option, comma_list
from conformance.taxonomy import Code
from conformance.arrays import to_numpy
from conformance.toolchain.iree import TARGET_FLAGS, Compiled, compile_command, from_iree
from conformance.toolchain.lowerings import TOSA
from conformance.toolchain.mlir import write_ir
from conformance.toolchain.tools import run_tool
from conformance.toolchain.torch_mlir import TorchMlirBackend, contract_options, import_program, unsigned_as_eager

CUSTOM_OPS = Option(
    ("--custom-ops",),
    "ops the tosa-selective backend keeps from decomposition and turns into tosa.custom "
    "(comma-separated; default aten.layer_norm,aten.gelu)",
    type=comma_list,
    default=("aten.layer_norm", "aten.gelu"),
    metavar="OP[,OP...]",
)


def chosen_ops(case_run: CaseRun) -> list[str]:
    return list(case_run.options.get(CUSTOM_OPS.dest) or CUSTOM_OPS.default)


@dataclass
class Executable:
    compiled: Compiled | None  # None when the module has no TOSA segment (only custom ops)
    plan: partition.Plan


class SelectiveBackend(TorchMlirBackend):
    name = "tosa-selective"
    description = "torch-mlir TOSA with --custom-ops kept as tosa.custom; TOSA segments on IREE, custom ops on ATen"
    stages = ("export", "import", "contract", "convert", "lower", "verify", "compile", "run")
    lowering = TOSA
    in_matrix = False  # what it checks depends on --custom-ops
    options = (CUSTOM_OPS,)

    def flags(self) -> dict:
        return {"target": TARGET_FLAGS}

    # The same frontend as the tosa backend, keeping the chosen ops: other keys.
    @shared("import:torch-mlir-decompositions-keeping-custom-ops")
    def import_(self, program, case_run: CaseRun):
        return import_program(self.decomposed(program, case_run), case_run)

    def decomposition_table(self, case_run: CaseRun) -> dict:
        ops = chosen_ops(case_run)
        return {k: v for k, v in super().decomposition_table(case_run).items() if not convert.selected(str(k), ops)}

    @shared("contract:backend-legal-custom-ops")
    def contract(self, module, case_run: CaseRun):
        return TorchMlirBackend.contract(self, module, case_run)

    def contract_options(self, case_run: CaseRun) -> str:
        return contract_options((*self.backend_legal_ops, *chosen_ops(case_run)))

    def convert(self, contract, case_run: CaseRun):
        module = contract.clone()  # the contract is shared: never touch it
        fates = convert.convert_selected(module, chosen_ops(case_run))
        case_run.extras.update(fates.extras())
        case_run.notes["custom_counts"] = dict(fates.counts)
        if fates.failures:
            raise StageFailure(
                Code.CUSTOM_OP_UNCONVERTIBLE,
                fates.summary(),
                op=fates.failures[0].op,
                details="\n".join(f.sentence for f in fates.failures),
            )
        return module

    def verify(self, lowered, case_run: CaseRun):
        counts = verify.verify(lowered, only_custom=False, validate=False)
        found: Counter = Counter()
        for op in verify.custom_ops(lowered):
            found[op.attributes["operator_name"].value] += 1
        expected = case_run.notes.get("custom_counts", {})
        for name, n in expected.items():
            if found[name] != n:
                raise StageFailure(
                    Code.VERIFIER_ERROR,
                    f"{n} {name} op(s) were converted to tosa.custom but {found[name]} are in the lowered module",
                    op=name,
                )
        extra = sorted(set(found) - set(expected))
        if extra:
            raise StageFailure(Code.VERIFIER_ERROR, f"tosa.custom ops nobody asked for are in the module: {', '.join(extra)}")
        case_run.extras["custom_op_count"] = counts.get("tosa.custom", 0)
        return lowered

    def compile(self, lowered, case_run: CaseRun) -> Executable:
        try:
            segments, plan = partition.split(lowered)
        except partition.PartitionError as e:
            raise StageFailure(Code.COMPILER_ERROR, f"cannot cut the module at its custom ops: {e}") from None
        if not plan.segments:
            return Executable(None, plan)
        source = write_ir(segments.operation, case_run.workdir / "segments.mlir", generic=self.lowering.generic_form)
        output = source.with_suffix(".vmfb")
        input_type = self.lowering.iree_input_type
        case_run.reproduce(
            "compile",
            {"input.mlir": lambda path: path.write_bytes(source.read_bytes())},
            compile_command("input.mlir", "module.vmfb", input_type, TARGET_FLAGS, tool="iree-compile"),
        )
        run_tool("iree-compile", compile_command(str(source), str(output), input_type, TARGET_FLAGS))
        return Executable(Compiled(output), plan)

    def run(self, executable: Executable, inputs, case_run: CaseRun):
        def call_segment(name, tensors):
            outputs = executable.compiled.function(name)(*[to_numpy(t) for t in tensors])
            outputs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
            return [from_iree(o) for o in outputs]

        try:
            outputs = executable.plan.run(list(inputs), call_segment)
        except partition.PartitionError as e:
            raise StageFailure(Code.RUNTIME_ERROR, str(e)) from None
        # Signless segments hand uint8 back as int8, as every IREE module does: read them as eager's.
        return unsigned_as_eager(outputs[0] if len(outputs) == 1 else tuple(outputs), case_run)
