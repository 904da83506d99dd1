"""scheduling.k8s.io Workload / PodGroup / CompositePodGroup built-in validation per release
(scheduling.md §1.1–§1.2, §1.6, §1.8).

Message sources: 1.35 hand-written ``pkg/apis/scheduling/validation/validation.go``; 1.36/1.37
declarative validation (``pkg/registry/scheduling/*/declarative_validation_test.go``,
``strategy_test.go``, apimachinery ``api/validate/union.go``).
"""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.admission.chain import admit
from jobsetctl.kinds.index import ObjectIndex
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kinds.registry import handler_for
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from tests.helpers import admit_text, load_one

DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def found(text: str, version: str, gates: str = "", old: str | None = None) -> list[tuple[str, str]]:
    result = admit_text(text, version=version, gates=gates, old=old)
    return [(f.rule.id, f.message) for f in result.findings if f.effective_severity != "info"]


@pytest.mark.parametrize(
    ("version", "kind", "served"),
    [
        ("1.35", "Workload", ("v1alpha1",)),
        ("1.35", "PodGroup", ()),
        ("1.35", "CompositePodGroup", ()),
        ("1.36", "Workload", ("v1alpha2",)),
        ("1.36", "PodGroup", ("v1alpha2",)),
        ("1.36", "CompositePodGroup", ()),
        ("1.37", "Workload", ("v1beta1", "v1alpha3")),
        ("1.37", "PodGroup", ("v1beta1", "v1alpha3")),
        ("1.37", "CompositePodGroup", ("v1alpha3",)),
        ("1.35", "PriorityClass", ("v1",)),
        ("1.36", "PriorityClass", ("v1",)),
        ("1.37", "PriorityClass", ("v1",)),
    ],
)
def test_served_versions_per_release(version: str, kind: str, served: tuple[str, ...]) -> None:
    handler = handler_for("scheduling.k8s.io", kind)
    assert handler is not None
    assert handler.served_versions(KubeVersion.parse(version)) == served


@pytest.mark.parametrize("version", ["1.35", "1.36", "1.37"])
def test_batch_job_is_served_as_v1_everywhere(version: str) -> None:
    handler = handler_for("batch", "Job")
    assert handler is not None and handler.served_versions(KubeVersion.parse(version)) == ("v1",)


def test_podgroup_on_135_is_no_kind_match() -> None:
    text = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: p}\nspec: {}"
    assert found(text, "1.35") == [
        ("no-kind-match", 'no matches for kind "PodGroup" in version "scheduling.k8s.io/v1alpha2"')]


# --- 1.35 v1alpha1 ------------------------------------------------------------------------------

V1ALPHA1 = "apiVersion: scheduling.k8s.io/v1alpha1\nkind: Workload\nmetadata: {name: w}\nspec:\n"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("  podGroups: [{name: a, policy: {gang: {minCount: 2}}}]", []),
        ("  podGroups: []", [("workload-templates", "spec.podGroups: Required value: must have at least one item")]),
        ("  podGroups: [{name: A_b, policy: {basic: {}}}]",
         [("workload-name", f'spec.podGroups[0].name: Invalid value: "A_b": {DNS_LABEL}')]),
        ("  podGroups: [{name: a, policy: {basic: {}, gang: {minCount: 1}}}]", [(
            "workload-policy",
            'spec.podGroups[0].policy: Invalid value: "{`basic`, `gang`}": exactly one of `basic`, `gang` is '
            "required, but multiple fields are set")]),
        ("  podGroups: [{name: a, policy: {}}]", [
            ("workload-policy", 'spec.podGroups[0].policy: Invalid value: "": must specify one of: `basic`, `gang`')]),
        ("  podGroups: [{name: a, policy: {gang: {minCount: 0}}}]",
         [("workload-policy", "spec.podGroups[0].policy.gang.minCount: Required value")]),
        ("  podGroups: [{name: a, policy: {gang: {minCount: -1}}}]",
         [("workload-policy", "spec.podGroups[0].policy.gang.minCount: Invalid value: -1: must be greater than zero")]),
        ("  controllerRef: {kind: Job/x, name: '..'}\n  podGroups: [{name: a, policy: {basic: {}}}]", [
            ("workload-reference", "spec.controllerRef.kind: Invalid value: \"Job/x\": may not contain '/'"),
            ("workload-reference", "spec.controllerRef.name: Invalid value: \"..\": may not be '..'"),
        ]),
    ],
)
def test_workload_v1alpha1_table(spec: str, expected: list[tuple[str, str]]) -> None:
    assert found(V1ALPHA1 + spec, "1.35") == expected


