"""``validate_cel``: where rules run, what the API server prints, transition rules, ratcheting, cost.

Schemas are built by hand as :class:`SchemaNode` trees (plain dataclasses of our schema layer).
Message shapes: jobset.md §2.1 ("Schema/CEL errors"), trainer.md §2.2; the rendering code is
apiextensions-apiserver ``pkg/apiserver/schema/cel/validation.go`` (``fieldErrorForReason``,
``ruleMessageOrDefault``, ``ruleErrorString``).
"""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.admission.cel import validate_cel
from jobsetctl.admission.schema import CelRule, SchemaNode, StructuralSchema
from jobsetctl.diagnostics import Finding, Severity


def finish(node: SchemaNode) -> SchemaNode:
    """Set ``has_validations`` bottom-up, as the schema compiler does."""
    kids = list(node.properties.values())
    if isinstance(node.additional, SchemaNode):
        kids.append(node.additional)
    if node.items is not None:
        kids.append(node.items)
    below = [finish(kid).has_validations for kid in kids]  # every kid is finished, no short-circuit
    node.has_validations = bool(node.validations) or any(below)
    return node


def scalar(kind: str, *rules: CelRule, **options: Any) -> SchemaNode:
    return SchemaNode(types=frozenset({kind}), validations=rules, **options)


def obj(properties: dict[str, SchemaNode], *rules: CelRule, **options: Any) -> SchemaNode:
    return SchemaNode(types=frozenset({"object"}), properties=properties, validations=rules, **options)


def array(items: SchemaNode, *rules: CelRule, **options: Any) -> SchemaNode:
    return SchemaNode(types=frozenset({"array"}), items=items, validations=rules, **options)


def mapping(values: SchemaNode, *rules: CelRule, **options: Any) -> SchemaNode:
    return SchemaNode(types=frozenset({"object"}), additional=values, validations=rules, **options)


def check(root: SchemaNode, value: Any, old: Any = None, **limits: Any) -> list[Finding]:
    return validate_cel(StructuralSchema(finish(root), "test"), value, old, **limits)


def messages(findings: list[Finding]) -> list[str]:
    return [f.message for f in findings]


def spec_with(rule: CelRule, value: Any, node: SchemaNode | None = None) -> list[Finding]:
    spec = node or obj({"a": scalar("string"), "labels": mapping(scalar("string"))}, rule)
    if node is not None:
        spec.validations = (rule,)
    return check(obj({"spec": spec}), {"spec": value})


