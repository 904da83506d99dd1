"""The lint registry and every lint's own documentation (anchors.md §5.2, §5.5: one module per rule,
docs with passing and failing examples, an explicit id → module registry)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from jobsetctl.diagnostics import Layer, Severity
from jobsetctl.lint import LINTS, get
from jobsetctl.lint.support import clear_caches
from jobsetctl.rules import all_rules
from tests.helpers import validate_text

MODULES = sorted(LINTS.items())
#: Lint-layer rules outside the registry: checks over every loaded document, admitted or not, that phase B
#: of validate runs itself (jobsetctl/duplicates.py; ``kubectl apply`` accepts both definitions).
OVER_ALL_INPUTS = {"duplicate-object"}


def test_registry_holds_exactly_the_lint_layer_rules() -> None:
    assert sorted(LINTS) == sorted(r.id for r in all_rules() if r.layer is Layer.LINT and r.id not in OVER_ALL_INPUTS)


def test_get_raises_for_a_rule_that_is_not_a_lint() -> None:
    assert get("jobset-depends-on-self").RULE.id == "jobset-depends-on-self"
    with pytest.raises(KeyError):
        get("jobset-depends-on-first")


@pytest.mark.parametrize(("rule_id", "module"), MODULES, ids=[rule_id for rule_id, _ in MODULES])
def test_module_contract(rule_id: str, module: ModuleType) -> None:
    rule = module.RULE
    assert rule.id == rule_id
    assert module.__name__.rsplit(".", 1)[1] == rule_id.replace("-", "_"), "one module per rule, named after it"
    assert rule.severity in (Severity.WARNING, Severity.INFO), "lints never make validate fail without --strict"
    assert rule.summary and "\n" not in rule.summary and len(rule.summary) <= 120
    assert rule.spec, "cite the spec section the lint relies on"
    assert module.__doc__ and rule_id in module.__doc__
    assert module.KINDS and all(isinstance(k, tuple) and len(k) == 2 for k in module.KINDS)
    assert callable(module.check)
    # The doc carries the reason and both examples, as written in the module.
    assert "Passes:" in rule.doc and "Fails:" in rule.doc
    assert textwrap.indent(textwrap.dedent(module.PASSING).strip("\n"), "    ") in rule.doc
    assert textwrap.indent(textwrap.dedent(module.FAILING).strip("\n"), "    ") in rule.doc


@pytest.mark.parametrize(("rule_id", "module"), MODULES, ids=[rule_id for rule_id, _ in MODULES])
def test_documented_failing_example_fails(tmp_path: Path, rule_id: str, module: ModuleType) -> None:
    rules = [d.rule for d in validate_text(tmp_path, module.FAILING)]
    assert rule_id in rules


@pytest.mark.parametrize(("rule_id", "module"), MODULES, ids=[rule_id for rule_id, _ in MODULES])
def test_documented_passing_example_is_clean(tmp_path: Path, rule_id: str, module: ModuleType) -> None:
    assert [(d.line, d.column, d.rule) for d in validate_text(tmp_path, module.PASSING)] == []


def test_lint_layer_reports_only_lint_rules(tmp_path: Path) -> None:
    text = "\n---\n".join(textwrap.dedent(m.FAILING) for _, m in MODULES)
    found = {d.rule for d in validate_text(tmp_path, text) if str(d.layer) == "lint"}
    assert found and found <= set(LINTS) | OVER_ALL_INPUTS


def test_runs_do_not_share_trainjob_expansions(tmp_path: Path) -> None:
    # The per-run cache is keyed by object identity; two runs over the same text agree.
    module = get("trainjob-nproc-from-cpu")
    first = [(d.line, d.rule) for d in validate_text(tmp_path, module.FAILING)]
    clear_caches()
    second = [(d.line, d.rule) for d in validate_text(tmp_path, module.FAILING)]
    assert first == second == [(30, "trainjob-nproc-from-cpu")]
