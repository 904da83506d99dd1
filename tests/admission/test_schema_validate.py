"""Table tests for the structural-schema rules: (value, [(rule, exact upstream message)]).

Messages are apiextensions-apiserver's rendering of kube-openapi's errors (jobset.md §2.1 gives the
shapes; ``kubeOpenAPIResultToFieldErrors`` in apiextensions ``pkg/apiserver/validation/validation.go`` and
kube-openapi ``pkg/validation/errors/schema.go`` give the texts). Small inline schemas isolate each rule;
the authored JobSet/Trainer schemas show the same rules at real paths.
"""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.admission.schema import StructuralSchema, compile_openapi, has_type_errors
from jobsetctl.admission.schema_formats import go_float, is_date_time
from jobsetctl.kube.versions import KubeVersion

V = KubeVersion.V1_37


def schema_of(spec: dict[str, Any]) -> StructuralSchema:
    """A custom resource whose ``spec`` has the given schema."""
    return compile_openapi({"type": "object", "properties": {"spec": spec}}, "test", V)


def found(spec_schema: dict[str, Any], spec: Any) -> list[tuple[str, str]]:
    return [(f.rule.id, f.message) for f in schema_of(spec_schema).validate({"spec": spec})]


INT = {"type": "object", "properties": {"n": {"type": "integer"}}}
OBJ = {"type": "object", "properties": {"o": {"type": "object", "properties": {"a": {"type": "string"}}}}}
TYPE_MSG = 'spec.n: Invalid value: "{0}": spec.n in body must be of type integer: "{0}"'

TYPE_TABLE = [
    pytest.param(INT, {"n": 3}, [], id="integer"),
    pytest.param(INT, {"n": 2.0}, [], id="integral-float-is-an-integer"),
    pytest.param(INT, {"n": "3"}, [("schema-type", TYPE_MSG.format("string"))], id="string"),
    pytest.param(INT, {"n": 2.5}, [("schema-type", TYPE_MSG.format("number"))], id="fraction"),
    pytest.param(INT, {"n": True}, [("schema-type", TYPE_MSG.format("boolean"))], id="boolean"),
    pytest.param(INT, {"n": [1]}, [("schema-type", TYPE_MSG.format("array"))], id="array"),
    pytest.param(INT, {"n": {}}, [("schema-type", TYPE_MSG.format("object"))], id="object"),
    pytest.param(INT, {"n": None}, [("schema-type", TYPE_MSG.format("null"))], id="null-not-nullable"),
    pytest.param({"type": "object", "properties": {"n": {"type": "integer", "nullable": True}}}, {"n": None}, [],
                 id="null-nullable"),
    pytest.param({"type": "object", "properties": {"n": {"type": "number"}}}, {"n": 3}, [], id="number-takes-int"),
    pytest.param(
        OBJ, {"o": "x"},
        [("schema-type", 'spec.o: Invalid value: "string": spec.o in body must be of type object: "string"')],
        id="object-expected",
    ),
    pytest.param(
        {"type": "array", "items": {"type": "string"}}, ["a", 1],
        [("schema-type", 'spec[1]: Invalid value: "integer": spec[1] in body must be of type string: "integer"')],
        id="array-item",
    ),
]


@pytest.mark.parametrize(("schema", "spec", "expected"), TYPE_TABLE)
def test_type_table(schema: dict[str, Any], spec: Any, expected: list[tuple[str, str]]) -> None:
    assert found(schema, spec) == expected