RENDERING = [
    pytest.param(CelRule("self.a == 'x'", "a must be x"), {"a": "y"},
                 'spec: Invalid value: "object": a must be x', id="message"),
    pytest.param(CelRule("self.a == 'x'", "  a must be x  "), {"a": "y"},
                 'spec: Invalid value: "object": a must be x', id="message-trimmed"),
    pytest.param(CelRule("self.a == 'x'"), {"a": "y"},
                 "spec: Invalid value: \"object\": failed rule: self.a == 'x'", id="no-message"),
    pytest.param(CelRule("self.a == 'x'", "a must be x", reason="FieldValueForbidden"), {"a": "y"},
                 "spec: Forbidden: a must be x", id="reason-forbidden"),
    pytest.param(CelRule("self.a == 'x'", "a must be x", reason="FieldValueRequired"), {"a": "y"},
                 "spec: Required value: a must be x", id="reason-required"),
    pytest.param(CelRule("self.a == 'x'", "a must be x", reason="FieldValueInvalid"), {"a": "y"},
                 'spec: Invalid value: "object": a must be x', id="reason-invalid"),
    # quirk: a Duplicate reason prints the schema type as the duplicate value and drops the message
    pytest.param(CelRule("self.a == 'x'", "a must be x", reason="FieldValueDuplicate"), {"a": "y"},
                 'spec: Duplicate value: "object"', id="quirk-reason-duplicate-drops-message"),
    # quirk: with fieldPath the reported type is still the rule's node type, not the field's
    pytest.param(CelRule("self.a == 'x'", "a must be x", field_path=".a"), {"a": "y"},
                 'spec.a: Invalid value: "object": a must be x', id="quirk-field-path-keeps-node-type"),
    pytest.param(CelRule("false", "bad label", field_path=".labels['app.kubernetes.io/name']"),
                 {"labels": {"app.kubernetes.io/name": "x"}},
                 'spec.labels[app.kubernetes.io/name]: Invalid value: "object": bad label', id="field-path-map-key"),
    pytest.param(CelRule("false", "bad", field_path=".nope"), {"a": "y"},
                 'spec: Invalid value: "object": bad', id="invalid-field-path-reports-at-node"),
    pytest.param(CelRule("self.a == 'x'", "static", message_expression="'a is ' + self.a"), {"a": "y"},
                 'spec: Invalid value: "object": a is y', id="message-expression"),
    pytest.param(CelRule("self.a == 'x'", "static", message_expression="size(self.a)"), {"a": "y"},
                 'spec: Invalid value: "object": static', id="message-expression-not-a-string"),
    pytest.param(CelRule("self.a == 'x'", "static", message_expression="self.nope"), {"a": "y"},
                 'spec: Invalid value: "object": static', id="message-expression-error"),
    pytest.param(CelRule("self.a == 'x'", "static", message_expression="'  '"), {"a": "y"},
                 'spec: Invalid value: "object": static', id="message-expression-blank"),
    pytest.param(CelRule("self.a == 'x'", "static", message_expression="'a\\nb'"), {"a": "y"},
                 'spec: Invalid value: "object": static', id="message-expression-line-break"),
    pytest.param(CelRule("self.a == 'x'", message_expression="self.nope"), {"a": "y"},
                 "spec: Invalid value: \"object\": failed rule: self.a == 'x'", id="message-expression-no-fallback"),
    pytest.param(CelRule("self.nope == 'x'", "a must be x"), {"a": "y"},
                 'spec: Invalid value: "object": no such key: nope evaluating rule: a must be x', id="eval-error"),
    pytest.param(CelRule("self.nope == 'x'"), {"a": "y"},
                 "spec: Invalid value: \"object\": no such key: nope evaluating rule: self.nope == 'x'",
                 id="eval-error-without-message"),
    pytest.param(CelRule("self.a + 1 == 2", "sum"), {"a": "y"},
                 "spec: Invalid value: \"object\": 'no such overload': call arguments did not match a supported "
                 "operator, function or macro signature for rule: sum", id="overload-error"),
    pytest.param(CelRule("self.a"), {"a": "y"},
                 'spec: Invalid value: "object": failed rule: self.a', id="non-bool-result-fails"),
]


@pytest.mark.parametrize(("rule", "value", "expected"), RENDERING)
def test_message_rendering(rule: CelRule, value: Any, expected: str) -> None:
    assert messages(spec_with(rule, value)) == [expected]


def test_field_path_points_at_the_field() -> None:
    [finding] = spec_with(CelRule("false", "bad", field_path=".a"), {"a": "y"})
    assert finding.path == "spec.a"
    assert finding.at == ("spec", "a")


def test_quirk_root_rule_has_the_nil_path() -> None:
    # trainer.md §1.1: TrainJob's metadata.name rules sit on the root; apimachinery prints a nil path as <nil>.
    root = obj({"metadata": obj({})}, CelRule("size(self.metadata.name) <= 3", "name too long"))
    [finding] = check(root, {"metadata": {"name": "long-name"}})
    assert finding.message == '<nil>: Invalid value: "object": name too long'
    assert finding.path == ""
    assert finding.at == ()
    assert finding.rule.id == "cel-rule"


TYPES = [
    (scalar("string"), "x", '"string"'),
    (scalar("integer"), 3, '"integer"'),
    (scalar("number"), 1.5, '"number"'),
    (scalar("boolean"), True, '"boolean"'),
    (array(scalar("string")), ["x"], '"array"'),
    (mapping(scalar("string")), {"k": "v"}, '"object"'),
    (SchemaNode(int_or_string=True), "50%", '""'),
]


