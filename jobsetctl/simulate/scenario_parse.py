"""Parsing a Scenario (:mod:`jobsetctl.simulate.scenario` defines what one is): each value is read strictly,
and anything wrong becomes a ``scenario-*`` diagnostic with ``file:line:column``."""

from __future__ import annotations

import os
from typing import Any

from jobsetctl.diagnostics import Diagnostic, Severity
from jobsetctl.kube.duration import DurationError, parse_duration
from jobsetctl.kube.field import Path, duplicate, invalid, not_supported, path_string, required
from jobsetctl.kube.names import is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from jobsetctl.kube.quantity import QuantityError, parse_quantity
from jobsetctl.loader.objects import ObjectRecord, request_too_large, too_large_message
from jobsetctl.rules import core
from jobsetctl.rules.interface import Rule
from jobsetctl.simulate import limits
from jobsetctl.simulate.scenario import (
    ACTION_VERBS,
    API_VERSION,
    CHECK_STATES,
    CLUSTER_SCOPED_KINDS,
    DEFAULT_MAX_PODS,
    DUPLICATE_NODE,
    INVALID_ACTION,
    INVALID_DURATION,
    INVALID_TYPE,
    INVALID_VALUE,
    KIND_GROUPS,
    REQUIRED,
    SCENARIO_API_VERSION,
    SUSPENDABLE_KINDS,
    TAINT_EFFECTS,
    UNKNOWN_FIELD,
    Action,
    FileRef,
    NodePool,
    ObjectTarget,
    PodTarget,
    Scenario,
    Submission,
    TopologyLevel,
)

# ---- parsing -----------------------------------------------------------------------------------------


class _Reader:
    """Typed access to a Scenario's values that records a finding, and returns None, for anything wrong."""

    def __init__(self, record: ObjectRecord) -> None:
        self.record = record
        self.diagnostics: list[Diagnostic] = []

    def error(self, rule: Rule, message: str, at: Path) -> None:
        self.diagnostics.append(self.record.diagnostic(rule.finding(message, path=path_string(at), at=at)))

    def mapping(
        self, value: Any, at: Path, allowed: tuple[str, ...] | None = None, needed: tuple[str, ...] = ()
    ) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self.error(INVALID_TYPE, invalid(at, _shape(value), "expected a mapping"), at)
            return None
        if allowed is not None:
            for key in value:
                if key not in allowed:
                    self.error(UNKNOWN_FIELD, f'unknown field "{path_string((*at, key))}"', (*at, key))
        for key in needed:
            if value.get(key) is None:
                self.error(REQUIRED, required((*at, key)), (*at, key))  # points at ``at``: the key is missing
        return value

    def sequence(self, value: Any, at: Path) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.error(INVALID_TYPE, invalid(at, _shape(value), "expected a list"), at)
            return []
        return value

    def string(self, value: Any, at: Path) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str):
            self.error(INVALID_TYPE, invalid(at, value, "expected a string"), at)
            return None
        return value

    def integer(self, value: Any, at: Path, minimum: int) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(INVALID_TYPE, invalid(at, value, "expected an integer"), at)
            return None
        if value < minimum:
            self.error(INVALID_VALUE, invalid(at, value, f"must be greater than or equal to {minimum}"), at)
            return None
        return value

    def duration(self, value: Any, at: Path) -> float | None:
        if value is None:
            return None
        try:
            seconds = parse_duration(value)
        except DurationError as exc:
            self.error(INVALID_DURATION, f"{path_string(at)}: {exc}", at)
            return None
        # A YAML float (.inf, .nan, 1e300) or a very long number is a duration to parse_duration; the
        # virtual clock and RFC 3339 timestamps are not made for them.
        problem = limits.time_problem(seconds)
        if problem is not None:
            self.error(INVALID_DURATION, f'{path_string(at)}: invalid duration "{self.written(value, at)}": {problem}', at)
            return None
        return seconds

    def written(self, value: Any, at: Path) -> str:
        """A scalar as the file spells it (``1.0e+300``, not ``1e+300``), where the loader kept the text."""
        from jobsetctl.loader.yamlload import PosScalar

        node = self.record.document.node_at(self.record.prefix + at)
        return node.text if isinstance(node, PosScalar) else str(value)

    def string_map(self, value: Any, at: Path) -> dict[str, str]:
        if value is None:
            return {}
        mapping = self.mapping(value, at)
        out: dict[str, str] = {}
        for key, item in (mapping or {}).items():
            text = self.string(item, (*at, key))
            if text is not None:
                out[key] = text
        return out


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, list):
        return "list"
    return str(value)


