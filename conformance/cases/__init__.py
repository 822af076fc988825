"""Declaring cases: `op(...)`, `model(...)`, `T(...)` and `Dyn(...)`."""

from conformance.cases.spec import Case, CaseError, Dyn, FunctionModule, T, model, op

__all__ = ["Case", "CaseError", "Dyn", "FunctionModule", "T", "model", "op"]
