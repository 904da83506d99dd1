"""CEL ``x-kubernetes-validations``: what the API server's CRD validator does after the schema checks.

Mirrors ``k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go`` (jobset.md §1.2
"CEL caveat", trainer.md §1.2 note and §2.2):

* the object is walked with its schema, only into subtrees that carry rules; null values are not
  validated; each rule runs with ``self`` bound to the value at its node, typed by the schema
  (:mod:`.cel_schema`);
* transition rules (rules that use ``oldSelf``) run only on an update, and only where the old value
  correlates: object fields by name, maps by key (``x-kubernetes-map-type`` granular or atomic),
  list-map items by their keys; items of atomic lists and sets never correlate. So adding or
  removing a field is not blocked by ``self == oldSelf`` (quirk, see the tests). With
  ``optionalOldSelf`` the rule always runs and ``oldSelf`` is an optional;
* messages: ``<path>: Invalid value: "<type>": <message>`` (``Forbidden: <message>``,
  ``Required value: <message>``, ``Duplicate value: "<type>"`` for the other ``reason`` values),
  with ``fieldPath`` appended to the node path; a rule at the resource root has the nil path, which
  apimachinery prints as ``<nil>``; no message gives ``failed rule: <rule>``; ``messageExpression``
  replaces the message when it yields a usable string and falls back to it otherwise;
* evaluation errors: ``<error> evaluating rule: <message or rule>``, and for overload errors
  ``'<error>': call arguments did not match a supported operator, function or macro signature for
  rule: <...>``;
* cost: each rule may spend ``PerCallLimit`` (1,000,000) units and the whole object
  ``RuntimeCELCostBudget`` (10,000,000); past either, the API server stops running rules for the
  object;
* ratcheting (``CRDValidationRatcheting``, GA and locked on since Kubernetes 1.33, so on in every
  release we model): on an update, a failing rule that does not use ``oldSelf`` at a value that is
  unchanged from the old object is returned as a warning, not an error.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Final

from jobsetctl.admission.cel_compile import NO_OLD, PER_CALL_LIMIT, Program
from jobsetctl.admission.cel_fieldpath import normalize_field_path
from jobsetctl.admission.cel_program import FallbackProgram, UnsupportedRule, program_for
from jobsetctl.admission.cel_schema import child_schema, info, map_list_key, ratchet_equal, schema_type
from jobsetctl.admission.cel_values import CelError, CostExceeded, Optional
from jobsetctl.admission.schema import CelRule, SchemaNode, StructuralSchema
from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kube import field
from jobsetctl.kube.field import Path
from jobsetctl.rules.registry import define

RULE = define(
    "cel-rule", Layer.CEL, Severity.ERROR,
    "An x-kubernetes-validations rule of the CRD failed, or could not be evaluated on this object.",
    spec="jobset.md §1.2, trainer.md §1.1, trainer.md §2.2",
)
TRANSITION = define(
    "cel-transition", Layer.CEL, Severity.ERROR,
    "A transition rule (one that uses oldSelf, such as `self == oldSelf`) failed on an update.",
    spec="jobset.md §1.2 (CEL caveat), trainer.md §1.2",
)
COST = define(
    "cel-cost", Layer.CEL, Severity.ERROR,
    "CEL evaluation exceeded the API server's cost limit; the remaining rules were not run.",
    spec="trainer.md §2.2",
)
UNSUPPORTED = define(
    "cel-unsupported", Layer.CEL, Severity.INFO,
    "A validation rule jobsetctl cannot evaluate; it was not checked.",
)

#: ``celconfig.RuntimeCELCostBudget``: what all rules of one object may spend together.
RUNTIME_COST_BUDGET: Final = 10_000_000
#: ``celconfig.MaxEvaluatedMessageExpressionSizeBytes``.
MAX_MESSAGE_EXPRESSION_BYTES: Final = 5 * 1024
RATCHET_HINT: Final = (
    "the value is unchanged from the old object, so the API server only warns (CRD validation ratcheting)"
)


def validate_cel(
    schema: StructuralSchema, obj: Any, old: Any = None, *,
    budget: int = RUNTIME_COST_BUDGET, per_call_limit: int = PER_CALL_LIMIT,
) -> list[Finding]:
    """Findings of the ``x-kubernetes-validations`` rules for a create (``old`` None) or an update.

    ``budget`` and ``per_call_limit`` are the API server's cost limits; they are parameters so that
    their effect can be shown without minutes of evaluation.
    """
    root = schema.root
    if obj is None or not has_rules(root):
        return []
    walk = _Walk(update=old is not None, budget=budget, per_call_limit=per_call_limit)
    root_corr = (obj, old, root) if old is not None else None
    walk.visit(root, obj, old, None, (), root_corr, None, True)
    return walk.findings


def has_rules(node: SchemaNode) -> bool:
    """Whether a node or a descendant carries rules (the schema compiler's ``has_validations``)."""
    return node.has_validations or bool(node.validations)


# ------------------------------------------------------------------------------------------ plans

@dataclass(frozen=True, slots=True)
class _RulePlan:
    rule: CelRule
    program: Program | FallbackProgram | UnsupportedRule
    message_program: Program | FallbackProgram | UnsupportedRule | None
    #: The normalized ``fieldPath`` (rendered, and as segments to point at), when the rule has one.
    field_path: tuple[str, Path] | None
    #: apimachinery's ``ruleErrorString``: the trimmed message, else the trimmed rule.
    error_string: str


@dataclass(frozen=True, slots=True)
class _NodePlan:
    rules: tuple[_RulePlan, ...]
    properties: tuple[tuple[str, SchemaNode], ...]
    additional: SchemaNode | None
    items: SchemaNode | None
    type_name: str


@functools.cache
def _plan(node: SchemaNode, resource_root: bool) -> _NodePlan:
    # Rules of allOf branches run at the same value, typed by this node (apiextensions'
    # AllOfValidators). Rules nested inside a branch's own properties are not visited: controller-gen
    # never emits them and the Kubernetes walk for them is intricate (noted limitation).
    own = [rule for branch in (node, *node.all_of) for rule in branch.validations]
    rules = tuple(_rule_plan(rule, node, resource_root) for rule in own)
    properties = tuple((name, child) for name, child in node.properties.items() if has_rules(child))
    additional = node.additional if isinstance(node.additional, SchemaNode) and has_rules(node.additional) else None
    items = node.items if node.items is not None and has_rules(node.items) else None
    type_name = "object" if resource_root and not schema_type(node) else schema_type(node)
    return _NodePlan(rules, properties, additional, items, type_name)


def _rule_plan(rule: CelRule, node: SchemaNode, resource_root: bool) -> _RulePlan:
    program = program_for(rule.rule, node, resource_root, rule.optional_old_self)
    message_program = program_for(rule.message_expression, node, resource_root) if rule.message_expression else None
    return _RulePlan(
        rule, program, message_program,
        normalize_field_path(rule.field_path, node) if rule.field_path else None,
        rule.message.strip() or rule.rule.strip(),
    )


# ------------------------------------------------------------------------------------------- walk

Correlation = tuple[Any, Any, SchemaNode | None]


def _child_path(path: str | None, name: str) -> str:
    return name if path is None else f"{path}.{name}"


def _key_path(path: str | None, key: str | int) -> str:
    return f"[{key}]" if path is None else f"{path}[{key}]"


class _Walk:
    def __init__(self, update: bool, budget: int, per_call_limit: int) -> None:
        self.update = update
        self.per_call_limit = per_call_limit
        self.findings: list[Finding] = []
        self.remaining = budget
        self.stopped = False
        self._unsupported: set[str] = set()

    def visit(
        self, node: SchemaNode, value: Any, old: Any, path: str | None, at: Path,
        corr: Correlation | None, anchor: Correlation | None, resource_root: bool,
    ) -> None:
        if value is None or self.stopped:
            return
        plan = _plan(node, resource_root)
        if plan.rules:
            self._evaluate(plan, node, value, old, path, at, corr, anchor)
            if self.stopped:
                return
        if type(value) is dict:
            # MapIsCorrelatable: unset, granular and atomic maps correlate their entries by key.
            old_map = old if type(old) is dict and node.map_type in (None, "granular", "atomic") else None
            if plan.additional is not None:
                for key, item in value.items():
                    self._descend(plan.additional, item, old_map, key, _key_path(path, key), at, corr, anchor)
            for name, child in plan.properties:
                if name in value:
                    self._descend(child, value[name], old_map, name, _child_path(path, name), at, corr, anchor)
        elif type(value) is list and plan.items is not None:
            old_items = _map_list_index(node, old)
            for index, item in enumerate(value):
                old_item = old_items.get(map_list_key(item, node.list_map_keys)) if old_items else None
                child_corr, child_anchor = self._index_corr(corr, anchor, index, node)
                self.visit(plan.items, item, old_item, _key_path(path, index), (*at, index),
                           child_corr, child_anchor, plan.items.embedded_resource)
                if self.stopped:
                    return

    def _descend(
        self, child: SchemaNode, item: Any, old_map: dict[str, Any] | None, key: str, path: str, at: Path,
        corr: Correlation | None, anchor: Correlation | None,
    ) -> None:
        old_item = old_map.get(key) if old_map is not None else None
        child_corr, child_anchor = self._key_corr(corr, anchor, key)
        self.visit(child, item, old_item, path, (*at, key), child_corr, child_anchor, child.embedded_resource)

    # Ratcheting correlation (CorrelatedObject.Key/Index); only computed on updates.

    def _key_corr(self, corr: Correlation | None, anchor: Correlation | None, key: str) -> tuple[Any, Any]:
        if corr is None:
            return None, anchor
        new, old, node = corr
        child = None
        if type(new) is dict and type(old) is dict and key in new and key in old:
            schema = child_schema(node, key)
            if schema is not None:
                child = (new[key], old[key], schema)
        return child, corr

    def _index_corr(
        self, corr: Correlation | None, anchor: Correlation | None, index: int, node: SchemaNode
    ) -> tuple[Any, Any]:
        if corr is None:
            return None, anchor
        new, old, _ = corr
        child = None
        if type(new) is list and type(old) is list and index < len(new) and node.items is not None:
            previous: Any = None
            if node.list_type == "map":
                previous = (_map_list_index(node, old) or {}).get(map_list_key(new[index], node.list_map_keys))
            elif node.list_type not in ("set", "atomic") and index < len(old):
                previous = old[index]
            if previous is not None:
                child = (new[index], previous, node.items)
        return child, corr

    # Rules.

    def _evaluate(
        self, plan: _NodePlan, node: SchemaNode, value: Any, old: Any, path: str | None, at: Path,
        corr: Correlation | None, anchor: Correlation | None,
    ) -> None:
        where = path if path is not None else "<nil>"
        # A value the schema cannot type (a malformed date-time...) is an error value for the rules
        # that read it, as UnstructuredToVal returns one.
        self_value = _typed(value, node)
        old_value = _typed(old, node) if old is not None else None
        for rule_plan in plan.rules:
            program = rule_plan.program
            rule = rule_plan.rule
            if isinstance(program, UnsupportedRule):
                self._unsupported_rule(rule.rule, program.reason, where, at)
                continue
            uses_old = program.uses_old_self
            if uses_old and old is None and not rule.optional_old_self:
                continue  # a transition rule runs only where an old value correlates
            reported_rule = TRANSITION if uses_old else RULE
            if self.remaining <= 0:
                self._stop(field.invalid(where, plan.type_name, "validation failed due to running out of cost "
                                         "budget, no further validation rules will be run"), where, at)
                return
            old_argument: Any = NO_OLD
            if rule.optional_old_self:
                old_argument = Optional(old is not None, old_value)
            elif uses_old:
                old_argument = old_value
            try:
                for argument in (self_value, old_argument):
                    if isinstance(argument, CelError):
                        raise argument
                result, cost = program.evaluate(self_value, old_argument, self.per_call_limit)
            except CostExceeded as exc:
                self._stop(field.invalid(where, plan.type_name, f"'{exc}': no further validation rules will be "
                                         f"run due to call cost exceeds limit for rule: {rule_plan.error_string}"),
                           where, at)
                return
            except CelError as exc:
                self._charge(program.static_cost)
                self.findings.append(reported_rule.finding(
                    field.invalid(where, plan.type_name, _evaluation_error(exc, rule_plan.error_string)),
                    path=path or "", at=at,
                ))
                continue
            except Exception as exc:  # the cel-python fallback refusing at run time
                self._unsupported_rule(rule.rule, str(exc), where, at)
                continue
            if cost > self.remaining:
                self._stop(field.invalid(where, plan.type_name, "validation failed due to running out of cost "
                                         "budget, no further validation rules will be run"), where, at)
                return
            self.remaining -= cost
            if result is True:
                continue
            self._failure(plan, rule_plan, reported_rule, self_value, old_value if old is not None else NO_OLD,
                          path, at, uses_old, corr, anchor)
            if self.stopped:
                return

    def _failure(
        self, plan: _NodePlan, rule_plan: _RulePlan, reported_rule: Any, self_value: Any, old_value: Any,
        path: str | None, at: Path, uses_old: bool, corr: Correlation | None, anchor: Correlation | None,
    ) -> None:
        rule = rule_plan.rule
        where = path if path is not None else "<nil>"
        error_path, error_at = where, at
        if rule_plan.field_path is not None:
            rendered, segments = rule_plan.field_path
            error_path = rendered if path is None else f"{path}.{rendered}"
            error_at = at + segments
        detail = rule.message.strip() or f"failed rule: {rule.rule.strip()}"
        if rule_plan.message_program is not None:
            evaluated = self._message(rule_plan.message_program, self_value, old_value)
            if isinstance(evaluated, _Abort):
                self._stop(field.invalid(error_path, plan.type_name, evaluated.detail), error_path, error_at)
                return
            if evaluated is not None:
                detail = evaluated
        message = _field_error_for_reason(rule.reason, error_path, plan.type_name, detail)
        ratcheted = self.update and not uses_old and _should_ratchet(corr, anchor)
        self.findings.append(reported_rule.finding(
            message, path=error_path if error_path != "<nil>" else "", at=error_at,
            severity=Severity.WARNING if ratcheted else None, hint=RATCHET_HINT if ratcheted else None,
        ))

    def _message(self, program: Any, self_value: Any, old_value: Any) -> str | _Abort | None:
        """``evalMessageExpression``: the string, an abort (cost), or None to fall back to ``message``."""
        if isinstance(program, UnsupportedRule):
            return None
        if program.uses_old_self and old_value is NO_OLD:
            return None  # oldSelf is not bound: an evaluation error, so the message is used
        try:
            result, cost = program.evaluate(
                self_value, old_value if program.uses_old_self else NO_OLD, self.per_call_limit
            )
        except CostExceeded:
            return _Abort("no further validation rules will be run due to call cost exceeds limit for "
                          f"messageExpression: {field.go_quote(program.text)}")
        except Exception:
            return None
        if cost > self.remaining:
            return _Abort("messageExpression evaluation failed due to running out of cost budget, "
                          "no further validation rules will be run")
        self.remaining -= cost
        if type(result) is not str:
            return None
        text = result.strip()
        if not text or "\n" in text or len(text.encode("utf-8")) > MAX_MESSAGE_EXPRESSION_BYTES:
            return None
        return text

    def _charge(self, cost: int) -> None:
        self.remaining -= cost

    def _stop(self, message: str, path: str, at: Path) -> None:
        self.findings.append(COST.finding(message, path=path if path != "<nil>" else "", at=at))
        self.stopped = True

    def _unsupported_rule(self, rule: str, reason: str, path: str, at: Path) -> None:
        if rule in self._unsupported:
            return
        self._unsupported.add(rule)
        self.findings.append(UNSUPPORTED.finding(
            f"{path}: rule not checked, jobsetctl cannot evaluate it ({reason}): {rule.strip()}",
            path=path if path != "<nil>" else "", at=at,
        ))


@dataclass(frozen=True, slots=True)
class _Abort:
    detail: str


def _typed(value: Any, node: SchemaNode) -> Any:
    """The value as a rule's ``self`` sees it, or the :class:`CelError` typing it produced."""
    converter = info(node).converter
    if converter is None or value is None:
        return value
    try:
        return converter(value)
    except CelError as exc:
        return exc


def _map_list_index(node: SchemaNode, old: Any) -> dict[Any, Any] | None:
    """Old items of a list-map by key (``makeMapList``); None for other lists (not correlatable)."""
    if node.list_type != "map" or type(old) is not list or not node.list_map_keys:
        return None
    return {map_list_key(item, node.list_map_keys): item for item in old}


def _should_ratchet(corr: Correlation | None, anchor: Correlation | None) -> bool:
    target = corr if corr is not None else anchor
    return target is not None and ratchet_equal(*target)


def _evaluation_error(exc: CelError, error_string: str) -> str:
    text = str(exc)
    if text.startswith("no such overload"):
        return (f"'{text}': call arguments did not match a supported operator, function or macro signature "
                f"for rule: {error_string}")
    return f"{text} evaluating rule: {error_string}"


def _field_error_for_reason(reason: str, path: str, type_name: str, detail: str) -> str:
    """``fieldErrorForReason``: the ``reason`` of a rule picks the apimachinery error type."""
    if reason == "FieldValueForbidden":
        return field.forbidden(path, detail)
    if reason == "FieldValueRequired":
        return field.required(path, detail)
    if reason == "FieldValueDuplicate":
        return field.duplicate(path, type_name)
    return field.invalid(path, type_name, detail)


__all__ = ["COST", "PER_CALL_LIMIT", "RULE", "RUNTIME_COST_BUDGET", "TRANSITION", "UNSUPPORTED", "validate_cel"]
