"""Label selectors and node selector terms, compiled once and matched many times.

Semantics follow apimachinery ``labels`` (used by pod (anti-)affinity terms) and
``nodeaffinity`` (``NodeSelectorRequirement``, used by required node affinity):

* label selectors: ``matchLabels`` k=v is ``k In (v)``; ``In``/``NotIn``/``Exists``/``DoesNotExist``;
  ``NotIn`` and ``DoesNotExist`` match when the key is absent; an empty selector ``{}`` matches every
  object, a null selector matches nothing (``LabelSelectorAsSelector(nil)`` is ``Nothing``);
* node selector requirements add ``Gt``/``Lt`` (the label must exist and parse as an integer);
  ``matchFields`` supports ``metadata.name`` only; a term with no requirements matches nothing; terms
  are ORed, requirements inside a term ANDed.

Malformed input (an unknown operator, a non-list ``values``) compiles to a selector that matches
nothing, the conservative reading of an object admission would have rejected anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT = "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"
LABEL_OPERATORS = frozenset({IN, NOT_IN, EXISTS, DOES_NOT_EXIST})
NODE_OPERATORS = LABEL_OPERATORS | {GT, LT}
#: The only field a node selector term may match on.
NODE_NAME_FIELD = "metadata.name"


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == IN:
            value = labels.get(self.key)
            return value is not None and value in self.values
        if op == NOT_IN:
            value = labels.get(self.key)
            return value is None or value not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GT, LT):
            raw = labels.get(self.key)
            bound = _single_int(self.values)
            if raw is None or bound is None:
                return False
            try:
                number = int(raw)
            except ValueError:
                return False
            return number > bound if op == GT else number < bound
        return False

    @property
    def is_positive(self) -> bool:
        """Whether a matching object must carry the key (``In``/``Exists``): usable as an index key."""
        return self.operator in (IN, EXISTS)


def _single_int(values: frozenset[str]) -> int | None:
    if len(values) != 1:
        return None
    try:
        return int(next(iter(values)))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A compiled ``metav1.LabelSelector``. ``nothing`` marks the null selector."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        return all(requirement.matches(labels) for requirement in self.requirements)

    @property
    def is_everything(self) -> bool:
        return not self.nothing and not self.requirements

    def with_requirements(self, extra: tuple[Requirement, ...]) -> LabelSelector:
        return LabelSelector(self.requirements + extra, self.nothing)


NOTHING = LabelSelector(nothing=True)
EVERYTHING = LabelSelector()


def _values(raw: Any) -> frozenset[str] | None:
    if raw is None:
        return frozenset()
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        return None
    return frozenset(raw)


def _requirement(expression: Any, operators: frozenset[str]) -> Requirement | None:
    if not isinstance(expression, dict):
        return None
    key, operator = expression.get("key"), expression.get("operator")
    values = _values(expression.get("values"))
    if not isinstance(key, str) or operator not in operators or values is None:
        return None
    return Requirement(key, str(operator), values)


def compile_label_selector(selector: Any) -> LabelSelector:
    """``metav1.LabelSelector`` (a mapping, or None for a null selector)."""
    if selector is None:
        return NOTHING
    if not isinstance(selector, dict):
        return NOTHING
    requirements: list[Requirement] = []
    match_labels = selector.get("matchLabels")
    if isinstance(match_labels, dict):
        for key, value in sorted(match_labels.items()):
            if not isinstance(key, str) or not isinstance(value, str):
                return NOTHING
            requirements.append(Requirement(key, IN, frozenset({value})))
    elif match_labels is not None:
        return NOTHING
    expressions = selector.get("matchExpressions")
    if isinstance(expressions, list):
        for expression in expressions:
            requirement = _requirement(expression, LABEL_OPERATORS)
            if requirement is None:
                return NOTHING
            requirements.append(requirement)
    elif expressions is not None:
        return NOTHING
    return LabelSelector(tuple(requirements))


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    expressions: tuple[Requirement, ...]
    fields: tuple[Requirement, ...]
    valid: bool = True

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if not self.valid or (not self.expressions and not self.fields):
            return False
        for requirement in self.expressions:
            if not requirement.matches(labels):
                return False
        if self.fields:
            name_labels = {NODE_NAME_FIELD: node_name}
            for requirement in self.fields:
                if requirement.key != NODE_NAME_FIELD or not requirement.matches(name_labels):
                    return False
        return True


def compile_node_selector_term(term: Any) -> NodeSelectorTerm:
    if not isinstance(term, dict):
        return NodeSelectorTerm((), (), valid=False)
    compiled: dict[str, list[Requirement]] = {"matchExpressions": [], "matchFields": []}
    for name in compiled:
        raw = term.get(name)
        if raw is None:
            continue
        if not isinstance(raw, list):
            return NodeSelectorTerm((), (), valid=False)
        for expression in raw:
            requirement = _requirement(expression, NODE_OPERATORS)
            if requirement is None:
                return NodeSelectorTerm((), (), valid=False)
            compiled[name].append(requirement)
    return NodeSelectorTerm(tuple(compiled["matchExpressions"]), tuple(compiled["matchFields"]))


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """``nodeSelector`` (all pairs must match) AND ``requiredDuringScheduling...`` terms (any must match)."""

    node_selector: tuple[tuple[str, str], ...] = ()
    #: None when the pod has no required node affinity; an empty tuple matches no node.
    terms: tuple[NodeSelectorTerm, ...] | None = None

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        for key, value in self.node_selector:
            if labels.get(key) != value:
                return False
        if self.terms is None:
            return True
        return any(term.matches(labels, node_name) for term in self.terms)

    @property
    def is_empty(self) -> bool:
        return not self.node_selector and self.terms is None


def compile_required_node_affinity(node_selector: Mapping[str, str], affinity: Any) -> RequiredNodeAffinity:
    terms: tuple[NodeSelectorTerm, ...] | None = None
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(
        node_affinity, dict) else None
    if isinstance(required, dict):
        raw_terms = required.get("nodeSelectorTerms")
        terms = tuple(compile_node_selector_term(t) for t in raw_terms) if isinstance(raw_terms, list) else ()
    return RequiredNodeAffinity(tuple(sorted(node_selector.items())), terms)