@pytest.mark.parametrize(("node", "value", "printed"), TYPES)
def test_type_printed_is_the_schema_type(node: SchemaNode, value: Any, printed: str) -> None:
    node.validations = (CelRule("false", "nope"),)
    [finding] = check(obj({"f": node}), {"f": value})
    assert finding.message == f"f: Invalid value: {printed}: nope"


def test_paths_of_list_items_and_map_values() -> None:
    item = scalar("integer", CelRule("self > 0", "positive"))
    root = obj({"list": array(item), "map": mapping(scalar("integer", CelRule("self > 0", "positive")))})
    findings = check(root, {"list": [1, -1], "map": {"ok": 1, "app.kubernetes.io/x": -2}})
    assert sorted(messages(findings)) == [
        'list[1]: Invalid value: "integer": positive',
        'map[app.kubernetes.io/x]: Invalid value: "integer": positive',
    ]
    assert sorted(f.at for f in findings) == [("list", 1), ("map", "app.kubernetes.io/x")]


def test_rules_do_not_run_on_null_or_absent_values() -> None:
    root = obj({"a": scalar("string", CelRule("false", "never"), nullable=True)})
    assert check(root, {"a": None}) == []
    assert check(root, {}) == []
    assert messages(check(root, {"a": "x"})) == ['a: Invalid value: "string": never']


def test_value_the_schema_cannot_type_is_an_evaluation_error() -> None:
    at = scalar("string", CelRule("self < timestamp('2030-01-01T00:00:00Z')", "before 2030"), format="date-time")
    assert messages(check(obj({"at": at}), {"at": "soon"})) == [
        'at: Invalid value: "string": Invalid date-time formatted string soon evaluating rule: before 2030'
    ]
    assert check(obj({"at": at}), {"at": "2029-12-31T23:59:59Z"}) == []


def test_every_rule_of_a_node_runs() -> None:
    root = obj({"a": scalar("integer", CelRule("self > 5", "big"), CelRule("self % 2 == 0", "even"))})
    assert messages(check(root, {"a": 3})) == ['a: Invalid value: "integer": big', 'a: Invalid value: "integer": even']


def test_all_of_branch_rules_run_at_the_node() -> None:
    branch = SchemaNode(validations=(CelRule("self.a != 'x'", "not x"),))
    node = obj({"a": scalar("string")}, all_of=(branch,))
    branch.has_validations = True
    root = obj({"spec": node})
    root.has_validations = node.has_validations = True
    assert messages(validate_cel(StructuralSchema(root, "t"), {"spec": {"a": "x"}})) == [
        'spec: Invalid value: "object": not x'
    ]


# --------------------------------------------------------------------------------- transition rules

IMMUTABLE = CelRule("self == oldSelf", "Value is immutable")


def immutable_spec() -> SchemaNode:
    policy = obj({"operator": scalar("string")}, IMMUTABLE)
    return obj({"spec": obj({"successPolicy": policy, "failurePolicy": obj({"max": scalar("integer")}, IMMUTABLE)})})


def test_transition_rules_do_not_run_on_create() -> None:
    assert check(immutable_spec(), {"spec": {"successPolicy": {"operator": "All"}}}) == []


def test_transition_rule_blocks_a_change() -> None:
    # jobset.md §2.1: spec.successPolicy: Invalid value: "object": Value is immutable
    old = {"spec": {"successPolicy": {"operator": "All"}}}
    new = {"spec": {"successPolicy": {"operator": "Any"}}}
    [finding] = check(immutable_spec(), new, old)
    assert finding.message == 'spec.successPolicy: Invalid value: "object": Value is immutable'
    assert finding.rule.id == "cel-transition"
    assert finding.effective_severity is Severity.ERROR
    assert check(immutable_spec(), old, old) == []


