"""Per-dialect schema rules (app/stream/dialects/schemas.py): what each request
builder sends, and what ``problems`` names for ``mcp doctor``."""

from __future__ import annotations

from app.stream.dialects.schemas import DIALECT_NAMES, adapt, problems

WITH_REFS = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}, "additionalProperties": False}},
    "properties": {
        "at": {"$ref": "#/$defs/Point"},
        "note": {"type": ["string", "null"]},
        "mode": {"const": "fast"},
    },
    "required": ["at"],
}

#: Every provider rejects something here: a top-level combinator (OpenAI,
#: Anthropic) and an array without items (OpenAI, Gemini).
REJECTED_BY_ALL = {"type": "object", "anyOf": [{"required": ["a"]}], "properties": {"tags": {"type": "array"}}}


def test_gemini_drops_what_it_rejects_and_inlines_refs() -> None:
    out = adapt("gemini", WITH_REFS)
    text = repr(out)
    assert "$schema" not in text and "additionalProperties" not in text and "$ref" not in text and "$defs" not in text
    assert out["properties"]["at"] == {"type": "object", "properties": {"x": {"type": "number"}}}
    assert out["properties"]["note"] == {"type": "string", "nullable": True}
    assert out["properties"]["mode"] == {"enum": ["fast"]}
    assert problems("gemini", WITH_REFS) == []


def test_other_dialects_send_the_schema_as_it_is() -> None:
    for dialect in ("openai-chat", "openai-responses", "anthropic"):
        assert adapt(dialect, WITH_REFS) is WITH_REFS
        assert problems(dialect, WITH_REFS) == []


def test_a_recursive_ref_is_kept_and_named_for_gemini() -> None:
    schema = {"type": "object", "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
              "properties": {"root": {"$ref": "#/$defs/Node"}}}
    found = problems("gemini", schema)
    assert [p.path for p in found] == ["$.properties.root.properties.next.$ref"]


def test_each_provider_names_the_field_it_rejects() -> None:
    by_dialect = {d: [str(p) for p in problems(d, REJECTED_BY_ALL)] for d in DIALECT_NAMES}
    assert by_dialect["openai-chat"] == ["openai-chat: $.anyOf: anyOf is not accepted at the top level",
                                         "openai-chat: $.properties.tags: an array schema without \"items\""]
    assert by_dialect["anthropic"] == ["anthropic: $.anyOf: anyOf is not accepted at the top level"]
    assert by_dialect["gemini"] == ["gemini: $.properties.tags: an array schema without \"items\""]
    assert all(by_dialect.values())


def test_a_non_object_top_level_is_named_everywhere() -> None:
    for dialect in DIALECT_NAMES:
        assert [p.path for p in problems(dialect, {"type": "string"})] == ["$.type"]
        assert [p.path for p in problems(dialect, ["not", "a", "schema"])] == ["$"]


def test_a_deep_schema_is_reported_not_a_crash() -> None:
    node: dict[str, object] = {"type": "object"}
    root = node
    for _ in range(200):
        child: dict[str, object] = {"type": "object"}
        node["properties"] = {"a": child}
        node = child
    for dialect in DIALECT_NAMES:
        assert any("nested deeper" in p.reason for p in problems(dialect, root))