def parse_scenario(record: ObjectRecord, *, partial: bool = False) -> tuple[Scenario | None, list[Diagnostic]]:
    """A Scenario from its loaded document, or None and the diagnostics that explain why not.

    Paths in ``submit[].files`` are resolved against the directory of the Scenario file (standard input:
    the current directory); whether they exist is checked when the runner loads them. ``partial``: return
    what parsed even when there are errors (the entries without errors), so that the checks that need a
    Scenario (submitted files, node names, settings) can report their problems in the same run.
    """
    reader = _Reader(record)
    top = reader.mapping(record.obj, (), ("apiVersion", "kind", "metadata", "spec"), ("spec",))
    if top is None:
        return None, reader.diagnostics
    if top.get("apiVersion") != SCENARIO_API_VERSION:
        reader.error(API_VERSION, not_supported(("apiVersion",), top.get("apiVersion"), [SCENARIO_API_VERSION]),
                     ("apiVersion",))
    name = _scenario_name(reader, top.get("metadata"), record.file)
    scenario = Scenario(name, record.file, record)
    spec = reader.mapping(
        top.get("spec", {}), ("spec",),
        ("kubernetesVersion", "featureGates", "until", "nodes", "submit", "actions", "kueue"),
    )
    if spec is not None:
        _parse_spec(reader, spec, scenario)
    if not partial and any(d.severity is Severity.ERROR for d in reader.diagnostics):
        return None, reader.diagnostics
    return scenario, reader.diagnostics


def _scenario_name(reader: _Reader, metadata: Any, file: str) -> str:
    stem = os.path.splitext(os.path.basename(file))[0] or "scenario"
    if metadata is None:
        return stem
    md = reader.mapping(metadata, ("metadata",), ("name", "labels", "annotations"))
    if md is None:
        return stem
    name = reader.string(md.get("name"), ("metadata", "name"))
    return name or stem


def _parse_spec(reader: _Reader, spec: dict[str, Any], scenario: Scenario) -> None:
    version = spec.get("kubernetesVersion")
    if version is not None:
        if isinstance(version, int | float) and not isinstance(version, bool):
            # 1.30 unquoted is the float 1.3: refuse it rather than guess.
            reader.error(INVALID_TYPE, invalid(("spec", "kubernetesVersion"), version,
                                               'expected a string; quote the version, e.g. "1.37"'),
                         ("spec", "kubernetesVersion"))
        else:
            scenario.kubernetes_version = reader.string(version, ("spec", "kubernetesVersion"))
    gates = spec.get("featureGates")
    if gates is not None:
        mapping = reader.mapping(gates, ("spec", "featureGates"))
        scenario.feature_gates = dict(mapping or {})
    scenario.until = reader.duration(spec.get("until"), ("spec", "until"))
    for index, item in enumerate(reader.sequence(spec.get("nodes"), ("spec", "nodes"))):
        pool = _parse_pool(reader, item, ("spec", "nodes", index))
        if pool is None:
            continue
        if any(p.name == pool.name for p in scenario.nodes):
            at: Path = ("spec", "nodes", index, "name")
            reader.error(DUPLICATE_NODE, duplicate(at, pool.name), at)
            continue
        total = sum(p.count for p in scenario.nodes) + pool.count
        if total > limits.MAX_NODES:
            # Refused before any node is built: a million-node pool would take minutes and gigabytes.
            at = ("spec", "nodes", index, "count")
            reader.error(limits.TOO_LARGE, invalid(at, pool.count, limits.node_limit_message(total)), at)
            continue
        scenario.nodes.append(pool)
    base = os.path.dirname(scenario.file) if reader.record.document.file != "<stdin>" else ""
    for index, item in enumerate(reader.sequence(spec.get("submit"), ("spec", "submit"))):
        submission = _parse_submission(reader, item, ("spec", "submit", index), index, base)
        if submission is not None:
            scenario.submissions.append(submission)
    for index, item in enumerate(reader.sequence(spec.get("actions"), ("spec", "actions"))):
        action = _parse_action(reader, item, ("spec", "actions", index), index)
        if action is not None:
            scenario.actions.append(action)
    if spec.get("kueue") is not None:
        _parse_kueue(reader, spec["kueue"], scenario)


#: Keys of ``spec.kueue``: Kueue's Configuration, and (the simulation engine's) how admission checks answer.
KUEUE_KEYS: tuple[str, ...] = ("configuration", "admissionChecks")


