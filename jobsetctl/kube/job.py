"""batch/v1 Job: API server defaulting, selector generation and built-in validation.

Defaulting (kubernetes ``pkg/apis/batch/v1/defaults.go`` ``SetDefaults_Job``): completions and
parallelism both unset → 1; parallelism unset → 1; ``backoffLimit`` 6, or MaxInt32 when
``backoffLimitPerIndex`` is set; ``completionMode: NonIndexed``; ``suspend: false``;
``manualSelector: false``; ``podReplacementPolicy`` ``Failed`` with a podFailurePolicy, else
``TerminatingOrFailed``; an onPodConditions pattern without status gets ``True``; a Job without
labels takes its pod template's labels (quirk: before the generated labels are added). The pod
template gets the minimal pod defaults of :func:`jobsetctl.kube.podspec.default_pod_spec`.

Selector generation (``pkg/registry/batch/job/strategy.go`` ``generateSelector``, unless
``manualSelector``) needs the Job's uid: with ``metadata.uid`` present (the fake API server sets
one) the template gets ``job-name``, ``batch.kubernetes.io/job-name``, ``controller-uid`` and
``batch.kubernetes.io/controller-uid`` and the selector ``batch.kubernetes.io/controller-uid: <uid>``.
Without a uid (``jobsetctl validate``, which creates nothing) the object is left as written and
validation checks a copy with the labels generated for a placeholder uid, so a name too long for a
label value is still reported exactly as the API server would.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jobsetctl.admission.schema import StructuralSchema, builtin_schema
from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import AdmissionContext, KindHandler, Object
from jobsetctl.kube import field as kfield
from jobsetctl.kube.field import Path
from jobsetctl.kube.job_rules import (
    CONTROLLER_UID_LABEL,
    DEFAULT_BACKOFF_LIMIT,
    INDEXED,
    JOB_NAME_LABEL,
    LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
    MAX_INT32,
    NAME,
    NON_INDEXED,
    SELECTOR,
)
from jobsetctl.kube.job_validation import Findings, items, label_problems, mapping, validate_job_spec
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kube.names import is_dns1123_label
from jobsetctl.kube.podspec import default_pod_spec, label_selector_matches
from jobsetctl.kube.versions import KubeVersion

#: Stands in for the uid the API server would assign, when validating without creating.
PLACEHOLDER_UID = "00000000-0000-0000-0000-000000000000"

__all__ = ["HANDLER", "JobHandler", "default_job_spec", "generate_selector", "validate_job_spec"]


def default_job_spec(spec: Any) -> None:
    """``SetDefaults_Job`` on a JobSpec (also used for JobSet child-Job templates), in place."""
    if not isinstance(spec, dict):
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else DEFAULT_BACKOFF_LIMIT
    if spec.get("completionMode") is None:
        spec["completionMode"] = NON_INDEXED
    if spec.get("suspend") is None:
        spec["suspend"] = False
    failure_policy = spec.get("podFailurePolicy")
    for rule in items(mapping(failure_policy).get("rules")):
        for pattern in items(mapping(rule).get("onPodConditions")):
            if isinstance(pattern, dict) and pattern.get("status") in (None, ""):
                pattern["status"] = "True"
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if failure_policy is not None else "TerminatingOrFailed"
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    template = spec.get("template")
    if isinstance(template, dict):
        default_pod_spec(template.get("spec"))


def _name(obj: Object) -> str:
    name = mapping(obj.get("metadata")).get("name")
    return name if isinstance(name, str) else ""


def generate_selector(obj: Object, uid: str) -> None:
    """``generateSelector``: the generated labels (unless the user set them) and the selector."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    template = spec.setdefault("template", {})
    if not isinstance(template, dict):
        return
    meta = template.setdefault("metadata", {})
    if not isinstance(meta, dict):
        return
    labels = meta.get("labels")
    if not isinstance(labels, dict):
        labels = meta["labels"] = {}
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, _name(obj))
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, uid)
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        selector = spec["selector"] = {}
    match_labels = selector.get("matchLabels")
    if not isinstance(match_labels, dict):
        match_labels = selector["matchLabels"] = {}
    match_labels.setdefault(CONTROLLER_UID_LABEL, uid)


def _uid(obj: Object) -> str:
    uid = mapping(obj.get("metadata")).get("uid")
    return uid if isinstance(uid, str) else ""


def _manual(obj: Object) -> bool:
    return mapping(obj.get("spec")).get("manualSelector") is True


