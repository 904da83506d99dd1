"""``trainjob-master-address-unresolvable``: a rendezvous address no pod answers to.

trainer.md §3.16 #2 (and §3.8.2, §3.8.5, §3.8.6): the Torch, JAX and XGBoost plugins point every node
at ``<trainjob>-node-0-0.<trainjob>`` (``PET_MASTER_ADDR``, ``JAX_COORDINATOR_ADDRESS``,
``DMLC_TRACKER_URI``): the replicated job name ``node`` is hard-coded and ``network.subdomain`` is
ignored. The first pod's real DNS name is ``<trainjob>-<job>-0-0.<subdomain or trainjob>``, and it
exists only with ``network.enableDNSHostnames`` (jobset.md §3.3). A runtime whose trainer job is not
named ``node``, that sets another subdomain, or that turns DNS hostnames off leaves a multi-node
TrainJob's nodes waiting for a rendezvous host that never resolves. (MPI honours ``network.subdomain``
and is not affected.)
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api, names
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import go_quote, path_string
from jobsetctl.kube.podspec import env_value
from jobsetctl.lint.support import RUNTIME_REF_NAME, TRAINJOB, lint_doc, plan_of, rjob_pods, runtime_label
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define
from jobsetctl.trainer import api as trainer_api

_FILES = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: torch-net
spec:
  mlPolicy: {{numNodes: 2, torch: {{}}}}
  template:
    spec:
{network}      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers: [{{name: node, image: pytorch/pytorch}}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: job
spec:
  runtimeRef: {{kind: TrainingRuntime, name: torch-net}}
  trainer:
    numNodes: 2
    command: [torchrun, train.py]
"""

PASSING = _FILES.format(network="")
FAILING = _FILES.format(network="      network: {subdomain: training}   # pods are job-node-0-0.training\n")

RULE = define(
    "trainjob-master-address-unresolvable", Layer.LINT, Severity.WARNING,
    "The rendezvous address Trainer injects (<trainjob>-node-0-0.<trainjob>) is not the DNS name of any pod.",
    spec="trainer.md §3.16 #2, §3.8.2; jobset.md §3.3",
    doc=lint_doc(
        "Torch, JAX and XGBoost always point at <trainjob>-node-0-0.<trainjob>. A runtime whose trainer job "
        "has another name, that sets network.subdomain, or that disables DNS hostnames breaks multi-node "
        "rendezvous.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({TRAINJOB})

#: Env var → how its host part is read.
_ADDRESS_VARS = (
    (trainer_api.TORCH_ENV_MASTER_ADDR, lambda value: value),
    (trainer_api.JAX_ENV_COORDINATOR_ADDRESS, lambda value: value.rsplit(":", 1)[0]),
    (trainer_api.XGBOOST_ENV_TRACKER_URI, lambda value: value),
)


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    plan = plan_of(obj, ctx)
    if plan is None or plan.jobset is None or plan.expansion.info is None or not plan.expansion.applied:
        return
    info = plan.expansion.info
    trainer_set = info.pod_set_by_ancestor(trainer_api.ANCESTOR_TRAINER)
    container = info.trainer_container()
    if trainer_set is None or trainer_set.count <= 1 or container is None:
        return  # a single node needs no rendezvous with another host
    variable, host = next(
        ((name, read(value)) for name, read in _ADDRESS_VARS if (value := env_value(container, name))),
        (None, None),
    )
    if variable is None or host is None:
        return
    jobset = plan.jobset
    js_name = api.name(jobset)
    subdomain = api.subdomain(jobset)
    dns = api.enable_dns_hostnames(jobset)
    hosts = {
        names.pod_dns_name(js_name, api.rjob_name(rjob), 0, 0, subdomain)
        for rjob in api.replicated_jobs(jobset)
        if dns and api.is_indexed(rjob) and rjob_pods(rjob) > 0
    }
    if host in hosts:
        return
    if not dns:
        reason = "the runtime sets network.enableDNSHostnames: false, so no pod has a DNS name"
    elif subdomain and subdomain != js_name:
        reason = (f"the runtime sets network.subdomain {go_quote(subdomain)}, so the first pod is "
                  f"{go_quote(names.pod_dns_name(js_name, trainer_set.name, 0, 0, subdomain))}")
    else:
        reason = (f"the trainer replicated job is named {go_quote(trainer_set.name)}, so its first pod is "
                  f"{go_quote(names.pod_dns_name(js_name, trainer_set.name, 0, 0, subdomain))}")
    yield RULE.finding(
        f"{variable} is {go_quote(host)}, which no pod of this TrainJob answers to: {reason} "
        f"({runtime_label(plan)}); the {trainer_set.count} nodes never meet",
        path=path_string(RUNTIME_REF_NAME), at=RUNTIME_REF_NAME,
        hint="name the trainer replicated job node and keep the default network settings",
    )
