"""The JobSet pod webhooks as pure functions (jobset.md §2.5, §3.6), with in-memory lookups."""

from __future__ import annotations

from typing import Any

import pytest

from jobsetctl.jobset import podwebhook
from jobsetctl.kinds.interface import Object

TOPOLOGY = "cloud.google.com/gke-nodepool"


class Lookups:
    def __init__(self, pods: list[Object], nodes: dict[str, dict[str, str]]) -> None:
        self.pods = pods
        self.nodes = {name: {"metadata": {"name": name, "labels": labels}} for name, labels in nodes.items()}

    def pods_by_name_stem(self, namespace: str, stem: str) -> list[Object]:
        return [p for p in self.pods if p["metadata"].get("namespace", "default") == namespace
                and podwebhook.pod_name_stem(p["metadata"]["name"]) == stem]

    def node(self, name: str) -> Object | None:
        return self.nodes.get(name)


def jobset_pod(name: str, index: int, *, owner: str = "job-uid", node: str | None = None,
               priority: int | None = 0, exclusive: bool = True, **meta: Any) -> dict[str, Any]:
    annotations = {"jobset.sigs.k8s.io/jobset-name": "js", "batch.kubernetes.io/job-completion-index": str(index)}
    if exclusive:
        annotations["alpha.jobset.sigs.k8s.io/exclusive-topology"] = TOPOLOGY
    spec: dict[str, Any] = {"containers": [{"name": "main"}]}
    if node:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "annotations": annotations,
                         "labels": {"jobset.sigs.k8s.io/jobset-name": "js",
                                    "jobset.sigs.k8s.io/replicatedjob-name": "w",
                                    "jobset.sigs.k8s.io/job-index": "0", "jobset.sigs.k8s.io/job-key": "k0"},
                         "ownerReferences": [{"kind": "Job", "name": "js-w-0", "uid": owner, "controller": True}],
                         **meta},
            "spec": spec}


def test_pod_name_stem_needs_five_parts() -> None:
    assert podwebhook.pod_name_stem("js-w-0-0-abcde") == "js-w-0-0"
    assert podwebhook.pod_name_stem("js-w-0-abcde") is None


def test_leader_gets_affinities_appended_to_user_terms() -> None:
    leader = jobset_pod("js-w-0-0-abcde", 0, priority=7)
    user_term = {"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": "zone"}
    leader["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [user_term]}}
    assert podwebhook.default_pod(leader, Lookups([], {})) is None
    affinity = leader["spec"]["affinity"]
    assert affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0] == user_term
    anti = affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert anti[0]["labelSelector"]["matchExpressions"][2] == {
        "key": "jobset.sigs.k8s.io/priority", "operator": "In", "values": ["7"]}
    assert leader["metadata"]["labels"]["jobset.sigs.k8s.io/priority"] == "7"


def test_leader_without_priority_gets_an_empty_priority_value() -> None:
    """Derived from code (jobset.md §3.6): no priority → the anti-affinity selects ``priority In [""]``."""
    leader = jobset_pod("js-w-0-0-abcde", 0, priority=None)
    podwebhook.default_pod(leader, Lookups([], {}))
    expressions = leader["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0][
        "labelSelector"]["matchExpressions"]
    assert expressions[2]["values"] == [""]
    assert "jobset.sigs.k8s.io/priority" not in leader["metadata"]["labels"]


def test_follower_follows_the_scheduled_leader() -> None:
    leader = jobset_pod("js-w-0-0-abcde", 0, node="n1")
    follower = jobset_pod("js-w-0-1-fghjk", 1)
    lookups = Lookups([leader], {"n1": {TOPOLOGY: "pool-a"}})
    assert podwebhook.default_pod(follower, lookups) is None
    assert follower["spec"]["nodeSelector"] == {TOPOLOGY: "pool-a"}
    assert podwebhook.validate_pod(follower, lookups) is None


def _reason(denial: podwebhook.Denial | None) -> tuple[str, str, str] | None:
    return None if denial is None else (denial.rule.id, denial.webhook, denial.reason)