def _parse_kueue(reader: _Reader, value: Any, scenario: Scenario) -> None:
    """``spec.kueue``: Kueue runs; ``configuration`` is Kueue's Configuration body, checked as Kueue checks it."""
    from jobsetctl.kueue.config import parse_configuration

    at: Path = ("spec", "kueue")
    kueue = reader.mapping(value, at, KUEUE_KEYS)
    if kueue is None:
        return
    scenario.kueue = kueue
    scenario.kueue_admission_checks = _parse_admission_checks(reader, kueue.get("admissionChecks"), (*at, "admissionChecks"))
    if kueue.get("configuration") is None:
        return
    where: Path = (*at, "configuration")
    config, problems = parse_configuration(kueue["configuration"], source=f"{scenario.file}: spec.kueue.configuration")
    for problem in problems:
        rule = UNKNOWN_FIELD if problem.message.startswith("strict decoding error") else INVALID_VALUE
        reader.error(rule, f"spec.kueue.configuration: {problem.message}", (*where, *problem.at))
    if not problems:
        scenario.kueue_configuration = config


def _parse_admission_checks(reader: _Reader, value: Any, at: Path) -> list[dict[str, Any]]:
    """``spec.kueue.admissionChecks``: how each simulated check answers (``state`` Ready, Retry or Rejected
    after ``delay``, with ``message``)."""
    checks: list[dict[str, Any]] = []
    for index, item in enumerate(reader.sequence(value, at)):
        where: Path = (*at, index)
        check = reader.mapping(item, where, ("name", "delay", "state", "message"), ("name",))
        if check is None:
            continue
        name = reader.string(check.get("name"), (*where, "name"))
        delay = reader.duration(check.get("delay"), (*where, "delay"))
        state = reader.string(check.get("state"), (*where, "state"))
        message = reader.string(check.get("message"), (*where, "message"))
        if state is not None and state not in CHECK_STATES:
            reader.error(INVALID_VALUE, not_supported((*where, "state"), state, CHECK_STATES), (*where, "state"))
            continue
        if name:
            checks.append({"name": name, "delay": delay or 0.0, "state": state or "Ready", "message": message or ""})
    return checks


def _parse_pool(reader: _Reader, value: Any, at: Path) -> NodePool | None:
    pool = reader.mapping(
        value, at, ("name", "count", "capacity", "labels", "taints", "topology", "topologyOffset"), ("name",)
    )
    if pool is None:
        return None
    errors_before = len(reader.diagnostics)
    name = reader.string(pool.get("name"), (*at, "name"))
    count = reader.integer(pool.get("count"), (*at, "count"), 0)
    count = 1 if count is None and "count" not in pool else count
    if name is not None:
        problems = is_dns1123_subdomain(f"{name}-0")
        if problems:
            reader.error(INVALID_VALUE, invalid((*at, "name"), name, "node names <name>-<i> " + problems[0]),
                         (*at, "name"))
    capacity = _parse_capacity(reader, pool.get("capacity"), (*at, "capacity"))
    labels = reader.string_map(pool.get("labels"), (*at, "labels"))
    for key, text in labels.items():
        _check_label(reader, key, text, (*at, "labels", key))
    taints = tuple(_parse_taint(reader, item, (*at, "taints", i))
                   for i, item in enumerate(reader.sequence(pool.get("taints"), (*at, "taints"))))
    levels: list[TopologyLevel] = []
    for i, item in enumerate(reader.sequence(pool.get("topology"), (*at, "topology"))):
        level_at: Path = (*at, "topology", i)
        level = reader.mapping(item, level_at, ("key", "count"), ("key", "count"))
        if level is None:
            continue
        level_key = reader.string(level.get("key"), (*level_at, "key"))
        domains = reader.integer(level.get("count"), (*level_at, "count"), 1)
        if level_key is not None:
            problems = is_qualified_name(level_key)
            if problems:
                reader.error(INVALID_VALUE, invalid((*level_at, "key"), level_key, problems[0]), (*level_at, "key"))
            elif any(existing.key == level_key for existing in levels):
                reader.error(INVALID_VALUE, duplicate((*level_at, "key"), level_key), (*level_at, "key"))
        if level_key is not None and domains is not None:
            levels.append(TopologyLevel(level_key, domains))
    offset = reader.integer(pool.get("topologyOffset"), (*at, "topologyOffset"), 0) or 0
    if len(reader.diagnostics) > errors_before or name is None or count is None:
        return None
    return NodePool(name, count, capacity, labels, tuple(t for t in taints if t), tuple(levels), offset)


