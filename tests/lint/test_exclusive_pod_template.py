"""``jobset-exclusive-pod-template``: where kubernetes-sigs/jobset @ 08dfbdfd reads the exclusive-placement
annotations, and what is lost when they sit on the pod template (jobset.md §3.2, §3.6, §3.7).

Every reader of the two keys at that commit (``git grep -n 'ExclusiveKey\\|NodeSelectorStrategyKey'`` outside
tests):

* the child Job's annotations: ``pkg/controllers/jobset_controller.go:961-962`` (``constructJob``: the
  node-selector strategy, ``addNamespacedJobNodeSelector`` and ``addTaintToleration``), and nothing else;
* the JobSet's and the replicated job's annotations: ``jobset_controller.go:1061-1074``
  (``labelAndAnnotateObject``: copied onto the Job and its pod template, the node-selector key only from the
  level that has the topology key);
* the pod's annotations: ``pkg/webhooks/pod_webhook.go:61,74`` (``Default``: skip with the node-selector key,
  else ``patchPod``), ``:117,139`` (the leader's affinities), ``:161`` (the follower's nodeSelector),
  ``:210,215`` (``ValidateCreate``: the follower admission check); ``pkg/controllers/pod_controller.go:88,101``
  (the pod indexes), ``:199`` (the leader's topology), ``:307`` (the reconciler's event filter).

There is no leader-pod scheduling gate for exclusive placement at that commit (the only scheduling gates in
``pkg/`` are the pod template's own, merged at ``jobset_controller.go:673``), and no webhook file split into
``pod_mutating_webhook.go``/``pod_admission_webhook.go``: one ``pod_webhook.go`` holds both.

Consequence: the topology key alone on the pod template reaches the pods as it would from the replicated job,
and every pod-side reader sees the same pods; only the Job's own annotations differ, which only the
node-selector strategy reads. Nothing is lost then (no finding: the render evidence below), unless the
JobSet has its own topology key, which ``labelAndAnnotateObject`` lays over the pod's. Split the node-selector
strategy across the levels and it is lost (the table).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from jobsetctl.cli.app import run
from tests.helpers import validate_text
from tests.lint.support import lints

E = "alpha.jobset.sigs.k8s.io/exclusive-topology"
N = "alpha.jobset.sigs.k8s.io/node-selector"
RULE = "jobset-exclusive-pod-template"


def jobset(js: dict[str, str] | None = None, rjob: dict[str, str] | None = None, pod: dict[str, str] | None = None,
           kind: str = "JobSet") -> str:
    """A JobSet (or TrainingRuntime) with annotations on the JobSet, the replicated job and the pod template.
    The pod template's first annotation is on line 18 (JobSet), 22 (runtime)."""
    def ann(values: dict[str, str] | None) -> str:
        return "{" + ", ".join(f"{k}: {v!r}" for k, v in (values or {}).items()) + "}"
    body = (f"  replicatedJobs:\n"
            f"  - name: workers\n"
            f"    template:\n"
            f"      metadata:\n"
            f"        annotations: {ann(rjob)}\n"
            f"      spec:\n"
            f"        parallelism: 2\n"
            f"        completions: 2\n"
            f"        template:\n"
            f"          metadata:\n"
            f"            annotations:\n"
            + "".join(f"              {k}: {v!r}\n" for k, v in (pod or {"x": "y"}).items()) +
            "          spec:\n"
            "            containers: [{name: c, image: busybox}]\n")
    if kind == "JobSet":
        return (f"apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: js\n  annotations: {ann(js)}\n"
                f"spec:\n" + body)
    indented = "".join(f"    {line}\n" for line in body.splitlines())
    return (f"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: {kind}\nmetadata:\n  name: rt\nspec:\n"
            f"  mlPolicy: {{numNodes: 2}}\n  template:\n    metadata:\n      annotations: {ann(js)}\n    spec:\n" + indented)


