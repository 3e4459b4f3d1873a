"""What each wire format accepts as a tool's parameter schema: one definition
of the per-dialect rules, used by the request builders (``adapt``) and by
``callstream mcp doctor`` (``problems``).

A tool's schema comes from wherever the tool came from — a built-in, the
config file, an MCP server we do not control — and one schema a provider
rejects fails the whole request, naming no tool (research/field.md §2.3). So
``adapt`` rewrites what can be rewritten without changing which arguments are
valid for the tool (Gemini: drop ``$schema``/``additionalProperties``, inline
``$ref``, a ``["T", "null"]`` type as ``nullable``), and ``problems`` names,
by JSON path, what a provider would still reject after that.

Inlining is bounded: a few shared ``$ref``s can stand for an exponential
tree (a 2 KB schema once took a minute and a gigabyte). ``inlined_size``
counts what inlining would make without making it (each definition once);
past ``MAX_INLINED`` schema nodes, or references nested past
``MAX_REF_DEPTH``, the references that do not fit are sent as open schemas
(``{}``: any value; the arguments are still checked against the whole schema
before a call runs), and ``problems`` / ``inline_problem`` say so.

OpenAI's strict mode refuses optional fields; callstream never asks for it
(Responses defaults to strict, so its builder sends ``strict: false``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import DIALECT_NAMES
from ..limits import MAX_DEPTH

__all__ = ["SchemaProblem", "adapt", "problems", "DIALECT_NAMES", "inline_problem", "inlined_size", "MAX_INLINED",
           "MAX_REF_DEPTH"]

#: Schema nodes (objects, arrays, values) that inlining ``$ref``s may make for one tool.
MAX_INLINED = 5_000
#: References inlined inside references, at most.
MAX_REF_DEPTH = 16

#: Keys Gemini's OpenAPI-subset ``parameters`` reject outright.
_GEMINI_DROP = frozenset({"$schema", "$id", "additionalProperties", "$defs", "definitions", "$comment"})
_COMBINATORS = ("oneOf", "anyOf", "allOf", "not")


@dataclass(slots=True, frozen=True)
class SchemaProblem:
    """A field of the (adapted) schema that ``dialect`` would reject."""

    dialect: str
    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.dialect}: {self.path}: {self.reason}"


def adapt(dialect: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as ``dialect``'s request carries it."""
    if dialect != "gemini":
        return schema
    defs = _definitions(schema)
    out = _gemini(schema, defs, 0, (), [MAX_INLINED])
    return out if isinstance(out, dict) else schema


def _definitions(schema: dict[str, Any]) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        table = schema.get(key)
        if isinstance(table, dict):
            defs.update({f"#/{key}/{name}": value for name, value in table.items()})
    return defs


def inlined_size(schema: dict[str, Any]) -> tuple[int, int]:
    """(nodes, deepest chain of references) that inlining ``schema``'s
    ``$ref``s would make, counted without making it: each definition's size
    is counted once and reused (linear in the schema). Nodes stop counting
    a little past ``MAX_INLINED``."""
    defs = _definitions(schema)
    sizes: dict[str, tuple[int, int]] = {}

    def size(value: Any, depth: int, resolving: tuple[str, ...]) -> tuple[int, int]:
        if depth > MAX_DEPTH:
            return 1, 0
        if isinstance(value, list):
            parts = [size(v, depth + 1, resolving) for v in value]
            return min(MAX_INLINED + 1, 1 + sum(p[0] for p in parts)), max((p[1] for p in parts), default=0)
        if not isinstance(value, dict):
            return 1, 0
        ref = value.get("$ref")
        total, chain = 1, 0
        if isinstance(ref, str) and ref in defs and ref not in resolving:
            if ref not in sizes:
                sizes[ref] = (MAX_INLINED + 1, MAX_REF_DEPTH + 1)  # until known: a circle counts as too big
                inner = size(defs[ref], depth + 1, (*resolving, ref))
                sizes[ref] = (inner[0], inner[1] + 1)
            total, chain = sizes[ref]
        for key, item in value.items():
            if key in _GEMINI_DROP or key == "$ref":
                continue
            part = size(item, depth + 1, resolving)
            total, chain = min(MAX_INLINED + 1, total + part[0]), max(chain, part[1])
        return total, chain

    return size(schema, 0, ())


