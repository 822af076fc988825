"""`tosa-ref`: torch-mlir's TOSA, serialized by tosa-opt and run by the Arm TOSA reference model."""

from conformance.toolchain.tosa_reference import TosaReferenceBackend


class TosaRef(TosaReferenceBackend):
    name = "tosa-ref"


BACKEND = TosaRef()
