"""How Kubernetes types object data for CEL (``UnstructuredToVal``), and the quirks that follow.

Sources: ``k8s.io/apiserver/pkg/cel/common/values.go`` (value typing, equality, ``+`` on typed lists),
``common/schemas.go`` (``WithTypeAndObjectMeta``), ``cel/escaping.go`` (field-name escaping), and
``types.go`` (``recognizeKeywordAsFieldName``). None of these is exercised by the JobSet or Trainer
repositories; they are reproduced from the apiserver code, so each test names its source.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from jobsetctl.admission.cel import validate_cel
from jobsetctl.admission.cel_compile import compile_expression
from jobsetctl.admission.cel_values import CelError
from jobsetctl.admission.schema import CelRule, SchemaNode, StructuralSchema


def scalar(kind: str, **options: Any) -> SchemaNode:
    return SchemaNode(types=frozenset({kind}), **options)


def obj(properties: dict[str, SchemaNode], **options: Any) -> SchemaNode:
    return SchemaNode(types=frozenset({"object"}), properties=properties, **options)


def array(items: SchemaNode, **options: Any) -> SchemaNode:
    return SchemaNode(types=frozenset({"array"}), items=items, **options)


def evaluate(text: str, node: SchemaNode, value: Any, old: Any = None, root: bool = False) -> Any:
    program = compile_expression(text, node, root)
    if old is None:
        return program.evaluate(value)[0]
    return program.evaluate(value, old)[0]


STRING = scalar("string")
NAMED = obj({"name": STRING, "status": STRING})
LIST_MAP = array(NAMED, list_type="map", list_map_keys=("name",))
SET = array(STRING, list_type="set")
ATOMIC = array(STRING, list_type="atomic")


def test_quirk_number_fields_are_doubles_even_when_written_as_integers() -> None:
    node = obj({"ratio": scalar("number"), "count": scalar("integer")})
    assert evaluate("self.ratio * 2.0 == 3.0", node, {"ratio": 1.5}) is True
    assert evaluate("self.ratio + 0.5 == 2.5", node, {"ratio": 2}) is True  # 2 is the double 2.0
    assert evaluate("string(self.ratio)", node, {"ratio": 2}) == "2"
    with pytest.raises(CelError, match="no such overload"):
        evaluate("self.count + 0.5 > 0.0", node, {"count": 2})  # an integer field stays an int
    # untyped, the same data is an int: this is what the schema changes
    with pytest.raises(CelError, match="no such overload"):
        evaluate("self.ratio + 0.5 == 2.5", None, {"ratio": 2})  # type: ignore[arg-type]


def test_quirk_null_field_of_an_object_is_absent() -> None:
    node = obj({"a": scalar("string", nullable=True), "m": SchemaNode(
        types=frozenset({"object"}), additional=scalar("string", nullable=True))})
    assert evaluate("has(self.a)", node, {"a": None}) is False
    assert evaluate("'a' in self", node, {"a": None}) is False
    with pytest.raises(CelError, match="no such key: a"):
        evaluate("self.a == null", node, {"a": None})
    # a map (additionalProperties) keeps its null values
    assert evaluate("has(self.m.k) && self.m.k == null", node, {"m": {"k": None}}) is True
    assert evaluate("size(self)", node, {"a": None}) == 1  # but the size counts the null entry


def test_quirk_equality_of_list_maps_and_sets_ignores_order() -> None:
    node = obj({"deps": LIST_MAP, "tags": SET, "args": ATOMIC})
    old = {"deps": [{"name": "a", "status": "Ready"}, {"name": "b"}], "tags": ["x", "y"], "args": ["1", "2"]}
    new = {"deps": [{"name": "b"}, {"name": "a", "status": "Ready"}], "tags": ["y", "x"], "args": ["2", "1"]}
    assert evaluate("self.deps == oldSelf.deps", node, new, old) is True
    assert evaluate("self.tags == oldSelf.tags", node, new, old) is True
    assert evaluate("self.args == oldSelf.args", node, new, old) is False
    assert evaluate("self == oldSelf", node, new, old) is False  # because of args


def test_quirk_equality_is_decided_by_the_left_operand() -> None:
    node = obj({"tags": SET})
    assert evaluate("self.tags == ['y', 'x']", node, {"tags": ["x", "y"]}) is True
    assert evaluate("['y', 'x'] == self.tags", node, {"tags": ["x", "y"]}) is False


def test_quirk_plus_merges_list_maps_and_unions_sets() -> None:
    node = obj({"deps": LIST_MAP, "tags": SET, "args": ATOMIC})
    value = {"deps": [{"name": "a", "status": "Ready"}, {"name": "b"}], "tags": ["x", "y"], "args": ["1"]}
    merged = evaluate("self.deps + [{'name': 'a', 'status': 'Complete'}, {'name': 'c'}]", node, value)
    assert merged == [{"name": "a", "status": "Complete"}, {"name": "b"}, {"name": "c"}]
    assert evaluate("self.tags + ['y', 'z']", node, value) == ["x", "y", "z"]
    assert evaluate("self.args + ['1']", node, value) == ["1", "1"]


def test_quirk_objects_with_the_same_null_field_are_unequal() -> None:
    # unstructuredMap.Equal looks each field up in the other object with Find, which treats a null
    # field as absent: two identical objects holding a nullable null compare unequal.
    node = obj({"a": scalar("string", nullable=True), "b": STRING})
    same = {"a": None, "b": "x"}
    assert evaluate("self == oldSelf", node, same, dict(same)) is False
    assert evaluate("self == oldSelf", node, {"b": "x"}, {"b": "x"}) is True
    root = obj({"spec": obj({"a": scalar("string", nullable=True), "b": STRING},
                           validations=(CelRule("self == oldSelf", "Value is immutable"),), has_validations=True)},
               has_validations=True)
    findings = validate_cel(StructuralSchema(root, "t"), {"spec": dict(same)}, {"spec": dict(same)})
    assert [f.message for f in findings] == ['spec: Invalid value: "object": Value is immutable']


def test_field_names_are_escaped_quirk_reserved_words_also_plain() -> None:
    node = obj({"foo-bar": STRING, "a.b/c": STRING, "x__y": STRING, "namespace": STRING})
    value = {"foo-bar": "1", "a.b/c": "2", "x__y": "3", "namespace": "4"}
    assert evaluate("self.foo__dash__bar", node, value) == "1"
    assert evaluate("self.a__dot__b__slash__c", node, value) == "2"
    assert evaluate("self.x__underscores__y", node, value) == "3"
    assert evaluate("self.__namespace__", node, value) == "4"
    # quirk: a reserved word is also accepted unescaped (recognizeKeywordAsFieldName), as the JobSet
    # CRD's volumeClaimPolicies rule relies on (`t.metadata.namespace`).
    assert evaluate("self.namespace", node, value) == "4"
    assert evaluate("has(self.foo__dash__bar)", node, value) is True
    assert sorted(evaluate("self.map(k, k)", node, value)) == [
        "__namespace__", "a__dot__b__slash__c", "foo__dash__bar", "x__underscores__y"
    ]


def test_resource_root_sees_only_name_and_generate_name_of_metadata() -> None:
    root = obj({"metadata": scalar("object"), "spec": obj({"a": STRING})})
    value = {"metadata": {"name": "n", "labels": {"a": "b"}}, "spec": {"a": "x"}}
    assert evaluate("self.metadata.name == 'n'", root, value, root=True) is True
    assert evaluate("has(self.metadata.generateName)", root, value, root=True) is False
    with pytest.raises(CelError, match="no such key: labels"):
        evaluate("self.metadata.labels", root, value, root=True)


def test_formats_are_typed() -> None:
    node = obj({
        "at": scalar("string", format="date-time"),
        "day": scalar("string", format="date"),
        "wait": scalar("string", format="duration"),
        "blob": scalar("string", format="byte"),
    })
    value = {"at": "2026-01-01T10:00:00+02:00", "day": "2026-01-01", "wait": "1h30m", "blob": "YWJj"}
    assert evaluate("self.at", node, value) == datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
    assert evaluate("self.at < timestamp('2026-01-01T09:00:00Z')", node, value) is True
    assert evaluate("self.day + duration('8h') == self.at", node, value) is True
    assert evaluate("self.wait", node, value) == timedelta(hours=1, minutes=30)
    assert evaluate("self.wait > duration('90m')", node, value) is False
    assert evaluate("size(self.blob) == 3 && string(self.blob) == 'abc'", node, value) is True
    # the same instant written two ways is equal (typed equality compares timestamps)
    assert evaluate("self == oldSelf", node, {"at": "2026-01-01T08:00:00Z"}, {"at": "2026-01-01T10:00:00+02:00"}) is True
    with pytest.raises(CelError, match="Invalid date-time formatted string"):
        evaluate("self.at", node, {"at": "yesterday"})


def test_int_or_string_is_dynamic() -> None:
    node = obj({"port": SchemaNode(int_or_string=True)})
    rule = "type(self.port) == string ? self.port.endsWith('%') : self.port >= 0"
    assert evaluate(rule, node, {"port": "50%"}) is True
    assert evaluate(rule, node, {"port": 8080}) is True
    assert evaluate(rule, node, {"port": "http"}) is False


def test_typed_list_index_takes_int_only() -> None:
    node = obj({"args": ATOMIC})
    assert evaluate("self.args[1]", node, {"args": ["a", "b"]}) == "b"
    with pytest.raises(CelError, match="index out of bounds: 2"):
        evaluate("self.args[2]", node, {"args": ["a", "b"]})
    with pytest.raises(CelError, match="unsupported index: 1"):
        evaluate("self.args[1u]", node, {"args": ["a", "b"]})


def test_items_typed_inside_macros() -> None:
    node = obj({"jobs": array(obj({"name": STRING, "dependsOn": array(NAMED, nullable=True)}))})
    value = {"jobs": [{"name": "a", "dependsOn": None}, {"name": "b"}]}
    # jobset.md §1.2: has() is false for an absent dependsOn, and for a null one (object semantics)
    assert evaluate("self.jobs.exists(x, has(x.dependsOn))", node, value) is False
    assert evaluate("self.jobs.exists(x, has(x.dependsOn))", node, {"jobs": [{"name": "a", "dependsOn": []}]}) is True
