"""Names the JobSet controller derives from a JobSet: the one place their formats live.

The validating webhook checks these names (jobset.md §2.2 #7, #8, #20, #23 and the arithmetic of
§2.3); the controller, the Trainer expansion and the simulator create objects with them (§3.1-§3.4,
trainer.md §2.7, §3.13b). All of them import from here, so a format can never drift.

Indices are formatted like Go's ``%d`` / ``strconv.Itoa``: ``replicas: 0`` makes the largest job
index ``-1``, so the longest job name of ``js``/``rj`` is ``js-rj--1`` (jobset.md §2.3).
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from jobsetctl.jobset import api

#: apiserver ``SimpleNameGenerator``: at most 58 chars of generateName, then 5 random chars (§2.2).
GENERATE_NAME_BASE_MAX: Final = 58
GENERATED_SUFFIX_LENGTH: Final = 5
#: The suffix we use for a simulated generateName. The real one is random; these are the first five
#: letters of apimachinery's random alphabet ("bcdfghjklmnpqrstvwxz2456789"), so the result is a name
#: the API server could really have produced. Only its length matters to validation.
SIMULATED_SUFFIX: Final = "bcdfg"
#: The stand-in for the Job controller's random pod-name suffix in the pod-name check (§2.2 #8).
POD_NAME_VALIDATION_SUFFIX: Final = "-abcde"
#: The format of defaulted failure-policy rule names; ``<i>`` is the rule's list index (§1.1 step 2).
DEFAULT_RULE_NAME_PREFIX: Final = "failurePolicyRule"


def generated_name(generate_name: str, suffix: str = SIMULATED_SUFFIX) -> str:
    """What the API server makes of ``metadata.generateName`` (truncated to 58 chars, plus 5 more).

    The simulator may pass its own 5-character ``suffix`` to get distinct names.
    """
    return generate_name[:GENERATE_NAME_BASE_MAX] + suffix


def jobset_name_for_validation(js: Any) -> str:
    """``metadata.name``, else a simulated generateName result, else ``""`` (upstream
    ``getJobSetNameForValidation``; jobset.md §2.2)."""
    name = api.name(js)
    if name:
        return name
    generate = api.generate_name(js)
    return generated_name(generate) if generate else ""


def job_name(jobset_name: str, rjob_name: str, job_index: int) -> str:
    """Child Job ``<jobset>-<replicatedJob>-<jobIndex>`` (jobset.md §3.1)."""
    return f"{jobset_name}-{rjob_name}-{job_index}"


def longest_job_name(jobset_name: str, rjob_name: str, replicas: int) -> str:
    """The Job name with the largest index, ``replicas - 1`` (``-1`` for zero replicas; §2.3)."""
    return job_name(jobset_name, rjob_name, replicas - 1)


def pod_hostname(jobset_name: str, rjob_name: str, job_index: int | str, pod_index: int | str) -> str:
    """``<jobset>-<replicatedJob>-<jobIndex>-<podIndex>``: an Indexed pod's hostname, and the stem of
    its name (upstream ``GenPodName``; the leader pod of exclusive placement has pod index 0)."""
    return f"{jobset_name}-{rjob_name}-{job_index}-{pod_index}"


def longest_pod_name_for_validation(jobset_name: str, rjob_name: str, replicas: int, completions: int) -> str:
    """The pod name the webhook validates: the largest indices plus ``-abcde`` (jobset.md §2.2 #8)."""
    return pod_hostname(jobset_name, rjob_name, replicas - 1, completions - 1) + POD_NAME_VALIDATION_SUFFIX


def headless_service_name(jobset_name: str, subdomain: str) -> str:
    """The headless Service, which is also the pods' subdomain: ``network.subdomain`` or the JobSet
    name (upstream ``GetSubdomain``; jobset.md §1.4, §3.3)."""
    return subdomain or jobset_name


def pod_dns_name(jobset_name: str, rjob_name: str, job_index: int, pod_index: int, subdomain: str) -> str:
    """``<jobset>-<rj>-<jobIdx>-<podIdx>.<subdomain or jobset>`` (jobset.md §3.3)."""
    service = headless_service_name(jobset_name, subdomain)
    return f"{pod_hostname(jobset_name, rjob_name, job_index, pod_index)}.{service}"


def coordinator_endpoint(jobset_name: str, rjob_name: str, job_index: int, pod_index: int, subdomain: str) -> str:
    """The ``jobset.sigs.k8s.io/coordinator`` label value: the coordinator pod's DNS name (§3.2)."""
    return pod_dns_name(jobset_name, rjob_name, job_index, pod_index, subdomain)


def coordinator_endpoint_of(js: Any, jobset_name: str | None = None) -> str | None:
    """The coordinator endpoint of a JobSet manifest, or None without ``spec.coordinator``.

    ``jobset_name`` overrides ``metadata.name`` (the webhook passes the simulated generateName).
    """
    coordinator = api.coordinator(js)
    if coordinator is None:
        return None
    return coordinator_endpoint(
        api.name(js) if jobset_name is None else jobset_name,
        api.as_str(coordinator.get("replicatedJob")),
        api.as_int(coordinator.get("jobIndex")) or 0,
        api.as_int(coordinator.get("podIndex")) or 0,
        api.subdomain(js),
    )


def pvc_name(template_name: str, jobset_name: str) -> str:
    """A volumeClaimPolicies PVC: ``<template>-<jobset>`` (upstream ``GeneratePVCName``; §3.4)."""
    return f"{template_name}-{jobset_name}"


def namespaced_job_value(namespace: str, job_name: str) -> str:
    """The node-selector-strategy label value ``<namespace>_<jobName>`` (underscore: §3.7)."""
    return f"{namespace}_{job_name}"


def job_key(namespace: str, job_name: str) -> str:
    """``jobset.sigs.k8s.io/job-key``: lowercase hex SHA-1 of ``<namespace>/<jobName>`` (§3.2; the Go
    comment says SHA-256 but the code is SHA-1, jobset.md §6 #9)."""
    return hashlib.sha1(f"{namespace}/{job_name}".encode(), usedforsecurity=False).hexdigest()


def default_rule_name(index: int) -> str:
    """``failurePolicyRule<i>``, ``<i>`` being the rule's index in the list (jobset.md §1.1 step 2)."""
    return f"{DEFAULT_RULE_NAME_PREFIX}{index}"
