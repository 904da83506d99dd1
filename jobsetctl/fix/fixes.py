"""The fixes of ``jobsetctl fix``, one per rule id (see :mod:`jobsetctl.fix.registry` for the contract).

Each fix starts from a finding of ``validate`` and edits only the nodes it names. When the finding has
another cause than the one the fix knows, or the repair would need a choice only the user can make, it
raises :class:`Unfixable` with the reason.
"""

from __future__ import annotations

import re
from typing import Any

from ruamel.yaml.comments import CommentedMap

from jobsetctl.fix.registry import FixTarget, Unfixable, as_int, fix
from jobsetctl.fix.yamledit import EditError, block_seq, delete, find, flow_map, mapping_at, set_after, walk
from jobsetctl.jobset import api
from jobsetctl.kube.field import Path, path_string
from jobsetctl.lint.support import KUEUE_QUEUE_LABEL

# --- Indexed Jobs without completions --------------------------------------------------------------

#: kube/job_validation.py reports a missing ``completions`` of an Indexed Job as this Required error.
_INDEXED_WITHOUT_COMPLETIONS = "spec.completions: Required value: when completion mode is Indexed"


def _completions_from_parallelism(target: FixTarget) -> str:
    # The API server's error names spec.completions; our Job validation points at completionMode.
    if target.at[-1:] not in (("completions",), ("completionMode",)) or _INDEXED_WITHOUT_COMPLETIONS not in target.message:
        raise Unfixable("no safe fix for this cause: only an Indexed Job without completions is repaired")
    spec_path = target.at[:-1]
    try:
        spec = mapping_at(target.obj, spec_path)
    except EditError as exc:
        raise Unfixable(f"the Job spec cannot be edited here: {exc}") from None
    parallelism = as_int(spec.get("parallelism"))
    if parallelism is None:
        raise Unfixable("parallelism is not a number written here, so the intended completions are unknown")
    set_after(spec, "completions", parallelism, after="parallelism")
    return f"set {path_string((*spec_path, 'completions'))} to {parallelism} (its parallelism): an Indexed Job needs completions"


_CHILD_JOB_SUMMARY = "an Indexed Job with parallelism and no completions: completions set to parallelism"


@fix("jobset-child-job-invalid", _CHILD_JOB_SUMMARY + " (other causes are reported)")
def _child_job(target: FixTarget) -> str:
    if target.at[:1] != ("spec",) or "replicatedJobs" not in target.at:
        # A TrainJob's finding points into the TrainJob; the Job comes from its runtime.
        raise Unfixable("the Job comes from a TrainingRuntime: fix the runtime's template")
    return _completions_from_parallelism(target)


@fix("job-completion-mode", _CHILD_JOB_SUMMARY + " (other causes are reported)")
def _job_completion_mode(target: FixTarget) -> str:
    return _completions_from_parallelism(target)


# --- gang minCount larger than the pods -----------------------------------------------------------

#: reference.py's message for ref-gang-too-large; tests/fix pins it.
_GANG_TOO_LARGE = re.compile(r"^gang minCount (\d+) is larger than the (\d+) pods that reference ")


@fix("ref-gang-too-large", "minCount lowered to the number of pods that reference the group")
def _gang_too_large(target: FixTarget) -> str:
    match = _GANG_TOO_LARGE.match(target.message)
    if match is None or target.at[-1:] != ("minCount",):
        raise Unfixable("unexpected finding shape")
    pods = int(match.group(2))
    if pods < 1:
        raise Unfixable("no pod references the group: minCount must be at least 1, so there is nothing to lower it to")
    try:
        gang = mapping_at(target.obj, target.at[:-1])
    except EditError as exc:
        raise Unfixable(str(exc)) from None
    if as_int(gang.get("minCount")) != int(match.group(1)):
        raise Unfixable("minCount is not written here as a number")
    gang["minCount"] = pods
    return f"set {path_string(target.at)} from {match.group(1)} to {pods}, the pods that reference the group"


# --- Kueue queue-name as an annotation ------------------------------------------------------------

def move_annotation_to_label(target: FixTarget, key: str) -> str:
    """Move ``metadata.annotations[key]`` of the object (or of the metadata the finding points into) to
    ``metadata.labels[key]``; empty annotations are removed."""
    at = target.at
    meta_path: Path = at[: at.index("annotations")] if "annotations" in at else ("metadata",)
    try:
        meta = mapping_at(target.obj, meta_path)
        annotations = walk(meta, ("annotations",))
        if not isinstance(annotations, CommentedMap) or key not in annotations:
            raise Unfixable(f"no annotation {key} written here")
        value = annotations[key]
        labels = meta.get("labels")
        if isinstance(labels, dict) and key in labels and labels[key] != value:
            raise Unfixable(f"label {key} is already set to {labels[key]!r}: which queue is meant is unclear")
        labels = mapping_at(meta, ("labels",), create=True)
        labels[key] = value
        delete(annotations, key)
        if not annotations:
            delete(meta, "annotations")
    except EditError as exc:
        raise Unfixable(str(exc)) from None
    return f"moved {key} from {path_string((*meta_path, 'annotations'))} to {path_string((*meta_path, 'labels'))}"


