"""CREATE checks of ``volumeClaimPolicies`` (jobset.md §2.2 #21-#26, §1.6, §3.4).

#21-#25 need only the JobSet. #26 looks for an existing PVC ``<template>-<jobset>`` in the JobSet's
namespace through the cluster view: offline, "existing PVCs" are the PersistentVolumeClaim objects
among the inputs (a PVC manifest without a namespace counts as being in the default namespace).

Not mirrored: #26c (the lookup failing with something other than NotFound) cannot happen with an
in-memory view.

Upstream's paths say ``template[t]`` where the field is ``templates[t]`` (a quirk we keep in the
reported path); positions point at the real field, ``templates[t].metadata.name``.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.jobset import api, names
from jobsetctl.jobset.webhook_rules import (
    VCP_EXISTING_PVC_RETENTION,
    VCP_EXISTING_PVC_SPEC,
    VCP_PVC_NAME_LENGTH,
    VCP_TEMPLATE_NAME,
    VCP_TEMPLATE_NAME_UNIQUE,
    VCP_VOLUME_CONFLICT,
    VCP_VOLUME_MOUNT,
    dict_items,
    field_error,
    unique_messages,
)
from jobsetctl.kinds.interface import AdmissionContext, ClusterView, Object
from jobsetctl.kube import field
from jobsetctl.kube.field import Path, path_string
from jobsetctl.kube.names import is_dns1123_subdomain
from jobsetctl.kube.quantity import QuantityError, parse_quantity

PVC_GROUP = ""
PVC_KIND = "PersistentVolumeClaim"


def _template_path(policy_index: int, template_index: int) -> str:
    """Upstream's path for a template: ``template``, not ``templates`` (jobset.md §2.2 #21)."""
    return f"spec.volumeClaimPolicies[{policy_index}].template[{template_index}]"


def _template_at(policy_index: int, template_index: int) -> Path:
    return ("spec", "volumeClaimPolicies", policy_index, "templates", template_index)


def check_volume_claim_policies(js: dict[str, Any], jobset_name: str) -> list[Finding]:
    """#21-#25, template by template across all policies."""
    findings: list[Finding] = []
    claim_names: set[str] = set()
    for policy_index, policy in dict_items(api.volume_claim_policies(js)):
        for template_index, template in dict_items(api.claim_templates(policy)):
            template_name = api.template_name(template)
            path = _template_path(policy_index, template_index) + ".name"
            at: Path = (*_template_at(policy_index, template_index), "metadata", "name")
            if template_name in claim_names:
                message = field.invalid(path, template_name, "names must be unique for VolumeClaimPolicies template")
                findings.append(field_error(VCP_TEMPLATE_NAME_UNIQUE, message, path, at))
            for detail in is_dns1123_subdomain(template_name):
                findings.append(field_error(VCP_TEMPLATE_NAME, field.invalid(path, template_name, detail), path, at))
            # Go's len() counts bytes.
            if len(names.pvc_name(template_name, jobset_name).encode()) > api.MAX_VOLUME_CLAIM_NAME_LENGTH:
                message = field.invalid(path, template_name, "VolumeClaimPolicies template name is too long")
                findings.append(field_error(VCP_PVC_NAME_LENGTH, message, path, at))
            findings += _check_mounts(js, template_name)
            claim_names.add(template_name)
    return findings


def _check_mounts(js: dict[str, Any], template_name: str) -> list[Finding]:
    """#24 (no pod volume may take the template's name) and #25 (some container mounts it)."""
    findings: list[Finding] = []
    mounted = False
    for rjob_index, rjob in api.enumerate_replicated_jobs(js):
        for volume_index, volume in dict_items(api.pod_spec(rjob).get("volumes")):
            if api.as_str(volume.get("name")) == template_name:
                at: Path = (
                    "spec", "replicatedJobs", rjob_index, "template", "spec", "template", "spec",
                    "volumes", volume_index, "name",
                )
                message = field.invalid(
                    path_string(at), template_name,
                    f"volume name conflicts with VolumeClaimPolicy template name: {template_name}",
                )
                findings.append(field_error(VCP_VOLUME_CONFLICT, message, path_string(at)))
        if not mounted:
            mounted = any(
                template_name in api.volume_mount_names(container)
                for container in (*api.init_containers(rjob), *api.containers(rjob))
            )
    if not mounted:
        # The bad value is the whole replicatedJobs list (Go prints it with %#v; we print JSON). The
        # position is that upstream path too (issue #13); the message names the template.
        message = field.invalid(
            "spec.replicatedJobs",
            api.as_list(api.spec(js).get("replicatedJobs")),
            f"replicatedJob containers don't have a matching volumeMount: {template_name} from VolumeClaimPolicies",
        )
        findings.append(field_error(VCP_VOLUME_MOUNT, message, "spec.replicatedJobs", ("spec", "replicatedJobs")))
    return findings


