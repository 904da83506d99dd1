"""The JobSet validating webhook on UPDATE (jobset.md §2.4).

Updates start from the object as stored after create (defaults applied), as ``kubectl apply`` would
send it; each test then edits a copy.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.jobset.update import first_difference, semantic_equal
from tests.helpers import dedent, table, validate_text
from tests.jobset.builders import (
    admit_obj,
    jobset,
    rjob,
    rule_ids,
    rules_and_messages,
    to_yaml,
    webhook_findings,
)

Obj = dict[str, Any]


def stored(obj: Obj) -> Obj:
    result = admit_obj(obj)
    assert result.obj is not None and not [f for f in result.findings if f.rule.id.startswith("jobset-")]
    return result.obj


def edited(old: Obj, edit: Callable[[Obj], None]) -> Obj:
    new = copy.deepcopy(old)
    edit(new)
    return new


def pod_template(obj: Obj, index: int = 0) -> Obj:
    template: Obj = obj["spec"]["replicatedJobs"][index]["template"]["spec"]["template"]
    return template


def suspend(value: bool) -> Callable[[Obj], None]:
    def edit(obj: Obj) -> None:
        obj["spec"]["suspend"] = value
    return edit


KUEUE_EDITS: dict[str, Callable[[Obj], None]] = {
    "nodeSelector": lambda o: pod_template(o)["spec"].update(nodeSelector={"cloud.google.com/gke-nodepool": "a"}),
    "tolerations": lambda o: pod_template(o)["spec"].update(tolerations=[{"key": "k", "operator": "Exists"}]),
    "schedulingGates": lambda o: pod_template(o)["spec"].update(schedulingGates=[{"name": "kueue.x-k8s.io/admission"}]),
    "labels": lambda o: pod_template(o).setdefault("metadata", {}).update(labels={"kueue.x-k8s.io/podset": "main"}),
    "annotations": lambda o: pod_template(o).setdefault("metadata", {}).update(annotations={"a": "b"}),
}


@pytest.mark.parametrize("field_name", sorted(KUEUE_EDITS))
@pytest.mark.parametrize(("old_suspended", "new_suspended", "accepted"), [
    (True, True, True),     # edit while suspended (Kueue before admission)
    (True, False, True),    # edit and resume in one update (Kueue admits)
    (False, True, True),    # edit while being suspended
    (False, False, False),  # edit while running
])
def test_kueue_pod_template_edits(field_name: str, old_suspended: bool, new_suspended: bool, accepted: bool) -> None:
    old = stored(jobset(suspend=old_suspended))

    def edit(obj: Obj) -> None:
        suspend(new_suspended)(obj)
        KUEUE_EDITS[field_name](obj)

    new = edited(old, edit)
    assert rule_ids(new, old=old) == ([] if accepted else ["jobset-update-replicated-jobs-immutable"])


def test_running_node_selector_edit_message_and_position() -> None:
    old = stored(jobset())
    new = edited(old, KUEUE_EDITS["nodeSelector"])
    (finding,) = webhook_findings(new, old=old)
    listed = json.dumps(new["spec"]["replicatedJobs"], separators=(",", ":"), sort_keys=True)
    assert finding.message == f"spec.replicatedJobs: Invalid value: {listed}: field is immutable"
    assert finding.path == "spec.replicatedJobs"
    assert finding.at == ("spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "nodeSelector")
    assert finding.hint is not None and "only while the JobSet is suspended" in finding.hint


@pytest.mark.parametrize(("name", "edit"), [
    ("replicas", lambda o: o["spec"]["replicatedJobs"][0].update(replicas=3)),
    ("image", lambda o: pod_template(o)["spec"]["containers"][0].update(image="other")),
    ("groupName", lambda o: o["spec"]["replicatedJobs"][0].update(groupName="g")),
    ("add", lambda o: o["spec"]["replicatedJobs"].append(copy.deepcopy(o["spec"]["replicatedJobs"][0]) | {"name": "b"})),
    ("remove", lambda o: o["spec"]["replicatedJobs"].clear()),
    ("parallelism", lambda o: o["spec"]["replicatedJobs"][0]["template"]["spec"].update(parallelism=2)),
])
def test_other_replicated_job_changes_rejected_even_when_suspended(name: str, edit: Callable[[Obj], None]) -> None:
    old = stored(jobset(suspend=True))
    assert rule_ids(edited(old, edit), old=old) == ["jobset-update-replicated-jobs-immutable"]


@pytest.mark.parametrize(("name", "edit"), [
    ("suspend", suspend(True)),
    ("ttl", lambda o: o["spec"].update(ttlSecondsAfterFinished=60)),
    ("labels", lambda o: o["metadata"].update(labels={"a": "b"})),
    ("exclusive-annotation", lambda o: o["metadata"].update(
        annotations={"alpha.jobset.sigs.k8s.io/exclusive-topology": "rack"})),
    ("nil-equals-empty", lambda o: pod_template(o)["spec"].update(volumes=[], nodeSelector={})),
    ("quantity-spelling", lambda o: pod_template(o)["spec"]["containers"][0].update(
        resources={"requests": {"memory": "1024Mi", "cpu": "1000m"}})),
])
def test_freely_mutable_or_semantically_equal(name: str, edit: Callable[[Obj], None]) -> None:
    base = jobset(rjob(pod_spec={"containers": [{"name": "c", "image": "i",
                                                  "resources": {"requests": {"memory": "1Gi", "cpu": 1}}}]}))
    old = stored(base)
    assert rule_ids(edited(old, edit), old=old) == []


@pytest.mark.parametrize(("old_value", "new_value", "message"), [
    ("a.io/x", "b.io/x", 'spec.managedBy: Invalid value: "b.io/x": field is immutable'),
    ("a.io/x", None, 'spec.managedBy: Invalid value: "null": field is immutable'),
    (None, "a.io/x", 'spec.managedBy: Invalid value: "a.io/x": field is immutable'),
])
def test_managed_by_immutable(old_value: str | None, new_value: str | None, message: str) -> None:
    old = stored(jobset(**({"managedBy": old_value} if old_value else {})))
    new = edited(old, lambda o: o["spec"].pop("managedBy", None))
    if new_value is not None:
        new["spec"]["managedBy"] = new_value
    assert rules_and_messages(new, old=old) == [("jobset-update-managed-by-immutable", message)]


def _scale(parallelism: int | None, completions: int | None, index: int = 0) -> Callable[[Obj], None]:
    def edit(obj: Obj) -> None:
        job_spec = obj["spec"]["replicatedJobs"][index]["template"]["spec"]
        for key, value in (("parallelism", parallelism), ("completions", completions)):
            if value is None:
                job_spec.pop(key, None)
            else:
                job_spec[key] = value
    return edit


SPEC = "spec.replicatedJobs[0].template.spec"


@pytest.mark.parametrize(("edit", "expected"), [
    pytest.param(_scale(4, 4), [], id="scale-up"),
    pytest.param(_scale(1, 1), [], id="scale-down"),
    pytest.param(_scale(0, 0), [
        ("jobset-update-elastic-parallelism", f"{SPEC}.parallelism: Invalid value: 0: parallelism must be >= 1"),
        ("jobset-update-elastic-completions", f"{SPEC}.completions: Invalid value: 0: completions must be >= 1"),
    ], id="zero"),
    pytest.param(_scale(4, 3), [
        ("jobset-update-elastic-equal",
         f"{SPEC}.completions: Invalid value: 3: completions must be equal to parallelism for Elastic Indexed Jobs"),
    ], id="unequal"),
])
def test_elastic_jobset(edit: Callable[[Obj], None], expected: list[tuple[str, str]]) -> None:
    old = stored(jobset(rjob(completions=2, parallelism=2)))
    assert sorted(rules_and_messages(edited(old, edit), gates="ElasticJobSet=true", old=old)) == sorted(expected)


def test_elastic_jobset_gate_off_means_immutable() -> None:
    old = stored(jobset(rjob(completions=2, parallelism=2)))
    (finding,) = webhook_findings(edited(old, _scale(4, 4)), old=old)
    assert finding.rule.id == "jobset-update-replicated-jobs-immutable"
    assert finding.hint is not None and "ElasticJobSet" in finding.hint


@pytest.mark.parametrize("condition", ["Completed", "Failed"])
def test_elastic_jobset_terminal_state_forbidden(condition: str) -> None:
    old = stored(jobset(rjob(completions=2, parallelism=2)))
    old["status"] = {"conditions": [{"type": condition, "status": "True"}]}
    assert rules_and_messages(edited(old, _scale(4, 4)), gates="ElasticJobSet=true", old=old) == [(
        "jobset-update-elastic-terminal",
        f"{SPEC}: Forbidden: Cannot mutate parallelism or completions when JobSet is in a terminal state "
        "(Completed or Failed)",
    )]


def test_elastic_jobset_only_for_indexed_jobs() -> None:
    old = stored(jobset(rjob(completions=2, parallelism=2, job_spec={"completionMode": "NonIndexed"})))
    assert rule_ids(edited(old, _scale(4, 4)), gates="ElasticJobSet=true", old=old) == [
        "jobset-update-replicated-jobs-immutable"
    ]


def test_elastic_jobset_matches_by_name_but_order_still_immutable() -> None:
    """Elastic changes are matched by name (reordering tolerated there), but the final comparison is of
    the whole list, so a reorder is still rejected."""
    old = stored(jobset(rjob("a", completions=2, parallelism=2), rjob("b", completions=2, parallelism=2)))

    def reorder_and_scale(obj: Obj) -> None:
        obj["spec"]["replicatedJobs"].reverse()
        _scale(4, 4)(obj)

    assert rule_ids(edited(old, reorder_and_scale), gates="ElasticJobSet=true", old=old) == [
        "jobset-update-replicated-jobs-immutable"
    ]


def test_coordinator_change_accepted() -> None:
    """Coordinator is neither checked by the update webhook nor by CEL (jobset.md §2.4 step 7)."""
    old = stored(jobset(rjob(completions=2), coordinator={"replicatedJob": "rj"}))
    new = edited(old, lambda o: o["spec"]["coordinator"].update(podIndex=1))
    assert rule_ids(new, old=old) == []


def test_update_position_through_validate(tmp_path: Path) -> None:
    """``validate --old`` runs the update webhook and points at the first difference."""
    old = stored(jobset())
    (tmp_path / "old.yaml").write_text(to_yaml(old))
    new = edited(old, lambda o: o["spec"]["replicatedJobs"][0].update(replicas=2))
    rows = [r for r in table(validate_text(tmp_path, dedent(to_yaml(new)), old=str(tmp_path / "old.yaml")))
            if r[2].startswith("jobset-")]
    line = to_yaml(new).splitlines().index("    replicas: 2") + 1
    assert rows == [(line, 5, "jobset-update-replicated-jobs-immutable")]


# --- semantic equality ----------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=15,
)


@given(json_values)
def test_semantic_equal_is_reflexive_and_first_difference_empty(value: Any) -> None:
    assert semantic_equal(value, copy.deepcopy(value))


@given(json_values, json_values)
def test_semantic_equal_is_symmetric(left: Any, right: Any) -> None:
    assert semantic_equal(left, right) == semantic_equal(right, left)


@given(st.dictionaries(st.text(min_size=1, max_size=4), json_values, min_size=1, max_size=4), st.data())
def test_first_difference_finds_an_edited_key(base: dict[str, Any], data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(base)))
    changed = copy.deepcopy(base)
    changed[key] = {"__changed__": True}
    assert first_difference(base, changed)[:1] == (key,)


def test_semantic_equal_examples() -> None:
    """Nil == empty is upstream's rule; treating ``""`` as absent is our reading of Go's non-pointer
    strings (unsure for pointer strings, which jobset.md does not cover)."""
    assert semantic_equal({"a": None, "b": [], "c": {}, "d": ""}, {})
    assert semantic_equal({"requests": {"memory": "1Gi"}}, {"requests": {"memory": "1024Mi"}})
    assert not semantic_equal({"parallelism": 0}, {})
    assert not semantic_equal({"suspend": False}, {})
    assert not semantic_equal([1, 2], [2, 1])