IOS = {"type": "object", "properties": {"p": {
    "anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}}}


@pytest.mark.parametrize("value", [80, "http", 8.0])
def test_int_or_string_accepts_int_string_and_integral_float(value: Any) -> None:
    assert found(IOS, {"p": value}) == []


def test_quirk_int_or_string_fraction_gives_three_errors() -> None:
    """kube-openapi checks the node type (integer,string), then the controller-gen anyOf: a composite
    error with a <nil> path, then the failures of the first branch (derived from code)."""
    assert found(IOS, {"p": 0.5}) == [
        ("schema-type", 'spec.p: Invalid value: "number": spec.p in body must be of type integer,string: "number"'),
        ("schema-type", '<nil>: Invalid value: "": "spec.p" must validate at least one schema (anyOf)'),
        ("schema-type", 'spec.p: Invalid value: "number": spec.p in body must be of type integer: "number"'),
    ]


def test_unknown_fields_are_reported_with_full_path_and_hint() -> None:
    findings = schema_of(OBJ).validate({"spec": {"o": {"a": "x", "b": 1}, "oo": 2}})
    assert [(f.rule.id, f.message, f.at) for f in findings] == [
        ("schema-unknown-field", 'strict decoding error: unknown field "spec.o.b"', ("spec", "o", "b")),
        ("schema-unknown-field", 'strict decoding error: unknown field "spec.oo"', ("spec", "oo")),
    ]


def test_unknown_field_hint_for_a_close_name() -> None:
    schema = {"type": "object", "properties": {"replicas": {"type": "integer"}, "name": {"type": "string"}}}
    [finding] = schema_of(schema).validate({"spec": {"replica": 2}})
    assert finding.hint == 'did you mean "replicas"?'


def test_unknown_field_hint_for_case_mistakes() -> None:
    schema = {"type": "object", "properties": {"restartPolicy": {"type": "string"}}}
    [finding] = schema_of(schema).validate({"spec": {"restartpolicy": "Never"}})
    assert finding.hint == 'did you mean "restartPolicy"? (field names are case-sensitive)'


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        {"type": "object", "additionalProperties": True},
        {"type": "object", "additionalProperties": {"type": "integer"}},
    ],
    ids=["preserve-unknown-fields", "additional-true", "additional-schema"],
)
def test_open_objects_accept_any_key(schema: dict[str, Any]) -> None:
    assert found(schema, {"anything": 1, "else": 2}) == []


def test_additional_properties_schema_validates_values_with_dotted_paths() -> None:
    """kube-openapi joins map keys with '.', even keys that contain dots (``limits.nvidia.com/gpu``)."""
    schema = {"type": "object", "properties": {"limits": {"type": "object", "additionalProperties": {"type": "integer"}}}}
    assert found(schema, {"limits": {"nvidia.com/gpu": "x"}}) == [(
        "schema-type",
        'spec.limits.nvidia.com/gpu: Invalid value: "string": spec.limits.nvidia.com/gpu in body must be of type '
        'integer: "string"',
    )]


def test_required_is_reported_at_the_parent() -> None:
    schema = {"type": "object", "required": ["name", "kind"], "properties": {"name": {"type": "string"},
                                                                            "kind": {"type": "string"}}}
    findings = schema_of(schema).validate({"spec": {"kind": "x"}})
    assert [(f.rule.id, f.message, f.path, f.at) for f in findings] == [
        ("schema-required", "spec.name: Required value", "spec.name", ("spec",)),
    ]


def test_required_counts_an_explicit_null_as_present() -> None:
    """kube-openapi tests key presence; the null fails the type check instead (after defaulting prunes
    it, the API server reports Required: see test_schema_defaults)."""
    schema = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
    assert [r for r, _ in found(schema, {"name": None})] == ["schema-type"]


ENUM = {"type": "object", "properties": {"m": {"type": "string", "enum": ["A", "B"]}}}
NUM = {"type": "object", "properties": {"r": {"type": "integer", "minimum": 0, "maximum": 10}}}
EXCL = {"type": "object", "properties": {"r": {"type": "number", "minimum": 0.5, "exclusiveMinimum": True,
                                                "maximum": 2, "exclusiveMaximum": True}}}
STR = {"type": "object", "properties": {"s": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^a"}}}
ARR = {"type": "object", "properties": {"l": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}}}}
PROPS = {"type": "object", "minProperties": 1, "maxProperties": 2, "additionalProperties": {"type": "string"}}

RULE_TABLE = [
    pytest.param(ENUM, {"m": "A"}, [], id="enum-ok"),
    pytest.param(ENUM, {"m": "C"},
                 [("schema-enum", 'spec.m: Unsupported value: "C": supported values: "A", "B"')], id="enum"),
    pytest.param(NUM, {"r": 0}, [], id="minimum-boundary"),
    pytest.param(NUM, {"r": -1},
                 [("schema-range", "spec.r: Invalid value: -1: spec.r in body should be greater than or equal to 0")],
                 id="minimum"),
    pytest.param(NUM, {"r": 11},
                 [("schema-range", "spec.r: Invalid value: 11: spec.r in body should be less than or equal to 10")],
                 id="maximum"),
    pytest.param(EXCL, {"r": 0.5},
                 [("schema-range", "spec.r: Invalid value: 0.5: spec.r in body should be greater than 0.5")],
                 id="exclusive-minimum"),
    pytest.param(EXCL, {"r": 2},
                 [("schema-range", "spec.r: Invalid value: 2: spec.r in body should be less than 2")],
                 id="exclusive-maximum"),
    pytest.param(STR, {"s": "abc"}, [], id="string-ok"),
    pytest.param(STR, {"s": "abcdef"}, [("schema-length", "spec.s: Too long: may not be more than 5 bytes")],
                 id="max-length"),
    pytest.param(STR, {"s": "a"},
                 [("schema-length", 'spec.s: Invalid value: "a": spec.s in body should be at least 2 chars long')],
                 id="min-length"),
    pytest.param(STR, {"s": "bcd"},
                 [("schema-pattern", "spec.s: Invalid value: \"bcd\": spec.s in body should match '^a'")],
                 id="pattern"),
    pytest.param(ARR, {"l": ["a"]}, [], id="items-ok"),
    pytest.param(ARR, {"l": []},
                 [("schema-items", "spec.l: Invalid value: 0: spec.l in body should have at least 1 items")],
                 id="min-items"),
    pytest.param(ARR, {"l": ["a", "b", "c"]}, [("schema-items", "spec.l: Too many: 3: must have at most 2 items")],
                 id="max-items"),
    pytest.param(PROPS, {}, [("schema-properties", "spec: Invalid value: 0: spec in body should have at least 1 properties")],
                 id="min-properties"),
    pytest.param(PROPS, {"a": "1", "b": "2", "c": "3"},
                 [("schema-properties", "spec: Too many: 3: must have at most 2 items")], id="max-properties"),
]


@pytest.mark.parametrize(("schema", "spec", "expected"), RULE_TABLE)
def test_rule_table(schema: dict[str, Any], spec: Any, expected: list[tuple[str, str]]) -> None:
    assert found(schema, spec) == expected


def test_quirk_max_items_of_one_says_item() -> None:
    """apimachinery field.TooMany uses the singular for a limit of 1 (TooLong likewise says "byte")."""
    schema = {"type": "object", "properties": {"l": {"type": "array", "maxItems": 1},
                                              "s": {"type": "string", "maxLength": 1}}}
    assert found(schema, {"l": [1, 2], "s": "ab"}) == [
        ("schema-items", "spec.l: Too many: 2: must have at most 1 item"),
        ("schema-length", "spec.s: Too long: may not be more than 1 byte"),
    ]


def test_quirk_max_properties_reads_items() -> None:
    """maxProperties goes through field.TooMany, whose detail talks about items."""
    assert found(PROPS, {"a": "1", "b": "2", "c": "3"})[0][1].endswith("must have at most 2 items")


def test_quirk_max_length_counts_characters_but_says_bytes() -> None:
    """kube-openapi counts runes (utf8.RuneCount); apimachinery's TooLong says bytes."""
    schema = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}}
    assert found(schema, {"s": "ééé"}) == []
    assert found(schema, {"s": "éééé"}) == [("schema-length", "spec.s: Too long: may not be more than 3 bytes")]


