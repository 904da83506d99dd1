"""Pod admission in the fake API server: Priority (scheduling.md §3.1), DefaultTolerationSeconds, the
JobSet pod webhooks (jobset.md §2.5, §3.6) and the matchLabelKeys merge (scheduling.md §3.3), in
kube-apiserver order."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobsetctl.fakecluster.podadmission import default_toleration_seconds, merge_label_keys, qos_class
from tests.fakecluster.harness import ClusterFactory, Timeline, add_node, job, kube_events, submit

JOBSET_LABELS = {"jobset.sigs.k8s.io/jobset-name": "js", "jobset.sigs.k8s.io/replicatedjob-name": "w",
                 "jobset.sigs.k8s.io/job-index": "0", "jobset.sigs.k8s.io/job-key": "k0"}
EXCLUSIVE = {"jobset.sigs.k8s.io/jobset-name": "js", "alpha.jobset.sigs.k8s.io/exclusive-topology": "rack"}
NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300}
UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
               "tolerationSeconds": 300}


def pod(name: str | None = "p", *, labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
        generate_name: str | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if name:
        meta["name"] = name
    if generate_name:
        meta["generateName"] = generate_name
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "main", "image": "busybox"}], **spec}}


def priority_class(name: str, value: int, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **fields}


# --- Priority ---------------------------------------------------------------------------------------


def test_priority_comes_from_the_class(make_cluster: ClusterFactory) -> None:
    fake = make_cluster(simulate=False)
    submit(fake, priority_class("high", 1000, preemptionPolicy="Never"))
    created = submit(fake, pod(priorityClassName="high"))
    assert (created["spec"]["priority"], created["spec"]["preemptionPolicy"]) == (1000, "Never")


def test_priority_defaults_to_the_global_default_class_or_zero(make_cluster: ClusterFactory) -> None:
    fake = make_cluster(simulate=False)
    plain = submit(fake, pod("plain"))
    assert (plain["spec"]["priority"], plain["spec"]["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    assert "priorityClassName" not in plain["spec"]
    submit(fake, priority_class("base", 7, globalDefault=True))
    defaulted = submit(fake, pod("defaulted"))
    assert (defaulted["spec"]["priorityClassName"], defaulted["spec"]["priority"]) == ("base", 7)


def test_system_priority_classes_exist_without_objects(make_cluster: ClusterFactory) -> None:
    fake = make_cluster(simulate=False)
    created = submit(fake, pod(priorityClassName="system-cluster-critical"))
    assert created["spec"]["priority"] == 2_000_000_000


@pytest.mark.parametrize(("name", "generate_name", "shown"), [("p", None, "p"), (None, "pi-0-", "pi-0-")])
def test_unknown_priority_class_is_forbidden(make_cluster: ClusterFactory, name: str | None, generate_name: str | None, shown: str) -> None:
    """The registry generates the name after admission, so a generateName pod is named by its
    generateName in the error (``admission.NewForbidden`` / ``extractResourceName``)."""
    fake = make_cluster(simulate=False)
    result = fake.submit(pod(name, generate_name=generate_name, priorityClassName="nope"))
    assert not result.ok
    assert [(f.rule.id, f.message) for f in result.findings] == [
        ("pod-priority-class-not-found", f'pods "{shown}" is forbidden: no PriorityClass with name nope was found')]
    assert Timeline(fake).events()[-1][3:] == ("Rejected", "Forbidden")


def test_preset_priority_that_differs_from_the_class_is_forbidden(make_cluster: ClusterFactory) -> None:
    fake = make_cluster(simulate=False)
    result = fake.submit(pod(priority=5))
    assert [f.message for f in result.findings] == [
        'pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority '
        "admission controller computed 0 from the given PriorityClass name"]
    result = fake.submit(pod("q", preemptionPolicy="Never"))
    assert [f.message for f in result.findings] == [
        'pods "q" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; '
        "priority admission controller computed PreemptLowerPriority from the given PriorityClass name"]


# --- DefaultTolerationSeconds ---------------------------------------------------------------------------


@pytest.mark.parametrize(("tolerations", "added"), [
    ([], [NOT_READY, UNREACHABLE]),
    ([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}], [NOT_READY]),
    ([{"operator": "Exists"}], []),
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}], [UNREACHABLE]),
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}], [NOT_READY, UNREACHABLE]),
])
def test_default_toleration_seconds(tolerations: list[dict[str, Any]], added: list[dict[str, Any]]) -> None:
    subject = pod(tolerations=copy.deepcopy(tolerations))
    default_toleration_seconds(subject)
    assert subject["spec"]["tolerations"] == tolerations + added


def test_admitted_pods_get_default_tolerations_and_pending_status(make_cluster: ClusterFactory) -> None:
    fake = make_cluster(simulate=False)
    created = submit(fake, pod(containers=[{"name": "main", "image": "busybox",
                                            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]))
    assert created["spec"]["tolerations"] == [NOT_READY, UNREACHABLE]
    assert created["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}


@pytest.mark.parametrize(("resources", "expected"), [
    ({}, "BestEffort"),
    ({"requests": {"cpu": "1"}}, "Burstable"),
    ({"limits": {"cpu": "1", "memory": "1Gi"}}, "Guaranteed"),
    ({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1000m", "memory": "1Gi"}}, "Guaranteed"),
    ({"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}}, "Burstable"),
])
def test_qos_class(resources: dict[str, Any], expected: str) -> None:
    assert qos_class(pod(containers=[{"name": "main", "resources": resources}])) == expected


# --- matchLabelKeys / mismatchLabelKeys -------------------------------------------------------------


def test_match_label_keys_merge_into_required_and_preferred_terms() -> None:
    term = {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "zone",
            "matchLabelKeys": ["tenant", "absent"], "mismatchLabelKeys": ["team"]}
    subject = pod(labels={"tenant": "t1", "team": "red"}, affinity={
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [copy.deepcopy(term)]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": copy.deepcopy(term)}],
            "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "zone", "matchLabelKeys": ["tenant"]}]},
    })
    merge_label_keys(subject)
    merged = {"matchLabels": {"app": "a"}, "matchExpressions": [
        {"key": "tenant", "operator": "In", "values": ["t1"]},
        {"key": "team", "operator": "NotIn", "values": ["red"]}]}
    affinity = subject["spec"]["affinity"]
    assert affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"] == merged
    assert affinity["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"][
        "labelSelector"] == merged
    # A term without a labelSelector selects nothing and stays so.
    assert "labelSelector" not in affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]


def test_match_label_keys_see_the_jobset_priority_label(make_cluster: ClusterFactory) -> None:
    """The registry merges matchLabelKeys in PrepareForCreate, after the mutating webhooks: a term
    keyed on ``jobset.sigs.k8s.io/priority`` picks up the label mpod.kb.io just wrote (the
    mismatchLabelKeys spelling of exclusive placement, scheduling.md §3.4)."""
    fake = make_cluster(simulate=False)
    term = {"labelSelector": {"matchExpressions": [{"key": "jobset.sigs.k8s.io/job-key", "operator": "Exists"}]},
            "topologyKey": "rack", "mismatchLabelKeys": ["jobset.sigs.k8s.io/job-key"],
            "matchLabelKeys": ["jobset.sigs.k8s.io/priority"]}
    created = submit(fake, pod(labels=JOBSET_LABELS, annotations={"jobset.sigs.k8s.io/jobset-name": "js"},
                               affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}))
    selector = created["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0][
        "labelSelector"]
    assert selector["matchExpressions"] == [
        {"key": "jobset.sigs.k8s.io/job-key", "operator": "Exists"},
        {"key": "jobset.sigs.k8s.io/priority", "operator": "In", "values": ["0"]},
        {"key": "jobset.sigs.k8s.io/job-key", "operator": "NotIn", "values": ["k0"]},
    ]


# --- the JobSet pod webhooks through the API server ------------------------------------------------


def test_every_jobset_pod_gets_the_priority_label(make_cluster: ClusterFactory) -> None:
    """jobset.md §3.6 step 3 and §6 #10: all JobSet pods, except node-selector-strategy ones."""
    fake = make_cluster(simulate=False)
    submit(fake, priority_class("high", 1000))
    jobset_pod = submit(fake, pod("a", labels=JOBSET_LABELS, annotations={"jobset.sigs.k8s.io/jobset-name": "js"},
                                  priorityClassName="high"))
    assert jobset_pod["metadata"]["labels"]["jobset.sigs.k8s.io/priority"] == "1000"
    strategy = submit(fake, pod("b", labels=JOBSET_LABELS, annotations={
        "jobset.sigs.k8s.io/jobset-name": "js", "alpha.jobset.sigs.k8s.io/node-selector": "true"}))
    assert "jobset.sigs.k8s.io/priority" not in strategy["metadata"]["labels"]
    # The webhook keys on the annotation, not the label.
    label_only = submit(fake, pod("c", labels=JOBSET_LABELS))
    assert "jobset.sigs.k8s.io/priority" not in label_only["metadata"]["labels"]


