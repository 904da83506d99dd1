"""The Kueue engine's reaction to its configuration objects (ClusterQueue, LocalQueue, Cohort,
ResourceFlavor, Topology, AdmissionCheck) and to Namespaces: the cache and queues brought in step, then the
inadmissible workloads retried as Kueue's controllers do on these events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jobsetctl.kueue.engine.conditions import is_admissible
from jobsetctl.kueue.engine.objects import local_queue_spec, topology_levels

if TYPE_CHECKING:
    from jobsetctl.kueue.engine.core import Engine

Object = dict[str, Any]


def on_configuration(engine: Engine, kind: str, obj: Object | None, namespace: str, name: str) -> bool:
    """A Kueue configuration object (ClusterQueue, LocalQueue, Cohort, ResourceFlavor, Topology,
    AdmissionCheck) added, updated (``obj``) or deleted (``None``); False for any other kind."""
    if kind == "LocalQueue":
        on_local_queue(engine, obj, f"{namespace}/{name}")
        return True
    handler = {
        "ClusterQueue": on_cluster_queue, "Cohort": on_cohort, "ResourceFlavor": on_flavor,
        "Topology": on_topology, "AdmissionCheck": on_admission_check,
    }.get(kind)
    if handler is None:
        return False
    handler(engine, obj, name)
    return True


def _requeue_all(engine: Engine, *, flavors_changed: bool = False) -> None:
    """What every cluster-wide configuration change ends with: the TAS caches told when a flavor or topology
    changed, every inadmissible workload retried, a scheduling cycle asked for."""
    if flavors_changed and engine.tas is not None:
        engine.tas.on_flavors_changed()
    engine.request_requeue_all()
    engine.kick()


def on_cluster_queue(engine: Engine, obj: Object | None, name: str) -> None:
    if obj is None:
        engine.cache.delete_cluster_queue(name)
        engine.queues.delete_cluster_queue(name)
    else:
        state = engine.cache.add_or_update_cluster_queue(obj)
        engine.queues.add_cluster_queue(state.name, state.spec.queueing_strategy, state.spec.namespace_selector)
        if engine.tas is not None:
            engine.tas.on_cluster_queue(state)
    engine.request_requeue([name])
    engine.kick()


def on_cohort(engine: Engine, obj: Object | None, name: str) -> None:
    if obj is None:
        engine.cache.delete_cohort(name)
    else:
        engine.cache.add_or_update_cohort(obj)
    _requeue_all(engine)


def on_flavor(engine: Engine, obj: Object | None, name: str) -> None:
    if obj is None:
        engine.cache.delete_flavor(name)
    else:
        engine.cache.add_or_update_flavor(obj)
    _requeue_all(engine, flavors_changed=True)


def on_topology(engine: Engine, obj: Object | None, name: str) -> None:
    if obj is None:
        engine.cache.delete_topology(name)
    else:
        engine.cache.add_or_update_topology(name, topology_levels(obj))
    _requeue_all(engine, flavors_changed=True)


def on_admission_check(engine: Engine, obj: Object | None, name: str) -> None:
    if obj is None:
        engine.cache.delete_admission_check(name)
    else:
        engine.cache.add_or_update_admission_check(obj)
    _requeue_all(engine)


def on_local_queue(engine: Engine, obj: Object | None, key: str) -> None:
    if obj is None:
        engine.cache.delete_local_queue(key)
        engine.queues.delete_local_queue(key)
        return
    spec = local_queue_spec(obj)
    engine.cache.add_or_update_local_queue(spec)
    engine.queues.add_or_update_local_queue(spec.key, spec.cluster_queue)
    # Workloads created before their LocalQueue enter the queues now (addLocalQueueLocked).
    for info in list(engine.infos.values()):
        if info.namespace == spec.namespace and info.queue_name == spec.name and is_admissible(info.obj):
            engine.queues.add_or_update_workload(info)
    engine.kick()


def on_namespace(engine: Engine, obj: Object | None, name: str) -> None:
    if obj is None:
        engine.namespaces.pop(name, None)
    else:
        labels = (obj.get("metadata") or {}).get("labels")
        engine.namespaces[name] = dict(labels) if isinstance(labels, dict) else {}
    engine.request_requeue_all()