def test_quirk_string_validator_stops_at_first_failure() -> None:
    """kube-openapi's stringValidator returns after maxLength fails, so the pattern is not checked."""
    assert found(STR, {"s": "bbbbbbbb"}) == [("schema-length", "spec.s: Too long: may not be more than 5 bytes")]


def test_quirk_pattern_is_an_unanchored_search() -> None:
    """Go's regexp MatchString finds the pattern anywhere; CRD patterns anchor themselves with ^…$."""
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "b+"}}}
    assert found(schema, {"s": "abba"}) == []


def test_quirk_wrong_type_for_enum_reports_type_and_enum() -> None:
    """kube-openapi runs the enum check after a failed type check."""
    assert [r for r, _ in found(ENUM, {"m": 5})] == ["schema-type", "schema-enum"]


def test_quirk_enum_converts_an_integer_to_a_code_point() -> None:
    """The enum test converts the value to the enum value's Go type: int 65 becomes "A" (still a type error)."""
    assert [r for r, _ in found(ENUM, {"m": 65})] == ["schema-type"]


def test_quirk_integer_compared_with_truncated_bound() -> None:
    """MinimumNativeType compares an int64 with int64(minimum): a 0.5 minimum lets 0 through."""
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0.5}}}
    assert found(schema, {"n": 0}) == []
    assert found(schema, {"n": -1}) == [
        ("schema-range", "spec.n: Invalid value: -1: spec.n in body should be greater than or equal to 0"),
    ]


def test_quirk_int32_format_is_not_enforced_for_custom_resources() -> None:
    """apiextensions strips int32/int64 formats (formats.go); a built-in kind's decoder enforces them."""
    schema = {"type": "object", "properties": {"n": {"type": "integer", "format": "int32"}}}
    assert found(schema, {"n": 2**40}) == []


LIST_MAP = {"type": "object", "properties": {"l": {
    "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
    "items": {"type": "object", "properties": {"name": {"type": "string"}, "v": {"type": "integer"}}}}}}