def test_quirk_v1alpha1_duplicate_reports_the_whole_entry() -> None:
    spec = "  podGroups: [{name: a, policy: {basic: {}}}, {name: a, policy: {basic: {}}}]"
    assert found(V1ALPHA1 + spec, "1.35") == [
        ("workload-name", 'spec.podGroups[1]: Duplicate value: {"name":"a","policy":{"basic":{}}}')]


def test_quirk_v1alpha1_too_many_groups_hides_item_errors() -> None:
    groups = ", ".join("{name: BAD, policy: {}}" for _ in range(9))
    assert found(V1ALPHA1 + f"  podGroups: [{groups}]", "1.35") == [
        ("workload-templates", "spec.podGroups: Too many: 9: must have at most 8 items")]


# --- 1.36 v1alpha2 ------------------------------------------------------------------------------

WORKLOAD_V1ALPHA2 = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: Workload\nmetadata: {name: w}\nspec:\n"
PODGROUP_V1ALPHA2 = "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: p}\nspec:\n"
ALL_36 = "TopologyAwareWorkloadScheduling=true,WorkloadAwarePreemption=true,DRAWorkloadResourceClaims=true"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (WORKLOAD_V1ALPHA2 + "  podGroupTemplates: [{name: t, schedulingPolicy: {gang: {minCount: 4}}}]", []),
        (WORKLOAD_V1ALPHA2 + "  podGroupTemplates: [{name: t, schedulingPolicy: {basic: {}, gang: {minCount: 1}}}]",
         [("workload-policy", 'spec.podGroupTemplates[0].schedulingPolicy: Invalid value: "{basic, gang}": '
                              "must specify exactly one of: `basic`, `gang`")]),
        (WORKLOAD_V1ALPHA2 + "  podGroupTemplates: [{name: t, schedulingPolicy: {gang: {minCount: -1}}}]",
         [("workload-policy", "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Invalid value: -1: "
                              "must be greater than or equal to 1")]),
        (WORKLOAD_V1ALPHA2 + "  podGroupTemplates: [{name: t, schedulingPolicy: {basic: {}}}, "
                             "{name: t, schedulingPolicy: {basic: {}}}]",
         [("workload-name", 'spec.podGroupTemplates[1]: Duplicate value: "t"')]),
        (WORKLOAD_V1ALPHA2 + "  podGroupTemplates: [{name: t, schedulingPolicy: {basic: {}}, "
                             "schedulingConstraints: {topology: [{key: a}, {key: ''}]}}]",
         [("workload-topology", "spec.podGroupTemplates[0].schedulingConstraints.topology: Too many: 2: "
                                "must have at most 1 item"),
          ("workload-topology", "spec.podGroupTemplates[0].schedulingConstraints.topology[1].key: Required value")]),
        (WORKLOAD_V1ALPHA2 + "  podGroupTemplates: [{name: t, schedulingPolicy: {basic: {}}, disruptionMode: All}]",
         [("workload-disruption-mode", 'spec.podGroupTemplates[0].disruptionMode: Unsupported value: "All": '
                                       'supported values: "Pod", "PodGroup"')]),
        (WORKLOAD_V1ALPHA2 + "  podGroupTemplates: [{name: t, schedulingPolicy: {basic: {}}, priority: 1000000001, "
                             "priorityClassName: Bad}]",
         [("workload-priority", "spec.podGroupTemplates[0].priority: Invalid value: 1000000001: "
                                "must be less than or equal to 1000000000"),
          ("workload-priority", 'spec.podGroupTemplates[0].priorityClassName: Invalid value: "Bad": a lowercase '
                                "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                                "and must start and end with an alphanumeric character (e.g. 'example.com', regex "
                                r"used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*"
                                r"[a-z0-9])?)*')")]),
        (WORKLOAD_V1ALPHA2 + "  podGroupTemplates: [{name: t, schedulingPolicy: {basic: {}}, resourceClaims: "
                             "[{name: c}, {name: d, resourceClaimName: x, resourceClaimTemplateName: tmpl}]}]",
         [("workload-resource-claims", 'spec.podGroupTemplates[0].resourceClaims[0]: Invalid value: "": must specify '
                                       "one of: `resourceClaimName`, `resourceClaimTemplateName`"),
          ("workload-resource-claims", "spec.podGroupTemplates[0].resourceClaims[1]: Invalid value: "
                                       '"{resourceClaimName, resourceClaimTemplateName}": must specify exactly one of: '
                                       "`resourceClaimName`, `resourceClaimTemplateName`")]),
        (PODGROUP_V1ALPHA2 + "  podGroupTemplateRef: {workload: {workloadName: '', podGroupTemplateName: t}}\n"
                             "  schedulingPolicy: {gang: {minCount: 2}}", [
            ("podgroup-reference", "spec.podGroupTemplateRef.workload.workloadName: Required value")]),
    ],
)
def test_v1alpha2_table_with_gates_on(text: str, expected: list[tuple[str, str]]) -> None:
    assert found(text, "1.36", ALL_36) == expected


