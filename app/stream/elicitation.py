"""A server's request for the person (MCP ``elicitation/create``), as data.

Sans-I/O: the MCP layer turns the SDK's params into an ``Elicitation``, the
card renders its fields, and ``answer_values`` checks what the person typed
against the requested schema before anything goes back. The specification
allows a flat object of primitive fields: string (with ``minLength`` /
``maxLength`` / ``format``), number and integer (``minimum`` / ``maximum``),
boolean, a single choice (``enum``, ``oneOf`` of ``const``/``title``, or the
legacy ``enumNames``) and a multiple choice (an ``array`` of those, with
``minItems`` / ``maxItems``); each may have a default. Anything else is not
a form we can build: the request is declined, saying why.

What is kept (the transcript, the card after the answer) is what was asked
and what was answered; the value of a field the server marks sensitive
(``format: password``, ``writeOnly``) or whose name or value looks like a
secret is ``[redacted]``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from .redact import redact

__all__ = ["FormField", "Elicitation", "parse_elicitation", "answer_values", "kept_answer", "ElicitationState",
           "REDACTED"]

ElicitationState = Literal["asked", "accept", "decline", "cancel"]
REDACTED = "[redacted]"
_SECRET_NAME = re.compile(r"(?i)passw|secret|token|api[-_]?key|credential|otp|pin\b|ssn")


@dataclass(slots=True)
class FormField:
    name: str
    kind: Literal["string", "number", "integer", "boolean", "choice", "choices"]
    title: str
    description: str = ""
    required: bool = False
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    #: (value, label) for a choice.
    options: list[tuple[str, str]] = field(default_factory=list)
    sensitive: bool = False


@dataclass(slots=True)
class Elicitation:
    server: str
    message: str
    mode: Literal["form", "url"] = "form"
    fields: list[FormField] = field(default_factory=list)
    url: str | None = None
    state: ElicitationState = "asked"
    #: What was answered, sensitive values redacted (None until accepted).
    answer: dict[str, Any] | None = None
    #: Why it was declined or cancelled without the person (``ask``; a form we cannot build).
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"server": self.server, "message": self.message, "mode": self.mode,
                               "state": self.state, "fields": [f.title for f in self.fields]}
        for name in ("url", "answer", "reason"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Elicitation | None:
        if not isinstance(data, dict):
            return None
        state = data.get("state")
        mode = data.get("mode")
        answer = data.get("answer")
        return cls(str(data.get("server", "")), str(data.get("message", "")),
                   mode="url" if mode == "url" else "form",
                   fields=[FormField(str(t), "string", str(t)) for t in data.get("fields") or [] if isinstance(t, str)],
                   url=data["url"] if isinstance(data.get("url"), str) else None,
                   state=state if state in ("asked", "accept", "decline", "cancel") else "cancel",
                   answer=answer if isinstance(answer, dict) else None,
                   reason=data["reason"] if isinstance(data.get("reason"), str) else None)


def _options(schema: dict[str, Any]) -> list[tuple[str, str]] | None:
    if isinstance(schema.get("enum"), list):
        values = [str(v) for v in schema["enum"]]
        names = schema.get("enumNames")
        labels = [str(n) for n in names] if isinstance(names, list) and len(names) == len(values) else values
        return list(zip(values, labels, strict=True))
    for key in ("oneOf", "anyOf"):
        if isinstance(schema.get(key), list):
            items = [o for o in schema[key] if isinstance(o, dict) and "const" in o]
            return [(str(o["const"]), str(o.get("title", o["const"]))) for o in items]
    return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(
        value) else None


def _field(name: str, schema: Any, required: bool) -> FormField:
    if not isinstance(schema, dict):
        raise ValueError(f"field {name!r} has no schema")
    kind = schema.get("type")
    title = str(schema.get("title") or name)
    made = FormField(name, "string", title, str(schema.get("description") or ""), required, schema.get("default"))
    if kind == "array":
        options = _options(schema.get("items") or {})
        if options is None:
            raise ValueError(f"field {name!r} is an array that is not a list of choices")
        made.kind, made.options = "choices", options
        made.min_length, made.max_length = schema.get("minItems"), schema.get("maxItems")
        return made
    options = _options(schema)
    if options is not None:
        made.kind, made.options = "choice", options
        return made
    if kind not in ("string", "number", "integer", "boolean"):
        raise ValueError(f"field {name!r} has type {kind!r}, which a form cannot hold")
    made.kind = kind
    made.minimum, made.maximum = _number(schema.get("minimum")), _number(schema.get("maximum"))
    made.min_length, made.max_length = schema.get("minLength"), schema.get("maxLength")
    made.format = schema.get("format") if isinstance(schema.get("format"), str) else None
    made.sensitive = made.format == "password" or schema.get("writeOnly") is True or bool(_SECRET_NAME.search(name))
    return made


def parse_elicitation(server: str, params: dict[str, Any]) -> Elicitation:
    """The request as a card shows it; a schema no form can hold is an
    ``Elicitation`` already declined, with the reason."""
    message = str(params.get("message") or "")
    if params.get("mode") == "url":
        return Elicitation(server, message, "url", url=str(params.get("url") or ""))
    schema = params.get("requestedSchema")
    asked = Elicitation(server, message)
    try:
        if not isinstance(schema, dict) or schema.get("type", "object") != "object":
            raise ValueError("the requested schema is not an object")
        properties = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        if not isinstance(properties, dict):
            raise ValueError("its properties are not an object")
        asked.fields = [_field(str(name), sub, name in required) for name, sub in properties.items()]
    except ValueError as exc:
        asked.state, asked.reason = "decline", f"callstream cannot show this form: {exc}"
    return asked


def _one(spec: FormField, text: Any) -> tuple[Any, str | None]:
    """One typed value from what the person entered (text, a bool, a list of chosen values)."""
    if spec.kind == "boolean":
        return bool(text), None
    if spec.kind == "choices":
        chosen = [str(v) for v in text] if isinstance(text, list) else []
        allowed = {v for v, _ in spec.options}
        if any(v not in allowed for v in chosen):
            return None, "choose from the list"
        if spec.min_length is not None and len(chosen) < spec.min_length:
            return None, f"choose at least {spec.min_length}"
        if spec.max_length is not None and len(chosen) > spec.max_length:
            return None, f"choose at most {spec.max_length}"
        return chosen, None
    if spec.kind == "choice" and isinstance(text, list):  # a list lets the person pick several: one is asked for
        return None, "choose one"
    value = str(text)
    if spec.kind == "choice":
        return (value, None) if value in {v for v, _ in spec.options} else (None, "choose from the list")
    if spec.kind in ("number", "integer"):
        try:
            number: float | int = int(value) if spec.kind == "integer" else float(value)
        except ValueError:
            return None, "a whole number" if spec.kind == "integer" else "a number"
        if not math.isfinite(number):
            return None, "a number"
        if spec.minimum is not None and number < spec.minimum:
            return None, f"at least {spec.minimum:g}"
        if spec.maximum is not None and number > spec.maximum:
            return None, f"at most {spec.maximum:g}"
        return number, None
    if spec.min_length is not None and len(value) < spec.min_length:
        return None, f"at least {spec.min_length} characters"
    if spec.max_length is not None and len(value) > spec.max_length:
        return None, f"at most {spec.max_length} characters"
    if spec.format == "email" and not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", value):
        return None, "an email address"
    return value, None


def answer_values(fields: list[FormField], entered: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """What goes back to the server, and the problems by field name (empty: it may be sent).
    An empty optional field is left out; an empty required one is a problem."""
    values: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for spec in fields:
        text = entered.get(spec.name)
        if text is None or text == "" or text == []:
            if spec.required and spec.kind != "boolean":
                problems[spec.name] = "required"
            elif spec.kind == "boolean" and text is not None:
                values[spec.name] = False
            continue
        value, problem = _one(spec, text)
        if problem is not None:
            problems[spec.name] = problem
        else:
            values[spec.name] = value
    return values, problems


def kept_answer(fields: list[FormField], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` as the transcript and the card keep them: sensitive fields and secret-looking text redacted."""
    sensitive = {f.name for f in fields if f.sensitive}
    return {name: REDACTED if name in sensitive else (redact(value) if isinstance(value, str) else value)
            for name, value in values.items()}