def _exclusive_job(template_node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    spec = {"nodeSelector": template_node_selector} if template_node_selector else {}
    return job("js-w-0", parallelism=3, completions=3, indexed=True, labels=JOBSET_LABELS,
               annotations={**EXCLUSIVE, "jobsetctl.dev/duration": "100s"}, pod_spec=spec)


def test_exclusive_leader_first_then_followers_pinned_to_its_domain(make_cluster: ClusterFactory) -> None:
    """jobset.md §3.6: followers are denied until the leader is scheduled; the Job controller retries
    them with its API back-off (1 s) and they come back with the leader's rack as nodeSelector."""
    fake = make_cluster()
    add_node(fake, "node-a", {"rack": "r1"})
    add_node(fake, "node-b", {"rack": "r2"})
    submit(fake, _exclusive_job())
    fake.run(50)
    assert Timeline(fake).events(kinds={"Pod"}, skip={"Started", "Ready"}) == [
        (0, "Pod", "js-w-0-0-*1", "Created", None),
        (0, "Pod", "js-w-0-1-*1", "Rejected", "Forbidden"),
        (0, "Pod", "js-w-0-2-*1", "Rejected", "Forbidden"),
        (1, "Pod", "js-w-0-1-*2", "Created", None),
        (1, "Pod", "js-w-0-2-*2", "Created", None),
    ]
    denied = 'Error creating: admission webhook "vpod.kb.io" denied the request: follower pod node selector not set'
    assert [e[4:] for e in kube_events(fake, "Job") if e[4] == "FailedCreate"] == [("FailedCreate", denied)] * 2
    pods = sorted(fake.api.list("", "Pod"), key=lambda p: p["metadata"]["name"])
    leader, followers = pods[0], pods[1:]
    assert leader["spec"]["affinity"] == {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchExpressions": [
                {"key": "jobset.sigs.k8s.io/job-key", "operator": "In", "values": ["k0"]}]},
            "topologyKey": "rack", "namespaceSelector": {}}]},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchExpressions": [
                {"key": "jobset.sigs.k8s.io/job-key", "operator": "Exists"},
                {"key": "jobset.sigs.k8s.io/job-key", "operator": "NotIn", "values": ["k0"]},
                {"key": "jobset.sigs.k8s.io/priority", "operator": "In", "values": ["0"]}]},
            "topologyKey": "rack", "namespaceSelector": {}}]},
    }
    assert "nodeSelector" not in leader["spec"]
    assert [f["spec"]["nodeSelector"] for f in followers] == [{"rack": "r1"}, {"rack": "r1"}]