def inline_problem(schema: Any) -> str | None:
    """Why ``schema``'s ``$ref``s cannot all be inlined for Gemini, or None."""
    if not isinstance(schema, dict) or not _definitions(schema):
        return None
    nodes, chain = inlined_size(schema)
    if nodes > MAX_INLINED:
        return (f"inlining its $refs for Gemini would make more than {MAX_INLINED} schema nodes; the references "
                "past that are sent as open schemas")
    if chain > MAX_REF_DEPTH:
        return (f"its $refs nest {chain} deep, past the {MAX_REF_DEPTH} inlined for Gemini; the deeper ones are "
                "sent as open schemas")
    return None


def _gemini(value: Any, defs: dict[str, Any], depth: int, resolving: tuple[str, ...], budget: list[int]) -> Any:
    budget[0] -= 1
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, list):
        return [_gemini(v, defs, depth + 1, resolving, budget) for v in value]
    if not isinstance(value, dict):
        return value
    ref = value.get("$ref")
    if isinstance(ref, str) and ref in defs and ref not in resolving:
        if budget[0] <= 0 or len(resolving) >= MAX_REF_DEPTH:
            return {}  # past the bound: an open schema (the arguments are still checked against the whole one)
        merged = {k: v for k, v in value.items() if k != "$ref"}
        target = defs[ref]
        if isinstance(target, dict):
            merged = {**target, **merged}
        return _gemini(merged, defs, depth + 1, (*resolving, ref), budget)
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in _GEMINI_DROP:
            continue
        if key == "properties" and isinstance(item, dict):
            out[key] = {name: _gemini(sub, defs, depth + 1, resolving, budget) for name, sub in item.items()}
        else:
            out[key] = _gemini(item, defs, depth + 1, resolving, budget)
    kind = out.get("type")
    if isinstance(kind, list):
        concrete = [t for t in kind if t != "null"]
        if len(concrete) == 1:
            out["type"] = concrete[0]
            if len(concrete) < len(kind):
                out["nullable"] = True
    if "const" in out and "enum" not in out:
        out["enum"] = [out.pop("const")]
    return out


def problems(dialect: str, schema: Any) -> list[SchemaProblem]:
    """What ``dialect`` would reject in ``adapt(dialect, schema)``, by path."""
    found: list[SchemaProblem] = []

    def say(path: str, reason: str) -> None:
        found.append(SchemaProblem(dialect, path, reason))

    if not isinstance(schema, dict):
        say("$", "the parameters are not a JSON Schema object")
        return found
    adapted = adapt(dialect, schema)
    if dialect == "gemini":
        too_big = inline_problem(schema)
        if too_big is not None:
            say("$", too_big)
    if adapted.get("type") != "object":
        say("$.type", f"must be \"object\" at the top level (is {adapted.get('type')!r})")
    if dialect != "gemini":
        for key in _COMBINATORS:
            if key in adapted:
                say(f"$.{key}", f"{key} is not accepted at the top level")
    _walk(dialect, adapted, "$", 0, say)
    return found


def _walk(dialect: str, node: Any, path: str, depth: int, say: Any) -> None:
    if depth > MAX_DEPTH:
        say(path, f"nested deeper than {MAX_DEPTH} levels")
        return
    if isinstance(node, list):
        for i, item in enumerate(node):
            _walk(dialect, item, f"{path}[{i}]", depth + 1, say)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind == "array" or (isinstance(kind, list) and "array" in kind):
        if "items" not in node and dialect != "anthropic":
            say(path, "an array schema without \"items\"")
    if dialect == "gemini":
        if isinstance(kind, list):
            say(f"{path}.type", f"a union of types {kind} (Gemini takes one type)")
        if "$ref" in node:
            say(f"{path}.$ref", "a reference that cannot be inlined (recursive or unknown)")
        if "properties" in node and kind not in (None, "object"):
            say(f"{path}.properties", f"properties on a schema of type {kind!r}")
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                _walk(dialect, sub, f"{path}.properties.{name}", depth + 1, say)
        elif isinstance(value, dict | list) and key not in ("enum", "const", "default", "examples", "required"):
            _walk(dialect, value, f"{path}.{key}", depth + 1, say)
