"""Generate :mod:`jobsetctl.admission.cel_builtin`: the parsed CEL rules of the CRD schemas we ship.

Building cel-python's lark parser costs about half a second of CPU (an LALR table analysis of its
grammar), paid by every ``validate`` process and by each of its parallel workers, while the schemas we
ship hold only a handful of rules. Their ASTs are therefore parsed here, once, when a schema changes,
and written out as Python source; :func:`jobsetctl.admission.cel_parse.parse` looks there first and
builds the parser only for other text (``--crd`` rules, CEL in tests).

    python -m jobsetctl.admission.cel_builtin_gen   # rewrite cel_builtin.py after editing a schema

``tests/admission/test_cel_builtin.py`` fails when the module is out of date.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from jobsetctl.admission import cel_parse

MODULE = Path(__file__).with_name("cel_builtin.py")

_HEADER = '''"""Parsed CEL rules of the CRD schemas under jobsetctl/schemas (generated: do not edit).

Written by ``python -m jobsetctl.admission.cel_builtin_gen``; see that module for why.
"""

from __future__ import annotations

from jobsetctl.admission.cel_parse import (  # noqa: F401 (names the generated table may use)
    And,
    Binary,
    Call,
    Comprehension,
    Conditional,
    CreateList,
    CreateMap,
    Has,
    Ident,
    Index,
    Literal,
    Negate,
    Node,
    Not,
    Or,
    Select,
)

ASTS: dict[str, Node] = {
'''


def builtin_rule_texts() -> list[str]:
    """Every ``rule`` and ``messageExpression`` in the shipped schemas, sorted."""
    texts: set[str] = set()
    for entry in resources.files("jobsetctl.schemas").iterdir():
        if entry.name.endswith(".json"):
            texts.update(_rules(json.loads(entry.read_text(encoding="utf-8"))))
    return sorted(texts)


def _rules(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for rule in value.get("x-kubernetes-validations") or ():
            if isinstance(rule, dict):
                for key in ("rule", "messageExpression"):
                    if isinstance(rule.get(key), str):
                        yield rule[key]
        for item in value.values():
            yield from _rules(item)
    elif isinstance(value, list):
        for item in value:
            yield from _rules(item)


def module_text() -> str:
    """The source of ``cel_builtin.py`` for the schemas as they are now."""
    namespace = vars(cel_parse)
    lines = [_HEADER]
    for text in builtin_rule_texts():
        node = cel_parse.parse_with_celpy(text)
        source = repr(node)
        if eval(source, namespace) != node:  # our own repr of our own dataclasses, at generation time
            raise ValueError(f"the AST of {text!r} does not survive repr(): add its literal type to the header")
        lines.append(f"    {text!r}:\n        {source},\n")
    lines.append("}\n")
    return "".join(lines)


def main() -> None:
    MODULE.write_text(module_text(), encoding="utf-8")
    print(f"wrote {MODULE} ({len(builtin_rule_texts())} expressions)")


if __name__ == "__main__":
    main()
