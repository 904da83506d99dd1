"""The texts a failed 1.36 PodGroup cycle leaves on the pods that found no node.

Regression: the pod-by-pod preemption after a failed group cycle diagnosed the pod again after the
group's assumed pods had been rolled back, found every node free and wrote
``0/2 nodes are available: preemption: 0/2 nodes are available:`` (no reasons at all). The PostFilter
works from the statuses of the pod's own cycle (kube-scheduler's ``FitError`` of that cycle), where the
group-mates hold the nodes.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.simulate.harness import run_json, write_scenario

SCENARIO = """\
    apiVersion: jobsetctl.dev/v1alpha1
    kind: Scenario
    metadata: {name: messages}
    spec:
      kubernetesVersion: "1.36"
      until: 1h
      nodes:
      - {name: node, count: 2, capacity: {cpu: "4", memory: 16Gi, pods: "110"}}
      submit:
      - at: 0s
        objects:
        - apiVersion: scheduling.k8s.io/v1alpha2
          kind: PodGroup
          metadata: {name: g}
          spec:
            schedulingPolicy: {gang: {minCount: 3}}
        - apiVersion: batch/v1
          kind: Job
          metadata: {name: j}
          spec:
            parallelism: 3
            completions: 3
            completionMode: Indexed
            template:
              metadata: {annotations: {jobsetctl.dev/duration: 10m}}
              spec:
                schedulingGroup: {podGroupName: g}
                restartPolicy: Never
                containers: [{name: c, image: busybox, resources: {requests: {cpu: "3"}}}]
"""


def test_the_pod_without_a_node_says_why_and_why_preemption_did_not_help(tmp_path: Path) -> None:
    text, outcome = run_json(write_scenario(tmp_path, SCENARIO))
    assert not outcome.failed
    unschedulable = [(e["kind"], e["name"].rsplit("-", 1)[0] if e["kind"] == "Pod" else e["name"], e["message"])
                     for e in json.loads(text)["events"] if e["event"] == "Unschedulable"]
    # The group and the pods that found a node carry upstream's group status (``errPodGroupUnschedulable``).
    assert unschedulable == [
        ("PodGroup", "g", "pod group is unschedulable"),
        ("Pod", "j-0", "pod group is unschedulable"),
        ("Pod", "j-1", "pod group is unschedulable"),
        ("Pod", "j-2", "0/2 nodes are available: 2 Insufficient cpu. "
                       "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."),
    ]
