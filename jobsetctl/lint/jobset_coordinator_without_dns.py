"""``jobset-coordinator-without-dns``: a coordinator whose address cannot resolve.

jobset.md §5 ("coordinator + enableDNSHostnames false: not validated; the label is written but the
DNS name will not resolve") and §1.4/§3.3: the controller labels every Job and pod with
``jobset.sigs.k8s.io/coordinator: <js>-<rj>-<jobIndex>-<podIndex>.<subdomain>``, a name that exists
only through the headless Service and the pods' ``subdomain``, both of which the controller creates
only while ``network.enableDNSHostnames`` is true (the default).
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api, names
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import path_string
from jobsetctl.lint.support import (
    CLUSTER_TRAINING_RUNTIME,
    JOBSET,
    TRAINING_RUNTIME,
    jobset_views,
    lint_doc,
    what,
)
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

PASSING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: coordinated
spec:
  coordinator: {replicatedJob: driver}
  replicatedJobs:
  - name: driver
    template:
      spec:
        completions: 1
        template:
          spec:
            containers: [{name: driver, image: busybox}]
"""

FAILING = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: coordinated
spec:
  coordinator: {replicatedJob: driver}
  network:
    enableDNSHostnames: false     # no Service, no pod subdomain
  replicatedJobs:
  - name: driver
    template:
      spec:
        completions: 1
        template:
          spec:
            containers: [{name: driver, image: busybox}]
"""

RULE = define(
    "jobset-coordinator-without-dns", Layer.LINT, Severity.WARNING,
    "spec.coordinator with network.enableDNSHostnames false: the coordinator address never resolves.",
    spec="jobset.md §5, §1.4",
    doc=lint_doc(
        "The coordinator label holds a pod DNS name, which only exists when the JobSet creates its "
        "headless Service and pod subdomains (enableDNSHostnames, true by default).",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME})
LOCAL_KINDS = KINDS  # looks at nothing but the object itself


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    for view in jobset_views(obj):
        coordinator = api.coordinator(view.obj)
        if coordinator is None or api.network(view.obj).get("enableDNSHostnames") is not False:
            continue
        job_index = api.as_int(coordinator.get("jobIndex")) or 0
        pod_index = api.as_int(coordinator.get("podIndex")) or 0
        endpoint = names.pod_dns_name(
            view.name, api.as_str(coordinator.get("replicatedJob")), job_index, pod_index, api.subdomain(view.obj)
        )
        at = view.at("spec", "network", "enableDNSHostnames")
        yield RULE.finding(
            f"{what(view)} names a coordinator, but network.enableDNSHostnames is false: the coordinator label "
            f"{api.COORDINATOR_KEY}={endpoint} is written, yet without the headless Service and pod subdomain "
            "that name never resolves",
            path=path_string(at), at=at,
            hint="remove enableDNSHostnames: false, or drop spec.coordinator",
        )