def test_a_basic_pod_group_may_have_the_whole_group_disruption_mode() -> None:
    """Issue 11 item 8: upstream creates basic PodGroups with disruptionMode PodGroup/all in its own tests
    (test/integration/scheduler/preemption/podgrouppreemption_test.go, TestPodGroupPreemption "Preempt
    the whole basic PodGroup with a PodGroup disruption mode", and TestDeferredResizePodPreemption_PodGroupVictims);
    our former rule rejecting the pair is gone, on every version."""
    text = PODGROUP_V1ALPHA2 + "  schedulingPolicy: {basic: {}}\n  disruptionMode: PodGroup"
    assert found(text, "1.36", ALL_36) == []
    assert found(text.replace("basic: {}", "gang: {minCount: 2}"), "1.36", ALL_36) == []
    result = admit_text(PODGROUP_V1BETA1 + "  schedulingPolicy: {basic: {}}\n  disruptionMode: {all: {}}",
                        version="1.37", gates=ALL_37)
    assert result.findings == []


GATED_PODGROUP = PODGROUP_V1ALPHA2 + (
    "  schedulingPolicy: {gang: {minCount: 2}}\n"
    "  schedulingConstraints: {topology: [{key: rack}]}\n"
    "  resourceClaims: [{name: c, resourceClaimName: x}]\n"
    "  disruptionMode: PodGroup\n"
    "  priorityClassName: high\n"
)


@pytest.mark.parametrize(
    ("gates", "dropped"),
    [
        ("", ["schedulingConstraints", "resourceClaims", "disruptionMode", "priorityClassName"]),
        ("TopologyAwareWorkloadScheduling=true", ["resourceClaims", "disruptionMode", "priorityClassName"]),
        ("WorkloadAwarePreemption=true", ["schedulingConstraints", "resourceClaims"]),
        (ALL_36, []),
    ],
)
def test_gated_fields_are_dropped_with_a_warning(gates: str, dropped: list[str]) -> None:
    result = admit_text(GATED_PODGROUP, version="1.36", gates=gates)
    warnings = [f for f in result.findings if f.rule.id == "podgroup-gated-field"]
    assert [f.path for f in warnings] == [f"spec.{key}" for key in dropped]
    assert all(f.effective_severity == "warning" for f in warnings)
    assert result.obj is not None
    assert [key for key in dropped if key in result.obj["spec"]] == []
    assert result.accepted


def test_gated_field_warning_names_the_gate() -> None:
    text = PODGROUP_V1ALPHA2 + "  schedulingPolicy: {gang: {minCount: 2}}\n  schedulingConstraints: {topology: []}"
    assert found(text, "1.36") == [(
        "podgroup-gated-field",
        "spec.schedulingConstraints: ignored while the TopologyAwareWorkloadScheduling feature gate is disabled "
        "(the API server drops the field on create)")]


def test_v1alpha2_podgroup_defaults_disruption_mode_only_with_its_gate() -> None:
    text = PODGROUP_V1ALPHA2 + "  schedulingPolicy: {gang: {minCount: 2}}"
    on = admit_text(text, version="1.36", gates="WorkloadAwarePreemption=true").obj
    off = admit_text(text, version="1.36").obj
    assert on is not None and on["spec"]["disruptionMode"] == "Pod"
    assert off is not None and "disruptionMode" not in off["spec"]