@fix("kueue-queue-name-annotation", "the kueue.x-k8s.io/queue-name annotation moved to a label (Kueue reads the label)")
def _queue_name_annotation(target: FixTarget) -> str:
    return move_annotation_to_label(target, KUEUE_QUEUE_LABEL)


# --- ordering: startupPolicy InOrder and the proposed executionPolicy ------------------------------


def _rjobs_of(spec: Any) -> list[CommentedMap]:
    rjobs = spec.get("replicatedJobs")
    if not isinstance(rjobs, list) or not all(isinstance(r, CommentedMap) for r in rjobs):
        raise Unfixable("spec.replicatedJobs is not a list of replicated jobs")
    return list(rjobs)


def _add_dependencies(spec: CommentedMap, stages: list[list[str]], status: list[str]) -> None:
    """Each replicated job of stage k+1 waits for every job of stage k with ``status[k]``."""
    rjobs = {api.rjob_name(r): r for r in _rjobs_of(spec)}
    order = list(rjobs)
    for k in range(1, len(stages)):
        for name in stages[k]:
            previous = stages[k - 1]
            if len(previous) > api.MAX_DEPENDS_ON:
                raise Unfixable(f"a replicated job can depend on at most {api.MAX_DEPENDS_ON} others")
            if any(order.index(dep) > order.index(name) for dep in previous):
                raise Unfixable(f"{name} would depend on a replicated job listed after it, which dependsOn forbids")
            rjob = rjobs[name]
            set_after(rjob, "dependsOn", block_seq([flow_map(name=dep, status=status[k - 1]) for dep in previous]),
                      after="replicas" if "replicas" in rjob else "name")


@fix("jobset-startup-in-order", "startupPolicy InOrder replaced by dependsOn (status Ready) on each later replicated job")
def _startup_in_order(target: FixTarget) -> str:
    spec_path = target.at[: target.at.index("startupPolicy")]
    try:
        spec = mapping_at(target.obj, spec_path)
        rjobs = _rjobs_of(spec)
        names = [api.rjob_name(r) for r in rjobs]
        if any("dependsOn" in r for r in rjobs):
            raise Unfixable("some replicated job already has dependsOn")
        policy = walk(spec, ("startupPolicy",))
        _add_dependencies(spec, [[n] for n in names], [api.DependsOnStatus.READY.value] * len(names))
        if isinstance(policy, CommentedMap) and set(policy) == {"startupPolicyOrder"}:
            delete(spec, "startupPolicy")
        elif isinstance(policy, CommentedMap):
            policy["startupPolicyOrder"] = api.StartupPolicyOrder.ANY_ORDER.value
    except EditError as exc:
        raise Unfixable(str(exc)) from None
    return "replaced startupPolicy InOrder with dependsOn (status Ready) on " + (
        ", ".join(names[1:]) if len(names) > 1 else "nothing (a single replicated job)"
    )


#: The status words of the executionPolicy proposals (jobset#672, the first KEP-672 draft in PR #680) →
#: the dependsOn status that shipped.
_EXECUTION_STATUS = {"Ready": "Ready", "Succeeded": "Complete", "Complete": "Complete", "Completed": "Complete"}