@pytest.mark.parametrize(("pods", "selector", "expected"), [
    ([], None, ("pod-jobset-follower-node-selector", "vpod.kb.io", "follower pod node selector not set")),
    ([], {TOPOLOGY: "x"}, ("pod-jobset-leader-lookup", "vpod.kb.io",
                           "expected 1 leader pod (js-w-0-0), but got 0. this is an expected, transient error")),
    ([jobset_pod("js-w-0-0-aaaaa", 0), jobset_pod("js-w-0-0-bbbbb", 0)], {TOPOLOGY: "x"},
     ("pod-jobset-leader-lookup", "vpod.kb.io",
      "expected 1 leader pod (js-w-0-0), but got 2. this is an expected, transient error")),
    ([jobset_pod("js-w-0-0-aaaaa", 0, owner="other")], {TOPOLOGY: "x"},
     ("pod-jobset-leader-lookup", "vpod.kb.io", "follower pod owner UID (job-uid) != leader pod owner UID (other)")),
    ([jobset_pod("js-w-0-0-aaaaa", 0)], {TOPOLOGY: "x"},
     ("pod-jobset-leader-not-scheduled", "vpod.kb.io",
      "leader pod not yet scheduled, not creating follower pod. this is an expected, transient error")),
])
def test_follower_denials(pods: list[Object], selector: dict[str, str] | None,
                          expected: tuple[str, str, str]) -> None:
    follower = jobset_pod("js-w-0-1-fghjk", 1)
    if selector is not None:
        follower["spec"]["nodeSelector"] = selector
    lookups = Lookups(pods, {})
    assert podwebhook.default_pod(follower, lookups) is None
    assert _reason(podwebhook.validate_pod(follower, lookups)) == expected


def test_terminating_and_finished_leaders_are_ignored() -> None:
    gone = jobset_pod("js-w-0-0-aaaaa", 0, node="n1", deletionTimestamp="2026-01-01T00:00:00Z")
    done = jobset_pod("js-w-0-0-bbbbb", 0, node="n1")
    done["status"] = {"phase": "Failed"}
    live = jobset_pod("js-w-0-0-ccccc", 0, node="n2")
    follower = jobset_pod("js-w-0-1-fghjk", 1)
    podwebhook.default_pod(follower, Lookups([gone, done, live], {"n1": {TOPOLOGY: "a"}, "n2": {TOPOLOGY: "b"}}))
    assert follower["spec"]["nodeSelector"] == {TOPOLOGY: "b"}


def test_follower_label_missing_is_reported_by_the_validating_webhook() -> None:
    follower = jobset_pod("js-w-0-1-fghjk", 1)
    follower["spec"]["nodeSelector"] = {TOPOLOGY: "x"}
    del follower["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"]
    assert _reason(podwebhook.validate_pod(follower, Lookups([], {}))) == (
        "pod-jobset-leader-lookup", "vpod.kb.io", "pod missing label: jobset.sigs.k8s.io/job-index")


def test_leader_node_lookup_failures_deny_in_the_mutating_webhook() -> None:
    leader = jobset_pod("js-w-0-0-abcde", 0, node="n1")
    follower = jobset_pod("js-w-0-1-fghjk", 1)
    denial = podwebhook.default_pod(follower, Lookups([leader], {}))
    assert denial is not None and denial.message == 'admission webhook "mpod.kb.io" denied the request: nodes "n1" not found'


def test_non_exclusive_and_non_jobset_pods_pass_untouched_except_the_label() -> None:
    plain = jobset_pod("js-w-0-1-fghjk", 1, exclusive=False)
    assert podwebhook.default_pod(plain, Lookups([], {})) is None
    assert podwebhook.validate_pod(plain, Lookups([], {})) is None
    assert "nodeSelector" not in plain["spec"] and "affinity" not in plain["spec"]
    assert plain["metadata"]["labels"]["jobset.sigs.k8s.io/priority"] == "0"
    other = {"metadata": {"name": "x"}, "spec": {"priority": 3}}
    assert podwebhook.default_pod(other, Lookups([], {})) is None and "labels" not in other["metadata"]