@pytest.mark.parametrize(
    ("old_spec", "new_spec", "expected"),
    [
        ("  schedulingPolicy: {gang: {minCount: 2}}", "  schedulingPolicy: {gang: {minCount: 2}}", []),
        ("  schedulingPolicy: {gang: {minCount: 2}}", "  schedulingPolicy: {gang: {minCount: 3}}",
         [("podgroup-immutable", 'spec.schedulingPolicy: Invalid value: {"gang":{"minCount":3}}: field is immutable')]),
    ],
)
def test_v1alpha2_podgroup_spec_is_immutable(old_spec: str, new_spec: str, expected: list[tuple[str, str]]) -> None:
    assert found(PODGROUP_V1ALPHA2 + new_spec, "1.36", old=PODGROUP_V1ALPHA2 + old_spec) == expected


def test_v1alpha2_workload_templates_are_immutable() -> None:
    old = WORKLOAD_V1ALPHA2 + "  podGroupTemplates: [{name: t, schedulingPolicy: {gang: {minCount: 4}}}]"
    new = old.replace("minCount: 4", "minCount: 5")
    [(rule, message)] = found(new, "1.36", old=old)
    assert rule == "workload-immutable"
    assert message.startswith("spec.podGroupTemplates: Invalid value: ") and message.endswith("field is immutable")


# --- 1.37 v1beta1 / v1alpha3 ------------------------------------------------------------------

WORKLOAD_V1BETA1 = "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\nspec:\n"
PODGROUP_V1BETA1 = "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: p}\nspec:\n"
CPG_V1ALPHA3 = "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata: {name: c}\nspec:\n"
ALL_37 = "TopologyAwareWorkloadScheduling=true,CompositePodGroup=true,PodGroupPreemptionPolicy=true"


def test_quirk_v1beta1_union_members_follow_the_composite_gate() -> None:
    # declarative_validation_test.go "empty podGroupTemplates" vs "empty compositePodGroupTemplates".
    text = WORKLOAD_V1BETA1 + "  podGroupTemplates: []"
    assert found(text, "1.37") == [
        ("workload-templates", 'spec: Invalid value: "": must specify one of: `podGroupTemplates`')]
    assert found(text, "1.37", ALL_37) == [
        ("workload-templates",
         'spec: Invalid value: "": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`')]


