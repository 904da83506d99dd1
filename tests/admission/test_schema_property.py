"""Property: on a built-in batch/v1 JobSpec, our verdict on type / required / unknown-field errors agrees
with ``jsonschema``'s Draft 2020-12 validator over kubernetes-validate's strict schema (the reference
implementation of those three checks), for random JSON values placed anywhere in a valid fragment.

Fields whose kubernetes-validate schema is a ``oneOf`` (IntOrString, Quantity) are avoided: JSON Schema's
oneOf rejects a null that both branches accept, while the Go decoder (which we follow) accepts it.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from jobsetctl.admission.schema import REQUIRED, TYPE, UNKNOWN_FIELD, builtin_schema
from jobsetctl.kube.versions import KubeVersion, schema_dir

V = KubeVersion.V1_37
DEFINITIONS_ID = "https://kubernetes.io/api/_definitions.json"
JOB_SPEC = "io.k8s.api.batch.v1.JobSpec"


@functools.cache
def reference_validator() -> Draft202012Validator:
    with open(f"{schema_dir(V)}/_definitions.json", encoding="utf-8") as handle:
        definitions = json.load(handle)
    registry: Registry[Any] = Registry().with_resource(DEFINITIONS_ID, Resource.from_contents(definitions))
    return Draft202012Validator({"$ref": f"{DEFINITIONS_ID}#/$defs/{JOB_SPEC}"}, registry=registry)


BASE: dict[str, Any] = {
    "parallelism": 2,
    "template": {
        "metadata": {"labels": {"app": "x"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox", "args": ["a"]}]},
    },
}

#: Places to put a random value: a container, fields of every JSON type, maps, lists and whole objects.
PLACES: list[tuple[str | int, ...]] = [
    ("parallelism",),
    ("completions",),
    ("suspend",),
    ("completionMode",),
    ("extra",),
    ("template",),
    ("template", "metadata"),
    ("template", "metadata", "labels", "app"),
    ("template", "metadata", "annotations"),
    ("template", "spec"),
    ("template", "spec", "restartPolicy"),
    ("template", "spec", "nodeSelector"),
    ("template", "spec", "containers"),
    ("template", "spec", "containers", 0),
    ("template", "spec", "containers", 0, "name"),
    ("template", "spec", "containers", 0, "args"),
    ("template", "spec", "containers", 0, "args", 0),
    ("template", "spec", "containers", 0, "env"),
    ("template", "spec", "containers", 0, "unknownField"),
    ("podFailurePolicy",),
    ("selector",),
]

KEYS = st.sampled_from(["name", "image", "value", "key", "values", "operator", "labels", "x", "containers", "args"])
SCALARS = st.none() | st.booleans() | st.integers(-(2**31), 2**31 - 1) | st.floats(
    allow_nan=False, allow_infinity=False, width=32) | st.text(max_size=4)
JSON = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(KEYS, children, max_size=3),
    max_leaves=12,
)


def place(value: Any, where: tuple[str | int, ...]) -> dict[str, Any]:
    obj = copy.deepcopy(BASE)
    parent: Any = obj
    for seg in where[:-1]:
        parent = parent[seg]
    parent[where[-1]] = value
    return obj


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PLACES), JSON)
def test_type_required_and_unknown_field_verdicts_agree_with_jsonschema(where: tuple[str | int, ...], value: Any) -> None:
    obj = place(value, where)
    ours = [f for f in builtin_schema(JOB_SPEC, V).validate(obj) if f.rule in (TYPE, REQUIRED, UNKNOWN_FIELD)]
    reference_valid = reference_validator().is_valid(obj)
    assert (not ours) == reference_valid, [f.message for f in ours]


def test_the_property_can_see_each_kind_of_error() -> None:
    """The three kinds of error the property compares each occur (so the property can fail)."""
    schema = builtin_schema(JOB_SPEC, V)
    cases = {
        TYPE: place("two", ("parallelism",)),
        REQUIRED: place({"image": "x"}, ("template", "spec", "containers", 0)),
        UNKNOWN_FIELD: place(1, ("extra",)),
    }
    for rule, obj in cases.items():
        assert [f.rule for f in schema.validate(obj)] == [rule]
        assert not reference_validator().is_valid(obj)
    assert schema.validate(BASE) == [] and reference_validator().is_valid(BASE)
