"""PyTorch op schemas as the contract needs them: each argument's name, kind and mutability.

`torch._C` argument types print ScalarType, Layout and MemoryFormat as
`int`, so the declared type of each argument is read from the schema's
text instead (`aten::sum.dim_IntList(Tensor self, int[1]? dim, ..., *,
ScalarType? dtype=None) -> Tensor`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Kind:
    """A schema type: a base name ("Tensor", "int", "ScalarType", ...), maybe optional, maybe a list."""

    base: str
    optional: bool = False
    element: Kind | None = None  # set for lists

    @property
    def is_list(self) -> bool:
        return self.element is not None

    def __str__(self) -> str:
        text = f"{self.element}[]" if self.element else self.base
        return text + ("?" if self.optional else "")


@dataclass(frozen=True)
class Argument:
    name: str
    kind: Kind
    keyword: bool  # keyword-only (after `*` in the schema)
    writes: bool  # annotated `(a!)`: the op writes into it


@dataclass(frozen=True)
class Schema:
    text: str
    arguments: tuple[Argument, ...]
    returns: tuple[Kind, ...]


def parse_kind(token: str) -> Kind:
    """`Tensor?[]` -> list of optional Tensor; `int[2]?` -> optional list of int; alias annotations dropped."""
    token = _strip_alias(token)
    if token.endswith("?"):
        inner = parse_kind(token[:-1])
        return Kind(inner.base, True, inner.element)
    if token.endswith("]"):
        # The element is what precedes the last [...]: "Tensor?[]" -> "Tensor?", "int[2]" -> "int".
        element = parse_kind(token[: token.rindex("[")])
        return Kind("list", False, element)
    return Kind(token)


def _strip_alias(token: str) -> str:
    # "Tensor(a!)" -> "Tensor"; "Tensor(a)[]" -> "Tensor[]"; "Tensor(a -> *)" -> "Tensor"
    out, depth = [], 0
    for ch in token:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _split_top(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def _type_token(declaration: str) -> str:
    """`Tensor(a!) self` -> `Tensor(a!)`; `int[2] stride=[1, 1]` -> `int[2]` (types have no spaces outside parens)."""
    depth = 0
    for i, ch in enumerate(declaration):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == " " and depth == 0:
            return declaration[:i]
    return declaration


@functools.cache
def schema_of(overload: torch._ops.OpOverload) -> Schema:
    text = str(overload._schema)
    open_paren = text.index("(")
    depth, close = 0, -1
    for i in range(open_paren, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                close = i
                break
    declarations = _split_top(text[open_paren + 1 : close])
    arguments, keyword = [], False
    torch_args = list(overload._schema.arguments)
    tokens = []
    for d in declarations:
        if d == "*":
            keyword = True
            continue
        tokens.append((_type_token(d), keyword))
    if len(tokens) != len(torch_args):
        raise ValueError(f"cannot read the schema {text!r}")
    for (token, kw), arg in zip(tokens, torch_args):
        writes = bool(arg.alias_info is not None and arg.alias_info.is_write)
        arguments.append(Argument(arg.name, parse_kind(token), kw or arg.kwarg_only, writes))
    rest = text[close + 1 :].strip().removeprefix("->").strip()
    if rest.startswith("(") and rest.endswith(")"):
        rest = rest[1:-1]
    returns = tuple(parse_kind(_type_token(r)) for r in _split_top(rest)) if rest and rest != "()" else ()
    return Schema(text, tuple(arguments), returns)