def composite_tree(levels: int) -> str:
    """A Workload with one chain of ``levels`` composite templates ending in a PodGroup template."""
    node = "{name: leaf, schedulingPolicy: {basic: {}}}"
    inner = f"podGroupTemplates: [{node}]"
    for level in range(levels, 0, -1):
        inner = f"compositePodGroupTemplates: [{{name: c{level}, schedulingPolicy: {{basic: {{}}}}, {inner}}}]"
    return WORKLOAD_V1BETA1 + "  " + inner


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (composite_tree(3), []),
        (composite_tree(4), [("workload-templates", 'spec.compositePodGroupTemplates[0]: Invalid value: "c1": '
                                                    "maximum tree depth is 4")]),
        (WORKLOAD_V1BETA1 + "  compositePodGroupTemplates: [{name: c, schedulingPolicy: {gang: {minGroupCount: 0}}}]",
         [("workload-policy", "spec.compositePodGroupTemplates[0].schedulingPolicy.gang.minGroupCount: Required value"),
          ("workload-templates", 'spec.compositePodGroupTemplates[0]: Invalid value: "c": must have at least one child '
                                 "PodGroupTemplate or CompositePodGroupTemplate")]),
        (WORKLOAD_V1BETA1 + "  compositePodGroupTemplates: [{name: x, schedulingPolicy: {basic: {}}, "
                            "podGroupTemplates: [{name: x, schedulingPolicy: {basic: {}}}]}]",
         [("workload-name", 'spec.compositePodGroupTemplates[0].podGroupTemplates[0]: Duplicate value: "x"')]),
        (WORKLOAD_V1BETA1 + "  podGroupTemplates: [{name: a, schedulingPolicy: {basic: {}}, priorityClassName: hi}, "
                            "{name: b, schedulingPolicy: {basic: {}}, priorityClassName: lo}]",
         [("workload-priority", "spec: Invalid value: detected multiple priority configurations")]),
        (WORKLOAD_V1BETA1 + "  podGroupTemplates: [{name: a, schedulingPolicy: {basic: {}}, preemptionPolicy: Maybe}]",
         [("workload-preemption-policy", 'spec.podGroupTemplates[0].preemptionPolicy: Unsupported value: "Maybe": '
                                         'supported values: "Never", "PreemptLowerPriority"')]),
    ],
)
def test_workload_v1beta1_table(text: str, expected: list[tuple[str, str]]) -> None:
    assert found(text, "1.37", ALL_37) == expected


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("  workloadRef: {workloadName: w, templateName: t}\n  schedulingPolicy: {gang: {minCount: 2}}\n"
         "  disruptionMode: {all: {}}", []),
        ("  schedulingPolicy: {gang: {minCount: 2}}\n  disruptionMode: {}",
         [("podgroup-disruption-mode", 'spec.disruptionMode: Invalid value: "": must specify one of: `single`, '
                                       "`all`")]),
        ("  schedulingPolicy: {gang: {minCount: 2}}\n  disruptionMode: {single: {}, all: {}}",
         [("podgroup-disruption-mode", 'spec.disruptionMode: Invalid value: "{single, all}": must specify exactly one '
                                       "of: `single`, `all`")]),
        ("  workloadRef: {workloadName: W, templateName: t}\n  schedulingPolicy: {basic: {}}",
         [("podgroup-reference", 'spec.workloadRef.workloadName: Invalid value: "W": a lowercase RFC 1123 subdomain '
                                 "must consist of lower case alphanumeric characters, '-' or '.', and must start and "
                                 "end with an alphanumeric character (e.g. 'example.com', regex used for validation "
                                 r"is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]),
    ],
)
def test_podgroup_v1beta1_table(spec: str, expected: list[tuple[str, str]]) -> None:
    assert found(PODGROUP_V1BETA1 + spec, "1.37", ALL_37) == expected


@pytest.mark.parametrize(
    ("spec", "rule", "path"),
    [
        # Wording [UNCONFIRMED]; rule from scheduling.md §1.2 (parent requires workloadRef).
        ("  schedulingPolicy: {basic: {}}\n  parentCompositePodGroupName: c", "podgroup-reference", "spec.workloadRef"),
    ],
)
def test_podgroup_v1beta1_unconfirmed_wording_rules(spec: str, rule: str, path: str) -> None:
    result = admit_text(PODGROUP_V1BETA1 + spec, version="1.37", gates=ALL_37)
    assert [(f.rule.id, f.path) for f in result.findings] == [(rule, path)]


def test_podgroup_v1beta1_defaults_disruption_mode_single() -> None:
    result = admit_text(PODGROUP_V1BETA1 + "  schedulingPolicy: {basic: {}}", version="1.37")
    assert result.obj is not None and result.obj["spec"]["disruptionMode"] == {"single": {}}


def test_preemption_policy_and_parent_are_gated_on_137() -> None:
    text = PODGROUP_V1BETA1 + ("  workloadRef: {workloadName: w, templateName: t}\n  schedulingPolicy: {basic: {}}\n"
                               "  preemptionPolicy: Never\n  parentCompositePodGroupName: c")
    assert [(r, m.split(":")[0]) for r, m in found(text, "1.37")] == [
        ("podgroup-gated-field", "spec.preemptionPolicy"),
        ("podgroup-gated-field", "spec.parentCompositePodGroupName"),
    ]


def test_composite_podgroup_v1alpha3() -> None:
    text = CPG_V1ALPHA3 + "  workloadRef: {workloadName: w, templateName: c}\n  schedulingPolicy: {gang: {minGroupCount: -2}}"
    assert found(text, "1.37", ALL_37) == [(
        "compositepodgroup-policy",
        "spec.schedulingPolicy.gang.minGroupCount: Invalid value: -2: must be greater than or equal to 1")]
    result = admit_text(text.replace("-2", "2"), version="1.37", gates=ALL_37)
    assert result.findings == [] and result.obj is not None
    assert result.obj["spec"]["disruptionMode"] == {"single": {}}


@pytest.mark.parametrize(
    ("old_spec", "new_spec", "expected_rules"),
    [
        # minCount is mutable in 1.37.
        ("  schedulingPolicy: {gang: {minCount: 2}}", "  schedulingPolicy: {gang: {minCount: 5}}", []),
        # ...but the variant is not.
        ("  schedulingPolicy: {gang: {minCount: 2}}", "  schedulingPolicy: {basic: {}}", ["podgroup-immutable"]),
        ("  schedulingPolicy: {basic: {}}\n  priorityClassName: a", "  schedulingPolicy: {basic: {}}\n"
         "  priorityClassName: b", ["podgroup-immutable"]),
    ],
)
def test_podgroup_v1beta1_update(old_spec: str, new_spec: str, expected_rules: list[str]) -> None:
    assert [r for r, _ in found(PODGROUP_V1BETA1 + new_spec, "1.37", old=PODGROUP_V1BETA1 + old_spec)] == expected_rules


def test_workload_v1beta1_update_allows_min_count_but_not_new_templates() -> None:
    old = WORKLOAD_V1BETA1 + "  podGroupTemplates: [{name: a, schedulingPolicy: {gang: {minCount: 2}}}]"
    assert found(old.replace("minCount: 2", "minCount: 9"), "1.37", old=old) == []
    grown = old.replace("}}}]", "}}}, {name: b, schedulingPolicy: {basic: {}}}]")
    assert [r for r, _ in found(grown, "1.37", old=old)] == ["workload-immutable"]


# --- the Priority admission plugin on groups ----------------------------------------------------


def cluster_context(version: str, objects: list[dict[str, Any]], gates: str = "") -> AdmissionContext:
    kube = KubeVersion.parse(version)
    return AdmissionContext(kube, parse_feature_gates(gates, kube), cluster=ObjectIndex(objects))


HIGH = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 100,
        "preemptionPolicy": "Never"}
