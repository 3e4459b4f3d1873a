"""Finalisation (DESIGN.md step 6): may this call run?

The stream core already decided whether the call is *final* (ended
explicitly, strictly parsed). Here the registry and the schema decide the
rest. Two answers are told to the model in-band — an unknown tool and a
schema failure — so the conversation can go on; everything else is
``not run`` and the turn ends as a stated failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..stream import ToolCallBlock
from ..stream.strictjson import StrictJSONError, call_arguments
from .registry import Registry

if TYPE_CHECKING:  # jsonschema (~80 ms to import) is loaded by the first call that ends, not at start-up
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no stubs installed
    from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

__all__ = ["Valid", "Rejected", "NotRun", "Verdict", "finalise", "refinalise", "schema_problems"]


@dataclass(slots=True)
class Valid:
    arguments: dict[str, Any]


@dataclass(slots=True)
class Rejected:
    """Answered in-band: ``message`` goes back to the model as the call's error
    result; ``display`` says the same on screen without quoting any value
    (an unlisted field may hold something nobody meant to show)."""

    message: str
    display: str = ""


@dataclass(slots=True)
class NotRun:
    reason: str


Verdict = Valid | Rejected | NotRun

_VALIDATORS: dict[int, Draft202012Validator] = {}


def _where(error: ValidationError) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    return path or "arguments"


_KIND_WORDS = {
    "type": "wrong type", "enum": "not an allowed value", "const": "not the allowed value", "pattern": "wrong format",
    "format": "wrong format", "minLength": "too short", "maxLength": "too long", "minimum": "too small",
    "maximum": "too large", "exclusiveMinimum": "too small", "exclusiveMaximum": "too large",
    "minItems": "too few items", "maxItems": "too many items", "additionalProperties": "unexpected field",
    "required": "missing",
}


def _errors(schema: dict[str, Any], arguments: dict[str, Any]) -> list[ValidationError]:
    from jsonschema import Draft202012Validator, FormatChecker

    validator = _VALIDATORS.get(id(schema))
    if validator is None:
        Draft202012Validator.check_schema(schema)
        validator = _VALIDATORS[id(schema)] = Draft202012Validator(schema, format_checker=FormatChecker())
    return sorted(validator.iter_errors(arguments), key=lambda e: (list(map(str, e.absolute_path)), e.message))


def _display(error: ValidationError, listed: set[str]) -> str:
    """The failure in words that name only allow-listed fields, and no values."""
    kind = str(error.validator)
    where = _where(error)
    if kind == "required":
        missing = error.message.split("'")[1] if error.message.count("'") >= 2 else "a field"
        where = f"{where}.{missing}" if where != "arguments" else missing
    top = where.split(".")[0].split("[")[0]
    if where != "arguments" and top not in listed:
        where = "an unlisted field"
    if kind == "required":
        return f"{where} missing"
    return f"{where}: {_KIND_WORDS.get(kind, 'not valid')}"


def schema_problems(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Plain-words schema failures, most specific first; [] when valid."""
    return [f"{_where(e)}: {e.message}" for e in _errors(schema, arguments)]


def finalise(call: ToolCallBlock, registry: Registry, offered: frozenset[str] | None = None) -> Verdict:
    """``offered``: the tools this request offered (None: all of the
    registry's). A call to a tool the request did not offer never runs, even
    if the registry has it: it is answered in-band."""
    if not call.final or call.arguments is None:
        return NotRun(call.problem or "the call never completed")
    if offered is not None and call.name not in offered:
        if not offered:
            return Rejected(f"Error: no tools were offered in this request, so {call.name!r} was not run.",
                            "Rejected: no tools were offered in this request. Nothing was run; the model was told.")
        return Rejected(f"Error: {call.name!r} was not offered in this request, so it was not run. Offered tools: "
                        f"{', '.join(sorted(offered))}.",
                        "Rejected: this tool was not offered in this request. Nothing was run; the model was told.")
    tool = registry.get(call.name)
    if tool is None:
        available = ", ".join(registry.names()) or "none"
        return Rejected(f"Error: there is no tool called {call.name!r}. Available tools: {available}.",
                        f"Rejected: there is no tool called {call.name!r}. Nothing was run; the model was told "
                        "which tools exist.")
    from jsonschema.exceptions import SchemaError

    try:
        errors = _errors(tool.parameters, call.arguments)
    except SchemaError as exc:
        message = f"Error: the tool {call.name!r} has an invalid parameter schema ({exc.message}); it cannot be called."
        return Rejected(message, "The tool's own parameter schema is invalid; it cannot be called.")
    if errors:
        problems = [f"{_where(e)}: {e.message}" for e in errors]
        listed = "; ".join(problems[:6]) + ("; …" if len(problems) > 6 else "")
        allowed = {f.path.split(".")[0] for f in tool.display}
        shown = ", ".join(dict.fromkeys(_display(e, allowed) for e in errors[:6]))
        return Rejected(f"Error: the arguments for {call.name} do not match its schema: {listed}. "
                        "Nothing was run. Call it again with corrected arguments.",
                        f"Rejected: the arguments did not match the schema ({shown}). Nothing was run; the model "
                        "was told why.")
    return Valid(call.arguments)


def refinalise(call: ToolCallBlock, registry: Registry, offered: frozenset[str] | None = None) -> Verdict:
    """A stored call about to run after all (a pending approval answered after
    a reopen) goes through the whole gate again, taking nothing stored on
    trust: final; its own buffer strictly parsed (the stored arguments must be
    that parse, so a card never showed other ones); then ``finalise``: offered,
    a known tool, the schema. A call that never finished never runs with ``{}``."""
    if not call.final or call.provider_executed:
        return NotRun(call.problem or "the call never completed")
    try:
        arguments = call_arguments(call.arguments_raw)
    except StrictJSONError as exc:
        return NotRun(f"its stored arguments are not a valid JSON object ({exc})")
    if call.arguments is not None and call.arguments != arguments:
        return NotRun("its stored arguments differ from the ones the model sent")
    call.arguments = arguments
    return finalise(call, registry, offered)