@pytest.mark.parametrize(("old", "new"), [
    pytest.param({"spec": {}}, {"spec": {"failurePolicy": {"max": 3}}}, id="added"),
    pytest.param({"spec": {"failurePolicy": {"max": 3}}}, {"spec": {}}, id="removed"),
    pytest.param({"spec": {"failurePolicy": None}}, {"spec": {"failurePolicy": {"max": 3}}}, id="was-null"),
])
def test_quirk_transition_rules_skip_added_and_removed_fields(old: Any, new: Any) -> None:
    # jobset.md §1.2 "CEL caveat", trainer.md §1.2 note: `self == oldSelf` needs a value on both sides,
    # so adding or removing an immutable field is not blocked by CEL. Both spec files mark this as
    # inferred from Kubernetes, not tested upstream; we follow apiextensions' validation.go
    # (`if compiled.UsesOldSelf && oldObj == nil { continue }`).
    assert check(immutable_spec(), new, old) == []


def list_map_of_immutable_items() -> SchemaNode:
    item = obj({"name": scalar("string"), "image": scalar("string")}, CelRule("self.image == oldSelf.image", "frozen"))
    return obj({"items": array(item, list_type="map", list_map_keys=("name",))})


def test_list_map_items_correlate_by_key() -> None:
    old = {"items": [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]}
    reordered = {"items": [{"name": "b", "image": "2"}, {"name": "a", "image": "1"}]}
    changed = {"items": [{"name": "b", "image": "9"}, {"name": "a", "image": "1"}]}
    assert check(list_map_of_immutable_items(), reordered, old) == []
    [finding] = check(list_map_of_immutable_items(), changed, old)
    assert finding.message == 'items[0]: Invalid value: "object": frozen'
    assert finding.at == ("items", 0)


@pytest.mark.parametrize("list_type", ["atomic", "set", None])
def test_quirk_items_of_other_lists_never_correlate(list_type: str | None) -> None:
    item = scalar("string", CelRule("self == oldSelf", "frozen"))
    root = obj({"items": array(item, list_type=list_type)})
    assert check(root, {"items": ["b"]}, {"items": ["a"]}) == []


def test_quirk_reordering_a_list_map_is_not_a_change() -> None:
    # Equality of x-kubernetes-list-type: map lists ignores order (Kubernetes unstructuredMapList.Equal).
    item = obj({"name": scalar("string"), "status": scalar("string")})
    root = obj({"dependsOn": array(item, IMMUTABLE, list_type="map", list_map_keys=("name",))})
    old = {"dependsOn": [{"name": "a", "status": "Ready"}, {"name": "b", "status": "Ready"}]}
    new = {"dependsOn": [{"name": "b", "status": "Ready"}, {"name": "a", "status": "Ready"}]}
    assert check(root, new, old) == []
    new["dependsOn"][1]["status"] = "Complete"
    assert messages(check(root, new, old)) == ['dependsOn: Invalid value: "array": Value is immutable']


def test_maps_correlate_by_key_unless_their_map_type_is_unknown() -> None:
    value = scalar("string", CelRule("self == oldSelf", "frozen"))
    for map_type, expected in ((None, 1), ("granular", 1), ("atomic", 1), ("sharded", 0)):
        root = obj({"m": mapping(value, map_type=map_type)})
        assert len(check(root, {"m": {"k": "new"}}, {"m": {"k": "old"}})) == expected, map_type


def test_optional_old_self_runs_on_create_and_update() -> None:
    rule = CelRule("!oldSelf.hasValue() || self >= oldSelf.value()", "may only grow", optional_old_self=True)
    root = obj({"size": scalar("integer", rule)})
    assert check(root, {"size": 1}) == []
    assert check(root, {"size": 2}, {"size": 1}) == []
    assert messages(check(root, {"size": 1}, {"size": 2})) == ['size: Invalid value: "integer": may only grow']
    growing_from_nothing = CelRule("oldSelf.hasValue()", "needs history", optional_old_self=True)
    assert messages(check(obj({"size": scalar("integer", growing_from_nothing)}), {"size": 1})) == [
        'size: Invalid value: "integer": needs history'
    ]


# --------------------------------------------------------------------------------------- ratcheting

