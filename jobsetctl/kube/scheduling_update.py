"""Update rules of the scheduling kinds (scheduling.md §1.2 "immutable" notes).

* 1.35/1.36: ``controllerRef`` (once set) and the template list of a Workload are immutable as a
  whole; a PodGroup's spec is immutable (``ValidateImmutableField`` → ``field is immutable``).
* 1.37: templates may not be added or removed and their fields stay immutable, except
  ``schedulingPolicy.gang.minCount`` (``minGroupCount`` for composite groups), which is mutable to
  support workload scaling; switching between ``basic`` and ``gang`` stays forbidden.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube import field as kfield
from jobsetctl.kube.field import Path, path_string
from jobsetctl.kube.jsontree import copy_tree
from jobsetctl.kube.scheduling_checks import items, mapping, walk_templates
from jobsetctl.kube.scheduling_rules import KindRules

IMMUTABLE = "field is immutable"
SPEC: Path = ("spec",)


def _finding(rules: KindRules, message: str, at: Path) -> Finding:
    return rules.immutable.finding(message, path=path_string(at), at=at)


def _without_count(policy: Any, count_key: str) -> Any:
    """The policy with its mutable count removed, to compare the rest."""
    stripped = copy_tree(policy)
    gang = mapping(stripped).get("gang") if isinstance(stripped, dict) else None
    if isinstance(gang, dict):
        gang.pop(count_key, None)
    return stripped


def _variant(policy: Any) -> tuple[str, ...]:
    return tuple(key for key in ("basic", "gang") if mapping(policy).get(key) is not None)


def compare_group(rules: KindRules, old: dict[str, Any], new: dict[str, Any], path: Path,
                   count_key: str, skip: tuple[str, ...] = ()) -> list[Finding]:
    """1.37: every field immutable but the gang count; the policy variant may not switch."""
    findings: list[Finding] = []
    for key in sorted(set(old) | set(new)):
        if key in skip:
            continue
        here = (*path, key)
        if key == "schedulingPolicy":
            if _variant(old.get(key)) != _variant(new.get(key)):
                # Declarative validation reports the member fields; the wording of the "update"
                # origin error is not in the tests read [UNCONFIRMED].
                findings.append(_finding(rules, kfield.invalid(here, new.get(key), IMMUTABLE), here))
            elif _without_count(old.get(key), count_key) != _without_count(new.get(key), count_key):
                findings.append(_finding(rules, kfield.invalid(here, new.get(key), IMMUTABLE), here))
            continue
        if old.get(key) != new.get(key):
            findings.append(_finding(rules, kfield.invalid(here, new.get(key), IMMUTABLE), here))
    return findings


def immutability(kind: str, rules: KindRules, old: Object, new: Object, ctx: AdmissionContext) -> list[Finding]:
    old_spec, new_spec = mapping(old.get("spec")), mapping(new.get("spec"))
    if kind == "Workload":
        return _workload(rules, old_spec, new_spec, ctx)
    count_key = "minGroupCount" if kind == "CompositePodGroup" else "minCount"
    if ctx.version.minor <= 36:
        findings: list[Finding] = []
        for key in sorted(set(old_spec) | set(new_spec)):
            if old_spec.get(key) != new_spec.get(key):
                here = (*SPEC, key)
                findings.append(_finding(rules, kfield.invalid(here, new_spec.get(key), IMMUTABLE), here))
        return findings
    return compare_group(rules, old_spec, new_spec, SPEC, count_key)


def _workload(rules: KindRules, old_spec: dict[str, Any], new_spec: dict[str, Any],
              ctx: AdmissionContext) -> list[Finding]:
    findings: list[Finding] = []
    ref_path = (*SPEC, "controllerRef")
    if old_spec.get("controllerRef") is not None and old_spec.get("controllerRef") != new_spec.get("controllerRef"):
        findings.append(_finding(rules, kfield.invalid(ref_path, new_spec.get("controllerRef"), IMMUTABLE), ref_path))
    if ctx.version.minor <= 36:
        key = "podGroups" if ctx.version.minor <= 35 else "podGroupTemplates"
        if old_spec.get(key) != new_spec.get(key):
            here = (*SPEC, key)
            findings.append(_finding(rules, kfield.invalid(here, new_spec.get(key), IMMUTABLE), here))
        return findings
    old_templates = {path_string(p): (t, composite) for t, p, composite, _ in walk_templates(old_spec, SPEC)}
    new_templates = {path_string(p): (t, composite, p) for t, p, composite, _ in walk_templates(new_spec, SPEC)}
    for key in ("podGroupTemplates", "compositePodGroupTemplates"):
        old_names = [mapping(t).get("name") for t in items(old_spec.get(key))]
        new_names = [mapping(t).get("name") for t in items(new_spec.get(key))]
        if old_names != new_names:
            here = (*SPEC, key)
            # [UNCONFIRMED] detail: declarative validation reports a Forbidden with origin "update".
            findings.append(_finding(rules, kfield.forbidden(here, "templates may not be added or removed"), here))
    for where, (template, composite, path) in new_templates.items():
        previous = old_templates.get(where)
        if previous is None or previous[1] != composite:
            continue
        skip = ("podGroupTemplates", "compositePodGroupTemplates") if composite else ()
        findings.extend(compare_group(
            rules, mapping(previous[0]), mapping(template), path,
            "minGroupCount" if composite else "minCount", skip,
        ))
    return findings
