"""Declaring cases: `op(...)`, `model(...)`, `T(...)`, `Dyn(...)`, `Exact(...)` and `Stored(...)`."""

from conformance.cases.spec import Case, CaseError, CaseUnavailable, Dyn, Eager, Exact, FunctionModule, Stored, T, model, op

__all__ = ["Case", "CaseError", "CaseUnavailable", "Dyn", "Eager", "Exact", "FunctionModule", "Stored", "T", "model", "op"]
