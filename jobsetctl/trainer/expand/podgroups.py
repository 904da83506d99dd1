"""Gang scheduling: Coscheduling and Volcano PodGroups (trainer.md §3.10).

Both count every PodSet (initializers and launcher included, JobSet ``replicas`` ignored):
``minMember = Σ count`` and ``minResources[r] = Σ count × SinglePodRequests[r]`` (requests only, exact
sums). Both may be configured at once; then both PodGroups are emitted (quirk 7).
"""

from __future__ import annotations

from typing import Any

from jobsetctl.trainer import api
from jobsetctl.trainer.expand.model import as_dict, pod_spec_of
from jobsetctl.trainer.expand.resources import ResourceList
from jobsetctl.trainer.expand.state import State, owned_metadata


def enforce(state: State) -> None:
    name = state.trainjob.name
    if state.info.group_policy("coscheduling") is not None:
        state.info.pod_labels[api.COSCHEDULING_POD_GROUP_LABEL] = name
    if state.info.group_policy("volcano") is not None:
        state.info.pod_annotations[api.VOLCANO_GROUP_NAME_ANNOTATION] = name


def gang_totals(state: State) -> tuple[int, dict[str, str]]:
    members = 0
    total = ResourceList()
    for pod_set in state.info.pod_sets:
        members += pod_set.count
        total.add(pod_set.single_pod_requests, times=pod_set.count)
    return members, total.render()


def build(state: State) -> list[dict[str, Any]]:
    """Coscheduling PodGroup first, then Volcano's."""
    objects: list[dict[str, Any]] = []
    coscheduling = state.info.group_policy("coscheduling")
    volcano = state.info.group_policy("volcano")
    if coscheduling is None and volcano is None:
        return objects
    members, min_resources = gang_totals(state)
    name = state.trainjob.name
    if coscheduling is not None:
        timeout = coscheduling.get("scheduleTimeoutSeconds", api.DEFAULT_SCHEDULE_TIMEOUT_SECONDS)
        objects.append({
            "apiVersion": api.COSCHEDULING_API_VERSION,
            "kind": "PodGroup",
            "metadata": owned_metadata(state.trainjob, name),
            "spec": {"minMember": members, "minResources": min_resources, "scheduleTimeoutSeconds": timeout},
        })
    if volcano is not None:
        spec: dict[str, Any] = {"minMember": members, "minResources": min_resources}
        queue = state.info.annotations.get(api.VOLCANO_QUEUE_NAME_ANNOTATION)
        if queue is not None:
            spec["queue"] = queue
        priority = last_priority_class(state)
        if priority is not None:
            spec["priorityClassName"] = priority
        topology = volcano.get("networkTopology")
        if isinstance(topology, dict):
            spec["networkTopology"] = {
                "mode": topology.get("mode", api.VOLCANO_DEFAULT_TOPOLOGY_MODE),
                "highestTierAllowed": topology.get("highestTierAllowed", api.VOLCANO_DEFAULT_HIGHEST_TIER),
            }
        objects.append({
            "apiVersion": api.VOLCANO_API_VERSION,
            "kind": "PodGroup",
            "metadata": owned_metadata(state.trainjob, name),
            "spec": spec,
        })
    return objects


def last_priority_class(state: State) -> str | None:
    """The ``priorityClassName`` of the *last* replicated job whose pod template sets one."""
    found: str | None = None
    for job in state.info.replicated_jobs:
        value = as_dict(pod_spec_of(job)).get("priorityClassName")
        if isinstance(value, str):
            found = value
    return found
