"""Kueue (kubernetes-sigs/kueue @ff69552e, API ``kueue.x-k8s.io/v1beta2``, ``v1beta1`` still served): the API side.

* :mod:`.api` — group, versions, kinds, label and annotation keys, names Kueue fixes;
* :mod:`.features` — Kueue's feature gates and their defaults at the snapshot;
* :mod:`.config` — Kueue's ``Configuration`` (``--kueue-config``, a Scenario's ``spec.kueue.configuration``);
* :mod:`.versions` — every field that differs between ``v1beta1`` and ``v1beta2`` (conversion both ways);
* :mod:`.kind` — the admission handlers of the eight Kueue kinds (schemas under ``jobsetctl/schemas``);
* :mod:`.workload` — the Workload Kueue builds for a job (JobSet, TrainJob, Job): one function for
  render, simulate and validate;
* :mod:`.jobs` — Kueue's webhooks on the jobs it manages (defaulting: suspend, default LocalQueue and
  WorkloadPriorityClass; validation: queue-name, TAS annotations);
* :mod:`.tas` — the TAS podset annotations (``jobframework/tas.go``, ``tas_validation.go``).

The scheduler, queues, preemption and TAS placement, the Workload controller and the admission half of the
job reconciler (the simulation engine) are :mod:`.engine`, built on these modules; the fake cluster's job
reconciler (the creation half) is :mod:`jobsetctl.fakecluster.controllers.kueue_job`.
"""