MULTI_KEY = {"type": "object", "properties": {"l": {
    "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
    "items": {"type": "object", "properties": {"port": {"type": "integer"}, "protocol": {"type": "string"}}}}}}
SET = {"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "set",
                                             "items": {"type": "string"}}}}

DUPLICATE_TABLE = [
    pytest.param(LIST_MAP, {"l": [{"name": "a"}, {"name": "b"}]}, [], id="map-unique"),
    pytest.param(LIST_MAP, {"l": [{"name": "a"}, {"name": "a", "v": 1}]},
                 [("schema-duplicate", 'spec.l[1]: Duplicate value: {"name":"a"}')], id="map-duplicate"),
    pytest.param(LIST_MAP, {"l": [{"v": 1}, {"v": 2}]},
                 [("schema-duplicate", "spec.l[1]: Duplicate value: {}")], id="map-missing-keys"),
    pytest.param(MULTI_KEY, {"l": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"}]}, [],
                 id="multi-key-unique"),
    pytest.param(MULTI_KEY, {"l": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "TCP"}]},
                 [("schema-duplicate", 'spec.l[1]: Duplicate value: {"port":80,"protocol":"TCP"}')],
                 id="multi-key-duplicate"),
    pytest.param(SET, {"l": ["a", "b", "a"]}, [("schema-duplicate", 'spec.l[2]: Duplicate value: "a"')],
                 id="set-duplicate"),
]


@pytest.mark.parametrize(("schema", "spec", "expected"), DUPLICATE_TABLE)
def test_duplicate_table(schema: dict[str, Any], spec: Any, expected: list[tuple[str, str]]) -> None:
    assert found(schema, spec) == expected


def test_quirk_only_the_second_occurrence_of_a_key_is_reported() -> None:
    """listtype validation records an index only when a key is seen for the second time."""
    assert found(SET, {"l": ["a", "a", "a", "b", "b"]}) == [
        ("schema-duplicate", 'spec.l[1]: Duplicate value: "a"'),
        ("schema-duplicate", 'spec.l[4]: Duplicate value: "b"'),
    ]


DATE_TIME = {"type": "object", "properties": {"t": {"type": "string", "format": "date-time"}}}


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("2026-01-01T00:00:00Z", True),
        ("2026-01-01T23:59:59.123+02:00", True),
        ("2026-01-01t10:00:00z", True),
        ("2026-02-30T00:00:00Z", False),
        ("2026-01-01 00:00:00Z", False),
        ("2026-01-01T24:00:00Z", False),
        ("yesterday", False),
    ],
)
def test_date_time_format(text: str, ok: bool) -> None:
    """kube-openapi strfmt IsDateTime (the format apiextensions keeps as "datetime")."""
    assert is_date_time(text) is ok
    expected = [] if ok else [(
        "schema-format",
        f'spec.t: Invalid value: "{text}": spec.t in body must be of type date-time: "{text}"',
    )]
    assert found(DATE_TIME, {"t": text}) == expected


def test_findings_come_in_document_order_and_all_are_reported() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                                              "c": {"type": "boolean"}}}
    assert [f.at for f in schema_of(schema).validate({"spec": {"c": 1, "a": "x", "b": 2}})] == [
        ("spec", "c"), ("spec", "a"), ("spec", "b"),
    ]


def test_has_type_errors_only_for_type_findings() -> None:
    assert has_type_errors(schema_of(INT).validate({"spec": {"n": "x"}}))
    assert not has_type_errors(schema_of(NUM).validate({"spec": {"r": -1}}))


COMPOSITE = {"type": "object", "properties": {"o": {
    "type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
    "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}}}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": "x"}, []),
        ({"a": "x", "b": "y"},
         ['<nil>: Invalid value: "": "spec.o" must validate one and only one schema (oneOf). '
          "Found 2 valid alternatives"]),
        ({}, ['<nil>: Invalid value: "": "spec.o" must validate one and only one schema (oneOf). Found none valid',
              "spec.o.a: Required value"]),
    ],
    ids=["one", "two", "none"],
)
def test_one_of_with_required_branches(value: dict[str, Any], expected: list[str]) -> None:
    assert [m for _, m in found(COMPOSITE, {"o": value})] == expected


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.0, "0"), (1.0, "1"), (0.5, "0.5"), (100000.0, "100000"), (1e6, "1e+06"), (1234567.0, "1.234567e+06"),
     (0.0001, "0.0001"), (0.00001, "1e-05"), (-2.5, "-2.5"), (1e21, "1e+21")],
)
def test_go_float_formatting(value: float, text: str) -> None:
    """Go's %v of a float64: strconv 'g' with the shortest digits (exponent from 1e6 and below 1e-4)."""
    assert go_float(value) == text