def test_quirk_leader_not_scheduled_message_needs_a_template_selector(make_cluster: ClusterFactory) -> None:
    """Only a follower whose template already selects on the topology key reaches the 'leader pod not
    yet scheduled' check; render (no scheduler) shows it, and the retries keep failing."""
    fake = make_cluster(simulate=False)
    submit(fake, _exclusive_job({"rack": "r9"}))
    fake.run(4)
    failures = [e for e in kube_events(fake, "Job") if e[4] == "FailedCreate"]
    # Slow start: at 0 s the leader alone, then a batch of two that fails; retries start with one pod.
    assert [e[0] for e in failures] == [0, 0, 1, 3]
    assert failures[0][5] == (
        'Error creating: admission webhook "vpod.kb.io" denied the request: leader pod not yet scheduled, '
        "not creating follower pod. this is an expected, transient error")


def test_follower_selector_without_the_topology_key_is_denied(make_cluster: ClusterFactory) -> None:
    fake = make_cluster(simulate=False)
    submit(fake, _exclusive_job({"disk": "ssd"}))
    fake.run(0)
    failures = [e[5] for e in kube_events(fake, "Job") if e[4] == "FailedCreate"]
    assert failures[0] == ('Error creating: admission webhook "vpod.kb.io" denied the request: follower pod node '
                           "selector for topology domain not found. missing selector: rack")


def test_leader_on_a_node_without_the_topology_label_fails_the_mutating_webhook(make_cluster: ClusterFactory) -> None:
    """A scheduler would not place the leader there (its own required affinity has no domain on such a
    node), so the leader is bound by hand here."""
    fake = make_cluster(simulate=False)
    add_node(fake, "node-a")  # no rack label
    owner = [{"apiVersion": "batch/v1", "kind": "Job", "name": "js-w-0", "uid": "u", "controller": True}]
    index = "batch.kubernetes.io/job-completion-index"
    submit(fake, pod("js-w-0-0-aaaaa", labels=JOBSET_LABELS, annotations={**EXCLUSIVE, index: "0"},
                     nodeName="node-a"))
    follower = pod("js-w-0-1-eeeee", labels=JOBSET_LABELS, annotations={**EXCLUSIVE, index: "1"})
    follower["metadata"]["ownerReferences"] = owner
    fake.api.get("", "Pod", "default", "js-w-0-0-aaaaa")["metadata"]["ownerReferences"] = owner  # type: ignore[index]
    result = fake.submit(follower)
    assert [(f.rule.id, f.message) for f in result.findings] == [(
        "pod-jobset-leader-topology",
        'admission webhook "mpod.kb.io" denied the request: node does not have topology label: rack')]