DEFAULT = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "dflt"}, "value": 5,
           "globalDefault": True}


def test_priority_plugin_fills_podgroup_priority_with_a_cluster_view() -> None:
    text = PODGROUP_V1BETA1 + "  schedulingPolicy: {basic: {}}\n  priorityClassName: high"
    result = admit(load_one(text), cluster_context("1.37", [HIGH], "PodGroupPreemptionPolicy=true"))
    assert result.obj is not None
    assert (result.obj["spec"]["priority"], result.obj["spec"]["preemptionPolicy"]) == (100, "Never")
    # Without a cluster view (validate phase A) the priority stays unset.
    plain = admit_text(text, version="1.37")
    assert plain.obj is not None and "priority" not in plain.obj["spec"]


def test_priority_plugin_uses_the_global_default_class() -> None:
    text = PODGROUP_V1BETA1 + "  schedulingPolicy: {basic: {}}"
    result = admit(load_one(text), cluster_context("1.37", [DEFAULT]))
    assert result.obj is not None
    assert (result.obj["spec"]["priority"], result.obj["spec"]["priorityClassName"]) == (5, "dflt")


def test_priority_plugin_rejects_an_unknown_class() -> None:
    text = PODGROUP_V1BETA1 + "  schedulingPolicy: {basic: {}}\n  priorityClassName: nope"
    result = admit(load_one(text), cluster_context("1.37", [HIGH]))
    assert [(f.rule.id, f.message) for f in result.findings] == [(
        "podgroup-priority",
        'podgroups.scheduling.k8s.io "p" is forbidden: no PriorityClass with name nope was found')]


def test_priority_plugin_leaves_136_podgroups_alone_without_preemption_gate() -> None:
    text = PODGROUP_V1ALPHA2 + "  schedulingPolicy: {basic: {}}"
    result = admit(load_one(text), cluster_context("1.36", [DEFAULT]))
    assert result.obj is not None and "priority" not in result.obj["spec"]
    result = admit(load_one(text), cluster_context("1.36", [DEFAULT], "WorkloadAwarePreemption=true"))
    assert result.obj is not None and result.obj["spec"]["priority"] == 5


@pytest.mark.parametrize("junk", ["spec: 3", "spec: [1]", "spec: {schedulingPolicy: 7, disruptionMode: 3}"])
@pytest.mark.parametrize("kind", ["Workload", "PodGroup"])
def test_malformed_objects_do_not_crash(junk: str, kind: str) -> None:
    result = admit_text(f"apiVersion: scheduling.k8s.io/v1beta1\nkind: {kind}\nmetadata: {{name: x}}\n{junk}")
    assert result.obj is not None
