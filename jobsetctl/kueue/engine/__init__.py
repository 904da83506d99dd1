"""Kueue's controllers and scheduler on the virtual clock (issue 14, scheduling.md §2).

The modules follow Kueue's own split (kubernetes-sigs/kueue at the spec's commit ff69552):

* :mod:`.names` — condition types, reasons, labels and annotations, spelled as upstream spells them;
* :mod:`.amounts` — quantities as integers (milli-CPU, units), upstream's message formatting;
* :mod:`.objects` — typed views of ClusterQueue, Cohort, ResourceFlavor, LocalQueue, Topology;
* :mod:`.workload` — ``workload.Info``: a Workload's requests, usage, priority and conditions;
* :mod:`.quota` — the resource node tree (``pkg/cache/scheduler/resource_node.go``): quotas, usage,
  borrowing and lending limits, kept incrementally per ClusterQueue and Cohort;
* :mod:`.cache` — the scheduler cache: ClusterQueues, Cohorts, flavors and admitted workloads;
* :mod:`.queues` — the queue manager (``pkg/cache/queue``): per-ClusterQueue heaps, StrictFIFO and
  BestEffortFIFO, inadmissible workloads and their requeue;
* :mod:`.flavors` — the flavor assigner (``pkg/scheduler/flavorassigner``);
* :mod:`.preemption` and :mod:`.fairsharing` — classic, hierarchical and fair-sharing preemption;
* :mod:`.tas` — topology-aware scheduling (``tas_flavor_snapshot.go``);
* :mod:`.scheduler` — one scheduling cycle (``pkg/scheduler/scheduler.go``);
* :mod:`.controller` — the fake-cluster component: Workload controller, job admission and eviction,
  topology ungater, events.
"""