def _parse_capacity(reader: _Reader, value: Any, at: Path) -> dict[str, str | int | float]:
    out: dict[str, str | int | float] = {}
    mapping = reader.mapping(value, at) if value is not None else {}
    for resource, amount in (mapping or {}).items():
        where: Path = (*at, resource)
        problems = is_qualified_name(resource)
        if problems:
            reader.error(INVALID_VALUE, invalid(where, resource, problems[0]), where)
            continue
        try:
            quantity = parse_quantity(amount)
        except QuantityError as exc:
            reader.error(INVALID_VALUE, invalid(where, amount, str(exc)), where)
            continue
        if quantity < 0:
            reader.error(INVALID_VALUE, invalid(where, amount, "must be greater than or equal to 0"), where)
            continue
        out[resource] = amount
    out.setdefault("pods", DEFAULT_MAX_PODS)
    return out


def _check_label(reader: _Reader, key: str, value: str, at: Path) -> None:
    key_problems = is_qualified_name(key)
    if key_problems:
        reader.error(INVALID_VALUE, invalid(at, key, key_problems[0]), at)
        return
    value_problems = is_valid_label_value(value)
    if value_problems:
        reader.error(INVALID_VALUE, invalid(at, value, value_problems[0]), at)


def _parse_taint(reader: _Reader, value: Any, at: Path) -> dict[str, str]:
    taint = reader.mapping(value, at, ("key", "value", "effect"), ("key", "effect"))
    if taint is None:
        return {}
    key = reader.string(taint.get("key"), (*at, "key"))
    text = reader.string(taint.get("value"), (*at, "value"))
    effect = reader.string(taint.get("effect"), (*at, "effect"))
    if effect is not None and effect not in TAINT_EFFECTS:
        reader.error(INVALID_VALUE, not_supported((*at, "effect"), effect, TAINT_EFFECTS), (*at, "effect"))
        return {}
    if key is None or effect is None:
        return {}
    out = {"key": key, "effect": effect}
    if text is not None:
        out["value"] = text
    return out


def _parse_submission(reader: _Reader, value: Any, at: Path, index: int, base: str) -> Submission | None:
    entry = reader.mapping(value, at, ("at", "files", "objects"), ("at",))
    if entry is None:
        return None
    when = reader.duration(entry.get("at"), (*at, "at"))
    submission = Submission(when or 0.0, index)
    if entry.get("files") is None and entry.get("objects") is None:
        reader.error(REQUIRED, required((*at, "files"), "a submission needs files, objects or both"), (*at, "files"))
    for i, item in enumerate(reader.sequence(entry.get("files"), (*at, "files"))):
        text = reader.string(item, (*at, "files", i))
        if text is None:
            continue
        if not text:
            reader.error(INVALID_VALUE, invalid((*at, "files", i), text, "must be a path"), (*at, "files", i))
            continue
        resolved = text if os.path.isabs(text) else os.path.join(base, text)
        submission.files.append(FileRef(text, resolved, (*at, "files", i)))
    for i, item in enumerate(reader.sequence(entry.get("objects"), (*at, "objects"))):
        where: Path = (*at, "objects", i)
        if not isinstance(item, dict):
            reader.error(core.NOT_AN_OBJECT, f"{path_string(where)}: an object (a mapping) is expected", where)
            continue
        missing = [k for k in ("apiVersion", "kind") if not isinstance(item.get(k), str) or not item.get(k)]
        if missing:
            reader.error(core.MISSING_TYPE,
                         f"document is missing {' and '.join(missing)}: every Kubernetes object needs apiVersion and kind",
                         where)
            continue
        if request_too_large(item):
            # A Scenario is no API object: the API server's request limit applies to each object it submits.
            reader.error(core.OBJECT_TOO_LARGE, too_large_message(), where)
            continue
        record = ObjectRecord(reader.record.document, reader.record.prefix + where, item)
        submission.records.append(record)
    # Kept even with errors (a bad ``at``): its files are still checked, so that every problem is
    # reported in one run; a Scenario with errors never runs (parse_scenario returns None unless partial).
    return submission


