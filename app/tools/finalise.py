"""Finalisation (DESIGN.md step 6): may this call run?

The stream core already decided whether the call is *final* (ended
explicitly, strictly parsed). Here the registry and the schema decide the
rest. Two answers are told to the model in-band — an unknown tool and a
schema failure — so the conversation can go on; everything else is
``not run`` and the turn ends as a stated failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError, ValidationError

from ..stream import ToolCallBlock
from .registry import Registry

__all__ = ["Valid", "Rejected", "NotRun", "Verdict", "finalise", "schema_problems"]


@dataclass(slots=True)
class Valid:
    arguments: dict[str, Any]


@dataclass(slots=True)
class Rejected:
    """Answered in-band: ``message`` goes back to the model as the call's error result."""

    message: str


@dataclass(slots=True)
class NotRun:
    reason: str


Verdict = Valid | Rejected | NotRun

_VALIDATORS: dict[int, Draft202012Validator] = {}


def _where(error: ValidationError) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    return path or "arguments"


def schema_problems(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Plain-words schema failures, most specific first; [] when valid."""
    validator = _VALIDATORS.get(id(schema))
    if validator is None:
        Draft202012Validator.check_schema(schema)
        validator = _VALIDATORS[id(schema)] = Draft202012Validator(schema, format_checker=FormatChecker())
    errors = sorted(validator.iter_errors(arguments), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    return [f"{_where(e)}: {e.message}" for e in errors]


def finalise(call: ToolCallBlock, registry: Registry) -> Verdict:
    if not call.final or call.arguments is None:
        return NotRun(call.problem or "the call never completed")
    tool = registry.get(call.name)
    if tool is None:
        available = ", ".join(registry.names()) or "none"
        return Rejected(f"Error: there is no tool called {call.name!r}. Available tools: {available}.")
    try:
        problems = schema_problems(tool.parameters, call.arguments)
    except SchemaError as exc:
        return Rejected(f"Error: the tool {call.name!r} has an invalid parameter schema ({exc.message}); "
                        "it cannot be called.")
    if problems:
        listed = "; ".join(problems[:6]) + ("; …" if len(problems) > 6 else "")
        return Rejected(f"Error: the arguments for {call.name} do not match its schema: {listed}. "
                        "Nothing was run. Call it again with corrected arguments.")
    return Valid(call.arguments)
