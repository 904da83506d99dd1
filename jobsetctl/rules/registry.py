"""One registry of rules drives ``jobsetctl rules``, ``--ignore`` checking, SARIF ``rules[]`` and the docs.

Rules are defined with :func:`define` at import time by the module that implements them. The list of
those modules is explicit (yamllint's idea) so that ``all_rules()`` is complete without scanning.
"""

from __future__ import annotations

import importlib
import textwrap

from jobsetctl.diagnostics import Layer, Severity
from jobsetctl.rules.interface import Rule

_RULES: dict[str, Rule] = {}

#: Modules that define rules. Importing them registers their rules.
RULE_MODULES: tuple[str, ...] = (
    "jobsetctl.rules.core",
    "jobsetctl.admission.schema",
    "jobsetctl.admission.cel",
    "jobsetctl.jobset.webhook",
    "jobsetctl.jobset.update",
    "jobsetctl.jobset.consequences",
    "jobsetctl.trainer.webhook",
    "jobsetctl.kube.job",
    "jobsetctl.kube.scheduling",
    "jobsetctl.kube.priority",
    "jobsetctl.reference",
    "jobsetctl.duplicates",
    "jobsetctl.lint",
    "jobsetctl.jobset.podwebhook",
    "jobsetctl.fakecluster.podadmission",
    "jobsetctl.simulate.scenario",
    "jobsetctl.kueue.job_rules",
    "jobsetctl.kueue.webhooks",
    "jobsetctl.kueue.webhook_workload",
    "jobsetctl.kueue.references",
)


def define(
    rule_id: str,
    layer: Layer,
    severity: Severity,
    summary: str,
    *,
    spec: str = "",
    doc: str = "",
    waits: bool = False,
) -> Rule:
    """Register a rule. A second definition of the same id is a programming error."""
    rule = Rule(rule_id, layer, severity, summary, spec, doc, waits)
    existing = _RULES.get(rule_id)
    if existing is not None and existing != rule:
        raise ValueError(f"rule {rule_id!r} defined twice")
    _RULES[rule_id] = rule
    return rule


def example_doc(why: str, passing: str, failing: str) -> str:
    """A rule's ``doc``: why it matters, then a passing and a failing manifest."""
    def block(text: str) -> str:
        return textwrap.indent(textwrap.dedent(text).strip("\n"), "    ")

    return f"{textwrap.dedent(why).strip()}\n\nPasses:\n\n{block(passing)}\n\nFails:\n\n{block(failing)}\n"


def _load_all() -> None:
    for module in RULE_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:  # a module of a later milestone may not exist yet
            if exc.name != module:
                raise


def all_rules() -> list[Rule]:
    _load_all()
    return sorted(_RULES.values(), key=lambda r: (list(Layer).index(r.layer), r.id))


def get(rule_id: str) -> Rule | None:
    if rule_id not in _RULES:
        _load_all()
    return _RULES.get(rule_id)
