"""``kueue-topology-unfit``: a queued job's required topology that no domain of its TAS flavor can hold.

scheduling.md §2.5 (pkg/cache/scheduler/tas_flavor_snapshot.go ``findLevelWithFitDomains``,
``notFitMessage``): with ``kueue.x-k8s.io/podset-required-topology``, all pods (or slices) of a podset must
fit in one domain of that level; when the largest domain cannot hold them even on empty nodes, the
Workload stays pending with ``topology "t" allows to fit only N out of M pod(s)`` for ever. Judged only
when Nodes are among the inputs or the context (``--context nodes.yaml``); the capacity model is in
:mod:`jobsetctl.kueue.fit`.
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import path_string
from jobsetctl.kueue import fit
from jobsetctl.lint.support import JOB, JOBSET, TRAINJOB, lint_doc, memo
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

_SETUP = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata:
  name: gpu-topology
spec:
  levels:
  - nodeLabel: topology.example.com/rack
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: tas-flavor
spec:
  nodeLabels: {example.com/pool: training}
  topologyName: gpu-topology
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: research
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: tas-flavor
      resources:
      - name: cpu
        nominalQuota: 256
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: team-a
spec:
  clusterQueue: research
"""

_JOBSET = """\
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: pretrain
  labels:
    kueue.x-k8s.io/queue-name: team-a
spec:
  replicatedJobs:
  - name: workers
    replicas: 1
    template:
      spec:
        parallelism: 6
        completions: 6
        template:
          metadata:
            annotations:
              kueue.x-k8s.io/podset-{mode}-topology: topology.example.com/rack
          spec:
            containers:
            - name: trainer
              image: registry.example.com/trainer:1.0
              resources:
                requests: {{cpu: "8"}}
"""

_NODES = "".join(f"""\
---
apiVersion: v1
kind: Node
metadata:
  name: node-{rack}{host}
  labels: {{example.com/pool: training, topology.example.com/rack: rack-{rack}, kubernetes.io/hostname: node-{rack}{host}}}
status:
  allocatable: {{cpu: "8", memory: 64Gi, pods: "110"}}
""" for rack in "ab" for host in (1, 2))

#: Without Nodes the lint does not judge; a preferred topology spreads over racks.
PASSING = _SETUP + _JOBSET.format(mode="preferred")
#: Two racks of two 8-CPU nodes: a rack holds 2 of the 6 pods.
FAILING = _SETUP + _JOBSET.format(mode="required") + _NODES

RULE = define(
    "kueue-topology-unfit", Layer.LINT, Severity.WARNING,
    "A queued job's required topology that no domain of its TAS flavor can hold, given the Nodes.",
    spec="scheduling.md §2.5 (tas_flavor_snapshot.go findLevelWithFitDomains, notFitMessage)",
    doc=lint_doc(
        "A podset with a required topology is admitted only when one domain of that level holds all its "
        "pods (or slices); with the Nodes at hand, a job larger than the largest domain waits for ever.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({JOBSET, TRAINJOB, JOB})


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    config = ctx.kueue
    if config is None or not config.gate("TopologyAwareScheduling"):
        return
    nodes = memo(ctx, "kueue-nodes", lambda cluster: cluster.list("", "Node"))
    if not nodes:
        return
    queued = fit.queued(obj, ctx)
    if queued is None:
        return
    for shortfall in fit.topology_shortfalls(queued, nodes):
        at = shortfall.view.at
        yield RULE.finding(
            fit.NO_FLAVOR.format(pod_set=shortfall.view.name, reasons=shortfall.message),
            path=path_string(at), at=at,
            hint=f"flavor {shortfall.flavor}: {shortfall.nodes} node(s) among the inputs and the context, "
                 f"counted empty, per {shortfall.level}; the Workload stays pending for ever. "
                 f"Use podset-preferred-topology, a higher level, or fewer pods",
        )


