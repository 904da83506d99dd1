"""The pre-parsed CEL rules of the shipped schemas (jobsetctl/admission/cel_builtin.py)."""

from __future__ import annotations

import pytest

from jobsetctl.admission import cel_parse
from jobsetctl.admission.cel_builtin import ASTS
from jobsetctl.admission.cel_builtin_gen import MODULE, builtin_rule_texts, module_text


def test_generated_module_is_up_to_date() -> None:
    # After editing a schema's x-kubernetes-validations: python -m jobsetctl.admission.cel_builtin_gen
    assert MODULE.read_text(encoding="utf-8") == module_text()


def test_every_shipped_rule_is_pre_parsed() -> None:
    texts = builtin_rule_texts()
    assert texts and sorted(ASTS) == texts


@pytest.mark.parametrize("text", sorted(ASTS))
def test_pre_parsed_ast_equals_what_celpy_parses(text: str) -> None:
    assert ASTS[text] == cel_parse.parse_with_celpy(text)
    assert cel_parse.parse(text) is ASTS[text]


def test_other_text_is_still_parsed() -> None:
    assert cel_parse.parse("self.x + 1 > 2") == cel_parse.parse_with_celpy("self.x + 1 > 2")
    with pytest.raises(cel_parse.CelSyntaxError):
        cel_parse.parse("self.(")
