"""The priority a Kueue Workload gets (``ExtractPriority``: the ``kueue.x-k8s.io/priority-class`` label's
WorkloadPriorityClass, else the first pod set's ``priorityClassName``, else the global default PriorityClass,
else 0), and the default WorkloadPriorityClass label (gate WorkloadPriorityClassDefaulting), translated from
kubernetes-sigs/kueue @ ff69552e through jobsetctl's Workload builder (jobsetctl/kueue/workload.py
``build_workload``, what render and the fake cluster's Kueue reconciler call) and Kueue's job webhook:

* ``pkg/util/priority/priority_test.go``: ``TestGetPriorityFromPriorityClass`` (4/4, through the pod template's
  ``priorityClassName``), ``TestGetPriorityFromWorkloadPriorityClass`` (2/2, through the label),
  ``TestDefaultWorkloadPriorityClassExist`` (3/3, through the webhook's defaulting);
* ``pkg/controller/jobframework/workload_priority_test.go``
  ``TestExtractPriorityReportsMissingWorkloadPriorityClass`` (4/5, through the fake cluster's reconciler: the
  Workload, the event).

Left out:

* ``TestExtractPriorityReportsMissingWorkloadPriorityClass`` "a lookup that failed for another reason": a
  Forbidden error from an interceptor; offline lookups do not fail.
* ``TestUpdateWorkloadPriority`` (workload_priority_test.go): a WorkloadPriorityClass edited while the
  controller writes a job's Workloads, with write conflicts injected by interceptors; nothing edits objects
  between reconciles in jobsetctl's inputs.
* ``priority_test.go`` ``TestPriority`` (a Workload's ``spec.priority``, 0 when nil), ``TestPriorityBoost``,
  ``TestParseEffectivePriority``, ``TestEffectivePriority``: the scheduler's ordering of Workloads, which is the
  simulation engine's (issue 14, another branch); jobsetctl's Workload webhook check of the priority-boost
  annotation is tests/kueue/test_webhook_workload.py's.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from jobsetctl.admission.chain import admit
from jobsetctl.kinds.index import ObjectIndex
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kueue.workload import build_workload
from tests.kueue.harness import V137, kube_events, kueue_config, make_cluster, submit, workloads

WPC_LABEL = "kueue.x-k8s.io/priority-class"


def job(priority_class_name: str | None = None, wpc: str | None = None, queue: str | None = "q") -> dict[str, Any]:
    """testingjob.MakeJob("job", "ns") with an optional WorkloadPriorityClass label and pod priorityClassName."""
    labels = {**({"kueue.x-k8s.io/queue-name": queue} if queue else {}), **({WPC_LABEL: wpc} if wpc else {})}
    pod: dict[str, Any] = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "pause"}]}
    if priority_class_name:
        pod["priorityClassName"] = priority_class_name
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job", "namespace": "ns", "labels": labels},
            "spec": {"parallelism": 1, "suspend": True, "template": {"spec": pod}}}


def priority_class(name: str, value: int, global_default: bool = False) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, "globalDefault": global_default}


def workload_priority_class(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass", "metadata": {"name": name},
            "value": value}


def build(obj: dict[str, Any], cluster: list[dict[str, Any]]) -> Any:
    ctx = AdmissionContext(V137, parse_feature_gates(None, V137), cluster=ObjectIndex(cluster), kueue=kueue_config())
    return build_workload(obj, ctx)


POD_REF = {"group": "scheduling.k8s.io", "kind": "PriorityClass"}
WPC_REF = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass"}


# ---- priority_test.go TestGetPriorityFromPriorityClass -------------------------------------------------------------
@pytest.mark.parametrize(("classes", "name", "ref", "value", "error"), [
    pytest.param([priority_class("test", 50)], "test", {**POD_REF, "name": "test"}, 50, None,
                 id="priorityClass is specified and it exists"),
    pytest.param([], "test", None, None, 'priorityclasses.scheduling.k8s.io "test" not found',
                 id="priorityClass is specified and it does not exist"),
    pytest.param([priority_class("globalDefault", 40, True)], None, {**POD_REF, "name": "globalDefault"}, 40, None,
                 id="priorityClass is unspecified and one global default exists"),
    # A creation race can leave several (the API server refuses a second one afterwards): the lowest value wins.
    pytest.param([priority_class("globalDefault1", 90, True), priority_class("globalDefault2", 20, True),
                  priority_class("globalDefault3", 50, True)], None, {**POD_REF, "name": "globalDefault2"}, 20, None,
                 id="priorityClass is unspecified and multiple global defaults exist"),
])
def test_priority_from_priority_class(classes: list[dict[str, Any]], name: str | None, ref: dict[str, str] | None,
                                      value: int | None, error: str | None) -> None:
    built = build(job(priority_class_name=name), classes)
    assert built.error == error
    if error is None:
        assert built.workload["spec"]["priorityClassRef"] == ref
        assert built.workload["spec"]["priority"] == value
    else:
        assert built.workload is None and built.event is None  # no event for a PriorityClass (ExtractPriority)


def test_no_priority_class_and_no_global_default_is_priority_zero() -> None:
    # getDefaultPriority: no default class, no priorityClassRef, constants.DefaultPriority (0).
    built = build(job(), [])
    assert "priorityClassRef" not in built.workload["spec"] and built.workload["spec"]["priority"] == 0


# ---- priority_test.go TestGetPriorityFromWorkloadPriorityClass -----------------------------------------------------
@pytest.mark.parametrize(("classes", "ref", "value", "error"), [
    pytest.param([workload_priority_class("test", 50)], {**WPC_REF, "name": "test"}, 50, None,
                 id="workloadPriorityClass is specified and it exists"),
    pytest.param([], None, None, 'workloadpriorityclasses.kueue.x-k8s.io "test" not found',
                 id="workloadPriorityClass is specified and it does not exist"),
])
def test_priority_from_workload_priority_class(classes: list[dict[str, Any]], ref: dict[str, str] | None,
                                               value: int | None, error: str | None) -> None:
    built = build(job(wpc="test"), classes)
    assert built.error == error
    if error is None:
        assert built.workload["spec"]["priorityClassRef"] == ref and built.workload["spec"]["priority"] == value


def test_workload_priority_class_wins_over_the_pod_priority_class() -> None:
    # ExtractPriority looks at the label first; the pod's class is not read (not even checked to exist).
    built = build(job(priority_class_name="missing-pc", wpc="test"), [workload_priority_class("test", 50)])
    assert built.workload["spec"]["priorityClassRef"] == {**WPC_REF, "name": "test"}
    assert built.workload["spec"]["priority"] == 50


# ---- priority_test.go TestDefaultWorkloadPriorityClassExist, through ApplyDefaultWorkloadPriorityClass -------------
@pytest.mark.parametrize(("classes", "labelled"), [
    pytest.param([workload_priority_class("default", 100)], True, id="default workloadPriorityClass exists"),
    pytest.param([workload_priority_class("other", 50)], False, id="default workloadPriorityClass does not exist"),
    pytest.param([], False, id="no workloadPriorityClasses exist"),
])
def test_default_workload_priority_class(classes: list[dict[str, Any]], labelled: bool) -> None:
    ctx = AdmissionContext(V137, parse_feature_gates(None, V137), cluster=ObjectIndex(classes), kueue=kueue_config())
    defaulted = admit(job(), ctx).obj
    assert defaulted is not None
    assert defaulted["metadata"]["labels"].get(WPC_LABEL) == ("default" if labelled else None)


# ---- workload_priority_test.go TestExtractPriorityReportsMissingWorkloadPriorityClass ------------------------------
def _yaml(obj: dict[str, Any]) -> str:
    return yaml.safe_dump(obj)


@pytest.mark.parametrize(("obj", "objects", "created", "event"), [
    pytest.param(job(wpc="missing"), [], False,
                 ("Job", "Warning", "WorkloadPriorityClassNotFound", 'WorkloadPriorityClass "missing" not found'),
                 id="an explicitly referenced class that does not exist"),
    pytest.param(job(wpc="present"), [workload_priority_class("present", 10)], True, None,
                 id="an explicitly referenced class that exists"),
    pytest.param(job(), [], True, None, id="no class referenced at all"),
    # scheduling.k8s.io is a different resource and keeps its own handling: the reconcile fails, no event.
    pytest.param(job(priority_class_name="missing-pc"), [], False, None,
                 id="a pod template naming a PriorityClass that does not exist"),
])
def test_extract_priority_reports_missing_workload_priority_class(
        obj: dict[str, Any], objects: list[dict[str, Any]], created: bool, event: tuple[str, str, str, str] | None) -> None:
    cluster = make_cluster()
    submit(cluster, *[_yaml(o) for o in objects], "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n", _yaml(obj))
    assert len(workloads(cluster)) == (1 if created else 0)
    assert [e for e in kube_events(cluster) if e[1] == "Warning"] == ([event] if event else [])