RACK = "rack"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Both keys on the pod template: the Job has neither (no node selector), the pods have the
        # node-selector key (the webhook skips them): no exclusive placement at all.
        (jobset(pod={E: RACK, N: "true"}), [(18, 15, RULE)]),
        # Topology on the pod template, node-selector on the replicated job: the Job has the node-selector key
        # (its own template's) but no topology key; the pods have the topology key only: webhook affinities
        # instead of the node selector.
        (jobset(rjob={N: "true"}, pod={E: RACK}), [(18, 15, RULE)]),
        # Topology on the replicated job, node-selector on the pod template: the Job has only the topology key,
        # the pods carry the node-selector key: nothing.
        (jobset(rjob={E: RACK}, pod={N: "true"}), [(18, 15, RULE)]),
        # Topology on the JobSet, node-selector on the pod template: nothing either.
        (jobset(js={E: RACK}, pod={N: "true"}), [(18, 15, RULE)]),
        # The same split in a TrainingRuntime's JobSet template.
        (jobset(pod={E: RACK, N: "true"}, kind="TrainingRuntime"), [(22, 19, RULE)]),
        # Passing: the topology key alone (the pod webhook reads the pod's annotations either way) ...
        (jobset(pod={E: RACK}), []),
        # The JobSet's topology overrides the pod template's (labelAndAnnotateObject overlays the JobSet's keys
        # on the pod's own) but not the replicated job's: written on the pod template, "rack" is ignored.
        (jobset(js={E: "zone"}, pod={E: RACK}), [(18, 15, RULE)]),
        # ... the node-selector key alone (a flag without a topology: nothing either way) ...
        (jobset(pod={N: "true"}), []),
        # ... node-selector on the JobSet with the topology on the pod template: moving the topology to the
        # replicated job would not bring the JobSet's flag along (it is copied only with the JobSet's key).
        (jobset(js={N: "true"}, pod={E: RACK}), []),
        # ... and the keys where the controller reads them.
        (jobset(rjob={E: RACK, N: "true"}), []),
        (jobset(js={E: RACK, N: "true"}), []),
    ],
)
def test_exclusive_annotations_on_the_pod_template(tmp_path: Path, text: str, expected: list[tuple[int, int, str]]) -> None:
    assert [row for row in lints(tmp_path, text) if row[2] == RULE] == expected


def test_the_message_says_what_the_pods_get(tmp_path: Path) -> None:
    [finding] = [d for d in validate_text(tmp_path, jobset(rjob={N: "true"}, pod={E: RACK})) if d.rule == RULE]
    assert finding.message == (
        f'{E} on the pod template of replicated job "workers": the JobSet controller reads the exclusive-placement '
        "annotations from the Job (the replicated job's template or the JobSet), the pod webhook from the pod, so "
        "these pods get the pod webhook's leader/follower affinities on \"rack\" instead of the controller's node "
        "selector (alpha.jobset.sigs.k8s.io/namespaced-job) and toleration")
    assert finding.path == f"spec.replicatedJobs[0].template.spec.template.metadata.annotations[{E}]"


def _render_pods(tmp_path: Path, text: str) -> list[dict[str, Any]]:
    path = tmp_path / "js.yaml"
    path.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert run(["render", "--pods", str(path)]) == 0, err.getvalue()
    objects = [o for o in yaml.safe_load_all(out.getvalue()) if isinstance(o, dict)]
    for obj in objects:  # what differs between two renders of equal objects: identities and random names
        meta = obj.get("metadata", {})
        for key in ("uid", "resourceVersion", "creationTimestamp", "ownerReferences", "name"):
            meta.pop(key, None)
        for field in ("labels", "annotations"):
            meta[field] = {k: v for k, v in meta.get(field, {}).items() if "uid" not in k}
    return objects


def test_the_topology_key_alone_on_the_pod_template_loses_nothing(tmp_path: Path) -> None:
    """Evidence for the passing rows: the pods (every pod-side reader's input, after the pod webhook) are the
    same whether the topology key sits on the pod template or on the replicated job; the child Jobs differ in
    that one annotation, which only the node-selector strategy reads (jobset_controller.go:961-962)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    on_pods = _render_pods(tmp_path / "a", jobset(pod={E: RACK, "x": "y"}))
    on_rjob = _render_pods(tmp_path / "b", jobset(rjob={E: RACK}, pod={"x": "y"}))
    pods = lambda objects: sorted((o for o in objects if o["kind"] == "Pod"), key=repr)  # noqa: E731
    assert pods(on_pods) == pods(on_rjob)
    assert all(E in p["metadata"]["annotations"] for p in pods(on_pods))
    assert any("podAntiAffinity" in p["spec"].get("affinity", {}) for p in pods(on_pods))  # the leaders
    jobs = {name: [o for o in objects if o["kind"] == "Job"] for name, objects in (("pods", on_pods), ("rjob", on_rjob))}
    for from_pods, from_rjob in zip(jobs["pods"], jobs["rjob"], strict=True):
        assert E not in from_pods["metadata"]["annotations"] and E in from_rjob["metadata"]["annotations"]
        from_rjob["metadata"]["annotations"].pop(E)
        assert from_pods == from_rjob