def _execution_stages(policy: Any, names: list[str]) -> tuple[list[list[str]], list[str]]:
    """The stages and the status each stage waits for, for both proposed shapes:

    * jobset#672: ``{executionPolicyOrder: InOrder|AnyOrder, replicatedJobsStatus: Succeeded|...}`` (the
      replicated jobs one after the other, in spec order);
    * PR #680's draft: ``{executionPolicyOrder?, rules: [{targetReplicatedJobs: [...], replicatedJobsStatus}]}``
      (each rule is a stage; the jobs no rule names run last).
    """
    if not isinstance(policy, dict):
        raise Unfixable("executionPolicy is not a mapping")
    order = policy.get("executionPolicyOrder", policy.get("executionOrder", "InOrder"))
    rules = policy.get("rules")
    if rules is None:
        if order == "AnyOrder":
            return [names], []
        if order != "InOrder":
            raise Unfixable(f"unknown execution order {order!r}")
        status = _EXECUTION_STATUS.get(str(policy.get("replicatedJobsStatus", "Succeeded")))
        if status is None:
            raise Unfixable(f"no dependsOn status means {policy.get('replicatedJobsStatus')!r}")
        return [[n] for n in names], [status] * (len(names) - 1)
    if not isinstance(rules, list):
        raise Unfixable("executionPolicy.rules is not a list")
    stages: list[list[str]] = []
    statuses: list[str] = []
    for rule in rules:
        targets = rule.get("targetReplicatedJobs") if isinstance(rule, dict) else None
        status = _EXECUTION_STATUS.get(str(rule.get("replicatedJobsStatus"))) if isinstance(rule, dict) else None
        if not isinstance(targets, list) or not targets or status is None:
            raise Unfixable("an executionPolicy rule without targetReplicatedJobs or with an unknown status")
        unknown = [t for t in targets if t not in names]
        if unknown:
            raise Unfixable(f"executionPolicy names a replicated job that does not exist: {unknown[0]}")
        stages.append([str(t) for t in targets])
        statuses.append(status)
    named = {t for stage in stages for t in stage}
    rest = [n for n in names if n not in named]
    if rest:
        stages.append(rest)
    else:
        statuses.pop()  # the last rule's status gates nothing
    return stages, statuses


@fix("schema-unknown-field", "the proposed executionPolicy rewritten to the dependsOn that shipped (other unknown fields are reported)")
def _unknown_field(target: FixTarget) -> str:
    if target.at[-1:] != ("executionPolicy",):
        raise Unfixable("no safe fix: remove or rename the field (see the hint)")
    spec_path = target.at[:-1]
    try:
        spec = mapping_at(target.obj, spec_path)
        if "replicatedJobs" not in spec:
            raise Unfixable("executionPolicy outside a JobSet spec")
        rjobs = _rjobs_of(spec)
        names = [api.rjob_name(r) for r in rjobs]
        policy = walk(spec, ("executionPolicy",))
        stages, statuses = _execution_stages(policy, names)
        if any("dependsOn" in r for r in rjobs):
            raise Unfixable("some replicated job already has dependsOn: merging the two orders is the user's call")
        startup = find(spec, ("startupPolicy", "startupPolicyOrder"))
        if len(stages) > 1 and startup == api.StartupPolicyOrder.IN_ORDER.value:
            raise Unfixable("startupPolicy InOrder is set too, and dependsOn cannot be combined with it")
        _add_dependencies(spec, stages, statuses)
        delete(spec, "executionPolicy")
    except EditError as exc:
        raise Unfixable(str(exc)) from None
    if len(stages) == 1:
        return "removed executionPolicy: one stage, every replicated job starts at once (the default)"
    steps = " → ".join("+".join(stage) for stage in stages)
    return f"replaced executionPolicy with dependsOn: {steps}"


# --- exclusive-placement annotations on a pod template ----------------------------------------------


@fix("jobset-exclusive-pod-template",
     "the exclusive-placement annotations moved from the pod template to the replicated job's template (where the "
     "JobSet controller reads them)")
def _exclusive_pod_template(target: FixTarget) -> str:
    from jobsetctl.lint.jobset_exclusive_pod_template import KEYS

    at = target.at
    if "replicatedJobs" not in at or at[-2:-1] != ("annotations",):
        raise Unfixable("unexpected finding shape")
    rjob_path = at[: at.index("replicatedJobs") + 2]
    try:
        template = mapping_at(target.obj, (*rjob_path, "template"))
        pod_meta = mapping_at(template, ("spec", "template", "metadata"))
        pod_annotations = mapping_at(pod_meta, ("annotations",))
        if "metadata" not in template:
            template.insert(0, "metadata", CommentedMap())
        job_annotations = mapping_at(template, ("metadata", "annotations"), create=True)
        moving = [key for key in KEYS if key in pod_annotations]
        for key in moving:
            if key in job_annotations and job_annotations[key] != pod_annotations[key]:
                raise Unfixable(f"the replicated job's template already sets {key} to {job_annotations[key]!r}: "
                                "which value is meant is the user's call")
        for key in moving:
            job_annotations[key] = pod_annotations[key]
            delete(pod_annotations, key)
        if not pod_annotations:
            delete(pod_meta, "annotations")
        if not pod_meta:
            delete(mapping_at(template, ("spec", "template")), "metadata")
    except EditError as exc:
        raise Unfixable(str(exc)) from None
    where = path_string((*rjob_path, "template", "metadata", "annotations"))
    return f"moved {', '.join(moving)} from the pod template to {where}"