class JobHandler(KindHandler):
    group = "batch"
    kind = "Job"

    def schema(self, api_version: str, version: KubeVersion) -> StructuralSchema:
        return builtin_schema("io.k8s.api.batch.v1.Job", version)

    def default(self, obj: Object, ctx: AdmissionContext) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        default_job_spec(spec)
        template_labels = mapping(mapping(spec.get("template")).get("metadata")).get("labels")
        meta = obj.get("metadata")
        if isinstance(meta, dict) and isinstance(template_labels, dict) and not meta.get("labels"):
            meta["labels"] = dict(template_labels)
        if _uid(obj) and not _manual(obj):
            generate_selector(obj, _uid(obj))

    def validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        out = Findings(validate_job_spec(obj.get("spec"), ("spec",), ctx, drop_gated=True))
        # What the API server validates: the object after selector generation.
        generated = obj
        if not _uid(obj) and not _manual(obj):
            generated = copy_tree(obj)
            generate_selector(generated, PLACEHOLDER_UID)
        _generated_labels(obj, generated, out)
        _selector(generated, out)
        _indexed_hostname(obj, out)
        return out

    def validate_update(self, old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        from jobsetctl.kube.job_update import validate_job_update

        findings = list(self.validate(new, ctx))
        findings.extend(validate_job_update(old, new, ctx))
        return findings


def _generated_labels(obj: Object, generated: Object, out: Findings) -> None:
    """Template label problems that only exist because the API server adds the generated labels
    (the user's own labels are checked in ``validate_pod_template``). Quirk: a name over 63
    characters yields the same message twice, once per job-name label."""
    if generated is obj:
        return
    written = mapping(mapping(mapping(mapping(obj.get("spec")).get("template")).get("metadata")).get("labels"))
    labels = mapping(mapping(mapping(mapping(generated.get("spec")).get("template")).get("metadata")).get("labels"))
    added = {key: value for key, value in labels.items() if key not in written}
    for message, _ in label_problems(added, ("spec", "template", "labels")):
        out.add(NAME, message, ("metadata", "name"), path=("spec", "template", "labels"))


def _selector(job: Object, out: Findings) -> None:
    spec = mapping(job.get("spec"))
    selector = spec.get("selector")
    template_labels = mapping(mapping(mapping(spec.get("template")).get("metadata")).get("labels"))
    if selector is None:
        here = ("spec", "selector")
        out.add(SELECTOR, kfield.required(here), ("spec", "manualSelector") if "manualSelector" in spec else ("spec",),
                path=here)
        return
    if not _manual(job):
        _has_labels(job, template_labels, out)
        expected = {
            LEGACY_CONTROLLER_UID_LABEL: _uid(job) or PLACEHOLDER_UID, LEGACY_JOB_NAME_LABEL: _name(job),
            CONTROLLER_UID_LABEL: _uid(job) or PLACEHOLDER_UID, JOB_NAME_LABEL: _name(job),
        }
        if not label_selector_matches(selector, expected):
            out.add(SELECTOR, kfield.invalid(("spec", "selector"), selector, "`selector` not auto-generated"),
                    ("spec", "selector"))
    if not label_selector_matches(selector, template_labels):
        labels_path: Path = ("spec", "template", "metadata", "labels")
        out.add(SELECTOR, kfield.invalid(labels_path, template_labels, "`selector` does not match template `labels`"),
                labels_path if template_labels else ("spec", "selector"), path=labels_path)


def _has_labels(job: Object, labels: dict[str, Any], out: Findings) -> None:
    """``ValidateHasLabel`` for the four generated labels."""
    uid = _uid(job) or PLACEHOLDER_UID
    for key, expected in ((LEGACY_CONTROLLER_UID_LABEL, uid), (LEGACY_JOB_NAME_LABEL, _name(job)),
                          (CONTROLLER_UID_LABEL, uid), (JOB_NAME_LABEL, _name(job))):
        here = ("spec", "template", "metadata", "labels", key)
        if key not in labels:
            out.add(SELECTOR, kfield.required(here, f"must be '{expected}'"), ("spec", "template"), path=here)
        elif labels[key] != expected:
            out.add(SELECTOR, kfield.invalid(here, labels, f"must be '{expected}'"), here)


def _indexed_hostname(obj: Object, out: Findings) -> None:
    """Indexed pods are named ``<job>-<index>``, and that must be a DNS label.

    Quirk: upstream's text says "will not able to create pod". A Job with only ``generateName`` is checked
    with the name the API server generates before validation (prefix plus five characters).
    """
    spec = mapping(obj.get("spec"))
    completions = spec.get("completions")
    if spec.get("completionMode") != INDEXED or not isinstance(completions, int) or completions <= 0:
        return
    name = _name(obj)
    generate = mapping(obj.get("metadata")).get("generateName")
    if not name and isinstance(generate, str) and generate:
        from jobsetctl.jobset.names import generated_name

        name = generated_name(generate)
    hostname = f"{name}-{completions - 1}"
    if is_dns1123_label(hostname):
        here = ("metadata", "name")
        out.add(NAME, kfield.invalid(
            here, name, f"will not able to create pod with invalid DNS label: {hostname}"), here)

HANDLER = JobHandler()