def validate_existing_pvcs(js: dict[str, Any], ctx: AdmissionContext) -> list[Finding]:
    """#26 and #26b: a PVC ``<template>-<jobset>`` that already exists must match the template's spec
    exactly, and the policy must retain it."""
    cluster = ctx.cluster
    if cluster is None:
        return []
    jobset_name = names.jobset_name_for_validation(js)
    namespace = api.namespace(js) or ctx.default_namespace
    findings: list[Finding] = []
    for policy_index, policy in dict_items(api.volume_claim_policies(js)):
        for template_index, template in dict_items(api.claim_templates(policy)):
            pvc = names.pvc_name(api.template_name(template), jobset_name)
            existing = _lookup_pvc(cluster, namespace, pvc, ctx.default_namespace)
            if existing is None:
                continue
            if not _pvc_specs_equal(existing.get("spec"), template.get("spec")):
                path = _template_path(policy_index, template_index) + ".spec"
                message = field.invalid(
                    path, api.as_dict(template.get("spec")),
                    f"spec does not match existing PVC {pvc} in namespace {namespace}",
                )
                at: Path = (*_template_at(policy_index, template_index), "spec")
                findings.append(field_error(VCP_EXISTING_PVC_SPEC, message, path, at))
            retention = policy.get("retentionPolicy")
            if isinstance(retention, dict):
                when_deleted = retention.get("whenDeleted")
                if when_deleted != api.RetentionPolicy.RETAIN:
                    at = ("spec", "volumeClaimPolicies", policy_index, "retentionPolicy", "whenDeleted")
                    message = field.invalid(path_string(at), when_deleted, "retentionPolicy must be retain when PVC exists")
                    findings.append(field_error(VCP_EXISTING_PVC_RETENTION, message, path_string(at)))
    return unique_messages(findings)


def _lookup_pvc(cluster: ClusterView, namespace: str, pvc: str, default_namespace: str) -> Object | None:
    found = cluster.get(PVC_GROUP, PVC_KIND, namespace, pvc)
    if found is None and namespace == default_namespace:
        # An input manifest without metadata.namespace lands in the default namespace when applied.
        found = cluster.get(PVC_GROUP, PVC_KIND, "", pvc)
    return found


def _pvc_specs_equal(existing: Any, template: Any) -> bool:
    """Upstream compares with ``reflect.DeepEqual`` on the decoded specs: absent and null are the same
    (Go zero values), an empty list or map differs from an absent one. Quantities are compared by
    value (``1Gi`` == ``1024Mi``); whether Go's decoded Quantity structs compare equal for different
    spellings of one value is not confirmed (jobset.md does not say)."""
    return _strict_form(existing if existing is not None else {}) == _strict_form(
        template if template is not None else {}
    )


_QUANTITY_MAPS = frozenset({"requests", "limits"})


def _strict_form(value: Any, parent_key: str = "") -> Any:
    if isinstance(value, dict):
        return {
            key: _quantity_or_value(item) if parent_key in _QUANTITY_MAPS else _strict_form(item, key)
            for key, item in value.items()
            if item is not None
        }
    if isinstance(value, list):
        return [_strict_form(item) for item in value]
    return value


def _quantity_or_value(value: Any) -> Any:
    try:
        return ("quantity", parse_quantity(value))
    except (QuantityError, TypeError, ValueError):
        return value