def _parse_action(reader: _Reader, value: Any, at: Path, index: int) -> Action | None:
    entry = reader.mapping(value, at, ("at", *ACTION_VERBS), ("at",))
    if entry is None:
        return None
    verbs = [verb for verb in ACTION_VERBS if verb in entry]
    errors_before = len(reader.diagnostics)
    when = reader.duration(entry.get("at"), (*at, "at"))
    if len(verbs) != 1:
        found = "none" if not verbs else " and ".join(verbs)
        reader.error(INVALID_ACTION,
                     f"{path_string(at)}: an action needs exactly one of {', '.join(ACTION_VERBS)} (found {found})", at)
        return None
    verb = verbs[0]
    where: Path = (*at, verb)
    action: Action | None = None
    if verb == "failNode":
        node = reader.string(entry.get(verb), where)
        if node is None:
            reader.error(REQUIRED, required(where, "the name of a node"), where)
        else:
            action = Action(0.0, index, verb, node=node)
    elif verb == "failPod":
        pod = _parse_pod_target(reader, entry.get(verb), where)
        if pod is not None:
            action = Action(0.0, index, verb, pod=pod)
    else:
        target = _parse_object_target(reader, entry.get(verb), where, verb)
        merge = _parse_merge(reader, entry.get(verb), where) if verb == "patch" else None
        if target is not None and (verb != "patch" or merge is not None):
            action = Action(0.0, index, verb, target=target, merge=merge)
    if action is None or when is None or len(reader.diagnostics) > errors_before:
        return None
    return Action(when, index, action.verb, action.node, action.pod, action.target, action.merge)


def _parse_merge(reader: _Reader, value: Any, at: Path) -> dict[str, Any] | None:
    """``patch.merge``: a mapping (the merge patch). It may not rename or move the object."""
    if not isinstance(value, dict):
        return None
    where = (*at, "merge")
    merge = value.get("merge")
    if merge is None:
        reader.error(REQUIRED, required(where, "a JSON merge patch (a mapping)"), where)
        return None
    body = reader.mapping(merge, where, None)
    if body is None:
        return None
    for key in ("apiVersion", "kind"):
        if key in body:
            reader.error(INVALID_VALUE, invalid((*where, key), body[key], "a patch may not change it"), (*where, key))
            return None
    metadata = body.get("metadata")
    if isinstance(metadata, dict) and any(k in metadata for k in ("name", "namespace")):
        reader.error(INVALID_VALUE, invalid((*where, "metadata"), "name/namespace", "a patch may not change them"),
                     (*where, "metadata"))
        return None
    return body


def _parse_pod_target(reader: _Reader, value: Any, at: Path) -> PodTarget | None:
    entry = reader.mapping(value, at, ("namespace", "name", "namePrefix"))
    if entry is None:
        return None
    namespace = reader.string(entry.get("namespace"), (*at, "namespace")) or "default"
    name = reader.string(entry.get("name"), (*at, "name"))
    prefix = reader.string(entry.get("namePrefix"), (*at, "namePrefix"))
    if (name is None) == (prefix is None):
        reader.error(INVALID_ACTION, f"{path_string(at)}: give exactly one of name or namePrefix", at)
        return None
    if not (name or prefix):
        reader.error(INVALID_VALUE, invalid((*at, "name" if name is not None else "namePrefix"), "", "must not be empty"), at)
        return None
    return PodTarget(namespace, name, prefix)


def _parse_object_target(reader: _Reader, value: Any, at: Path, verb: str) -> ObjectTarget | None:
    keys = ("apiVersion", "kind", "namespace", "name", *(("merge",) if verb == "patch" else ()))
    entry = reader.mapping(value, at, keys, ("kind", "name"))
    if entry is None:
        return None
    kind = reader.string(entry.get("kind"), (*at, "kind"))
    name = reader.string(entry.get("name"), (*at, "name"))
    namespace = reader.string(entry.get("namespace"), (*at, "namespace"))
    api_version = reader.string(entry.get("apiVersion"), (*at, "apiVersion"))
    if kind is not None and verb in ("suspend", "resume") and kind not in SUSPENDABLE_KINDS:
        reader.error(INVALID_VALUE, not_supported((*at, "kind"), kind, list(SUSPENDABLE_KINDS)), (*at, "kind"))
        return None
    if kind is None or name is None:
        return None
    if api_version is not None:
        group = api_version.partition("/")[0] if "/" in api_version else ""
    elif kind in KIND_GROUPS:
        group = KIND_GROUPS[kind]
    else:
        reader.error(INVALID_VALUE, invalid((*at, "kind"), kind,
                                            "unknown kind: give apiVersion too, or one of " + ", ".join(sorted(KIND_GROUPS))),
                     (*at, "kind"))
        return None
    scoped = "" if kind in CLUSTER_SCOPED_KINDS else (namespace or "default")
    return ObjectTarget(group, kind, scoped, name)