def test_unchanged_invalid_value_is_only_a_warning_on_update() -> None:
    # CRDValidationRatcheting (GA since Kubernetes 1.33): an error at a value equal to the old one warns.
    root = obj({"spec": obj({"replicas": scalar("integer", CelRule("self <= 4", "at most 4"))})})
    old = {"spec": {"replicas": 8}}
    [warning] = check(root, {"spec": {"replicas": 8}}, old)
    assert warning.effective_severity is Severity.WARNING
    assert warning.hint is not None and "ratcheting" in warning.hint
    [error] = check(root, {"spec": {"replicas": 9}}, old)
    assert error.effective_severity is Severity.ERROR
    [created] = check(root, {"spec": {"replicas": 8}})
    assert created.effective_severity is Severity.ERROR


def test_ratcheting_of_atomic_list_items_uses_the_whole_list() -> None:
    # Items of atomic lists do not correlate; the nearest correlated ancestor (the list) decides.
    root = obj({"ports": array(scalar("integer", CelRule("self > 0", "positive")), list_type="atomic")})
    old = {"ports": [-1, 2]}
    assert [f.effective_severity for f in check(root, {"ports": [-1, 2]}, old)] == [Severity.WARNING]
    assert [f.effective_severity for f in check(root, {"ports": [-1, 3]}, old)] == [Severity.ERROR]


def test_quirk_ratcheting_correlates_lists_without_a_list_type_by_index() -> None:
    # CorrelatedObject.Index: no x-kubernetes-list-type correlates by position (atomic does not).
    root = obj({"ports": array(scalar("integer", CelRule("self > 0", "positive")))})
    old = {"ports": [-1, 2]}
    assert [f.effective_severity for f in check(root, {"ports": [-1, 3]}, old)] == [Severity.WARNING]
    assert [f.effective_severity for f in check(root, {"ports": [2, -1]}, old)] == [Severity.ERROR]


def test_transition_rules_are_never_ratcheted() -> None:
    root = obj({"a": scalar("integer", CelRule("self == oldSelf && self > 5", "frozen and big"))})
    [finding] = check(root, {"a": 1}, {"a": 1})
    assert finding.effective_severity is Severity.ERROR


# --------------------------------------------------------------------------------------------- cost

def test_per_call_cost_limit_stops_all_later_rules() -> None:
    explode = CelRule("self.all(x, self.all(y, x + y >= 0))", "sums")
    root = obj({"a": array(scalar("integer"), explode), "b": scalar("integer", CelRule("false", "later"))})
    findings = check(root, {"a": list(range(200)), "b": 1}, per_call_limit=10_000)
    assert messages(findings) == [
        "a: Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no further validation "
        "rules will be run due to call cost exceeds limit for rule: sums"
    ]
    assert findings[0].rule.id == "cel-cost"


def test_runtime_budget_is_shared_by_all_rules_of_an_object() -> None:
    rule = CelRule("self.all(x, x >= 0)", "non-negative")
    root = obj({"lists": array(array(scalar("integer"), rule))})
    value = {"lists": [list(range(100))] * 5}
    assert check(root, value) == []
    findings = check(root, value, budget=1_000)
    assert messages(findings)[-1] == (
        'lists[2]: Invalid value: "array": validation failed due to running out of cost budget, '
        "no further validation rules will be run"
    )
    assert {f.rule.id for f in findings} == {"cel-cost"}


# ----------------------------------------------------------------------------------- unsupported

def test_unsupported_rule_is_reported_once_as_info() -> None:
    rule = CelRule("self.isSorted()", "sorted")
    root = obj({"a": array(array(scalar("integer"), rule)), "b": scalar("integer", CelRule("false", "b"))})
    findings = check(root, {"a": [[2, 1], [3]], "b": 1})
    assert [(f.rule.id, f.effective_severity) for f in findings] == [
        ("cel-unsupported", Severity.INFO), ("cel-rule", Severity.ERROR)
    ]
    assert "isSorted" in findings[0].message


def test_schema_without_rules_is_skipped() -> None:
    assert check(obj({"a": scalar("string")}), {"a": "x"}) == []
