"""``Job.spec.scheduling`` (Kubernetes 1.37, KEP-5547 second alpha + KEP-6089; scheduling.md §1.5).

Field names follow the 1.37 JSON Schema in kubernetes-validate (``JobSchedulingConfiguration``:
``schedulingPolicy``, ``schedulingConstraints``, ``disruptionMode``, ``resourceClaims``), which
scheduling.md names the authority over the KEP spellings (§6 U2).

Rules (scheduling.md §1.5; the Kueue KEP draft that lists the upstream behaviour agrees):

* with ``WorkloadWithJob`` off the API server discards ``spec.scheduling`` without an error;
* ``schedulingPolicy`` is exactly one of ``basic``/``gang``; ``gang.minCount`` is optional, ≥ 1 when
  set, and may not exceed ``parallelism`` (the exact upstream wording was not found: [UNCONFIRMED]);
* ``disruptionMode.all`` together with ``basic`` (or no policy, which means basic) is rejected;
* on update every field is immutable (including adding or removing it) except ``gang.minCount``.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import AdmissionContext
from jobsetctl.kube import field as kfield
from jobsetctl.kube.field import Path, too_many
from jobsetctl.kube.job_rules import GATED_FIELD, IMMUTABLE, SCHEDULING, SCHEDULING_RULES
from jobsetctl.kube.names import is_dns1123_label, is_dns1123_subdomain
from jobsetctl.kube.scheduling_checks import Checker, gated_field_message, integer, items, mapping
from jobsetctl.kube.scheduling_rules import MAX_RESOURCE_CLAIMS
from jobsetctl.kube.scheduling_update import compare_group

GATE = "WorkloadWithJob"


def validate_job_scheduling(spec: dict[str, Any], p: Path, ctx: AdmissionContext, *,
                            drop_gated: bool = False) -> list[Finding]:
    c = Checker(SCHEDULING_RULES, ctx)
    here = (*p, "scheduling")
    if not ctx.gates.enabled(GATE):
        c.emit(GATED_FIELD, gated_field_message(here, GATE), here)
        if drop_gated:
            del spec["scheduling"]
        return c.findings
    scheduling = spec.get("scheduling")
    if not isinstance(scheduling, dict):
        return c.findings
    policy = scheduling.get("schedulingPolicy")
    policy_path = (*here, "schedulingPolicy")
    if policy is not None:
        c.policy(policy, policy_path, optional_count=True)
    min_count = integer(mapping(mapping(policy).get("gang")).get("minCount"))
    parallelism = integer(spec.get("parallelism"))
    parallelism = 1 if parallelism is None else parallelism
    if min_count is not None and min_count > parallelism:
        at = (*policy_path, "gang", "minCount")
        c.emit(SCHEDULING, kfield.invalid(at, min_count, f"must be less than or equal to parallelism ({parallelism})"),
               at)
    if "schedulingConstraints" in scheduling:
        c.topology(scheduling.get("schedulingConstraints"), (*here, "schedulingConstraints"))
    c.disruption_mode(scheduling.get("disruptionMode"), (*here, "disruptionMode"))
    _resource_claims(c, scheduling.get("resourceClaims"), (*here, "resourceClaims"))
    return c.findings


def _resource_claims(c: Checker, claims: Any, path: Path) -> None:
    """Job claims name an optional claim or template (``WorkloadPodGroupResourceClaim``)."""
    entries = items(claims)
    if len(entries) > MAX_RESOURCE_CLAIMS:
        c.emit(SCHEDULING, too_many(path, len(entries), MAX_RESOURCE_CLAIMS), path)
    for index, entry in enumerate(entries):
        claim = mapping(entry)
        here = (*path, index)
        name = claim.get("name")
        if name is None or name == "":
            c.emit(SCHEDULING, kfield.required((*here, "name")), (*here, "name"))
        elif isinstance(name, str):
            for detail in is_dns1123_label(name):
                c.emit(SCHEDULING, kfield.invalid((*here, "name"), name, detail), (*here, "name"))
        for key in ("resourceClaimName", "resourceClaimTemplateName"):
            value = claim.get(key)
            if isinstance(value, str) and value:
                for detail in is_dns1123_subdomain(value):
                    c.emit(SCHEDULING, kfield.invalid((*here, key), value, detail), (*here, key))


def job_scheduling_update(old_spec: dict[str, Any], new_spec: dict[str, Any], p: Path) -> list[Finding]:
    """Immutability of ``spec.scheduling`` but for ``schedulingPolicy.gang.minCount``."""
    here = (*p, "scheduling")
    old, new = old_spec.get("scheduling"), new_spec.get("scheduling")
    if old is None and new is None:
        return []
    if (old is None) != (new is None):
        return [IMMUTABLE.finding(kfield.invalid(here, new, "field is immutable"), path=kfield.path_string(here),
                                  at=here)]
    return compare_group(SCHEDULING_RULES, mapping(old), mapping(new), here, "minCount")
