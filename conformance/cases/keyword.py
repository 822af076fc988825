"""The `-k` expressions of the `conformance` commands, in the grammar of pytest's `-k`.

    expr     := and_expr ("or" and_expr)*
    and_expr := not_expr ("and" not_expr)*
    not_expr := "not" not_expr | "(" expr ")" | NAME

A NAME (letters, digits and `_ : + - . [ ] \\ /`) is true when the matcher
says so; the registry matches it as a case-insensitive substring of a case's
id or tags, as `pytest -k` does with an item's name and keywords. pytest keeps
its parser private, so the commands carry this one.
"""

from __future__ import annotations

import re
from typing import Callable

Matcher = Callable[[str], bool]
Predicate = Callable[[Matcher], bool]

_TOKEN = re.compile(r"\s*(\(|\)|[\w:+\-.\[\]\\/]+)")


class KeywordError(ValueError):
    """A -k expression that does not parse; the message says where."""


def compile_keyword(expression: str) -> Predicate:
    """`expression` as a function of a matcher (NAME -> bool)."""
    tokens, at = [], 0
    while at < len(expression.rstrip()):
        found = _TOKEN.match(expression, at)
        if not found:
            column = len(expression) - len(expression[at:].lstrip())
            raise KeywordError(f"-k {expression!r}: unexpected {expression[column]!r} at column {column + 1}")
        tokens.append(found.group(1))
        at = found.end()
    predicate, rest = _or(tokens, expression)
    if rest:
        raise KeywordError(f"-k {expression!r}: unexpected {rest[0]!r}")
    return predicate


def _or(tokens: list[str], expression: str) -> tuple[Predicate, list[str]]:
    return _chain(tokens, expression, "or", _and, _either)


def _and(tokens: list[str], expression: str) -> tuple[Predicate, list[str]]:
    return _chain(tokens, expression, "and", _not, _both)


def _chain(tokens: list[str], expression: str, word: str, operand, combine) -> tuple[Predicate, list[str]]:
    """operand (word operand)*, combined from the left."""
    left, tokens = operand(tokens, expression)
    while tokens[:1] == [word]:
        right, tokens = operand(tokens[1:], expression)
        left = combine(left, right)
    return left, tokens


def _not(tokens: list[str], expression: str) -> tuple[Predicate, list[str]]:
    if not tokens:
        raise KeywordError(f"-k {expression!r}: ends where a name or '(' was expected")
    head, rest = tokens[0], tokens[1:]
    if head == "not":
        inner, rest = _not(rest, expression)
        return (lambda match: not inner(match)), rest
    if head == "(":
        inner, rest = _or(rest, expression)
        if rest[:1] != [")"]:
            raise KeywordError(f"-k {expression!r}: '(' without its ')'")
        return inner, rest[1:]
    if head in (")", "and", "or"):
        raise KeywordError(f"-k {expression!r}: unexpected {head!r} where a name or '(' was expected")
    return (lambda match: match(head)), rest


def _either(a: Predicate, b: Predicate) -> Predicate:
    return lambda match: a(match) or b(match)


def _both(a: Predicate, b: Predicate) -> Predicate:
    return lambda match: a(match) and b(match)
