"""The compiled CEL engine on its own: operators, macros, errors, optionals, literals, limits.

Expected values are cel-go's (the library the API server embeds; cel-spec ``langdef.md``). Where
cel-python disagrees with cel-go the row says so: those rows are why the equivalence property tests
(``test_cel_equivalence.py``) generate only expressions on which the two agree.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from jobsetctl.admission.cel_compile import PER_CALL_LIMIT, Unsupported, compile_expression
from jobsetctl.admission.cel_parse import CelSyntaxError, parse
from jobsetctl.admission.cel_program import FallbackProgram, UnsupportedRule, program_for
from jobsetctl.admission.cel_values import CelError, CostExceeded, Optional, Uint


def run(text: str, self_value: Any = None) -> Any:
    result, _cost = compile_expression(text, None).evaluate(self_value)
    return result


def error_of(text: str, self_value: Any = None) -> str:
    with pytest.raises(CelError) as caught:
        run(text, self_value)
    return str(caught.value)


VALUES = [
    # heterogeneous equality and numeric comparison (cel-python: "no matching overload")
    ("1 == 1.0", True),
    ("1 == 1u", True),
    ("[1] == [1.0]", True),
    ("{'a': 1} == {'a': 1.0}", True),
    ("'a' == 1", False),
    ("'a' != 1", True),
    ("null == 1", False),
    ("1 < 1.5", True),
    ("-1 < 1u", True),
    ("18446744073709551615u > 1.0", True),
    ("0.0 / 0.0 == 0.0 / 0.0", False),  # NaN equals nothing (cel-python: true)
    # integer arithmetic follows Go: truncating division, remainder with the dividend's sign
    ("-5 / 2", -2),
    ("7 / -2", -3),
    ("-5 % 2", -1),
    ("5 % -2", 1),
    ("1 + 2 * 3 - 4 / 2 % 3", 5),
    ("-9223372036854775808", -(2**63)),
    ("1.0 / 0.0", math.inf),
    ("-1.0 / 0.0", -math.inf),
    ("2.0 * 3.0", 6.0),
    ("'ab' + 'c'", "abc"),
    ("b'ab' + b'c'", b"abc"),
    ("[1] + [2]", [1, 2]),
    ("1u + 2u", Uint(3)),
    # conversions
    ("int(1.9)", 1),
    ("int(-1.9)", -1),
    ("int('-9223372036854775808')", -(2**63)),
    ("uint(1.5)", Uint(1)),
    ("double('1e3')", 1000.0),
    ("string(true)", "true"),  # cel-python: "True"
    ("string(1.0)", "1"),  # cel-python: "1.0"
    ("string(1e6)", "1e+06"),
    ("string(123456.0)", "123456"),
    ("string(0.0001)", "0.0001"),
    ("string(1e-05)", "1e-05"),
    ("string(-0.0)", "-0"),
    ("string(b'abc')", "abc"),
    ("bytes('é')", "é".encode()),
    ("bool('true')", True),
    ("type(1) == int", True),
    ("type('a') == string", True),
    ("type(1u) == uint", True),
    ("type([]) == list", True),
    ("dyn(1) == 1.0", True),
    # strings: code points, RE2 search semantics
    ("size('héllo')", 5),
    ("'héllo'.size()", 5),
    ("'abc'.matches('b')", True),
    ("'abc'.matches('^b')", False),
    ("matches('abc', 'c$')", True),
    ("'abc'.startsWith('ab')", True),
    ("'abc'.endsWith('bc')", True),
    ("'abc'.contains('d')", False),
    ("'ab' < 'b'", True),
    ("b'a' < b'b'", True),
    ("false < true", True),
    ("'AbC'.lowerAscii()", "abc"),
    ("'a,b'.split(',')", ["a", "b"]),
    ("['a', 'b'].join('-')", "a-b"),
    # literals and escapes
    ("r'a\\n'", "a\\n"),
    ("'\\x41\\101\\u0041'", "AAA"),
    ("'\\U0001F600'", "\U0001F600"),
    ("b'\\xff\\377'", b"\xff\xff"),
    ("'''a\nb'''", "a\nb"),  # cel-python drops the newline
    ("0x10", 16),
    ("0x1Fu", Uint(31)),
    (".5", 0.5),
    ("1e3", 1000.0),
    # membership, indexing, maps
    ("1 in [1.0, 2.0]", True),
    ("'a' in {'a': 1}", True),
    ("[1, 2, 3][1]", 2),
    ("[1, 2, 3][1u]", 2),
    ("[1, 2][1.0]", 2),
    ("{1: 'a'}[1u]", "a"),
    ("{1: 'a'}[1.0]", "a"),
    ("size({'a': 1, 'b': 2})", 2),
    ("{'a': {'b': [1, 2]}}.a.b[1]", 2),
    # conditional and logic
    ("true ? 1 : 1 / 0", 1),
    ("false || true", True),
    ("!(1 < 2)", False),
    # macros
    ("[1, 2, 3].all(x, x > 0)", True),
    ("[1, 2, 3].exists(x, x > 2)", True),
    ("[1, 2, 3].exists_one(x, x > 1)", False),
    ("[1, 2, 3].filter(x, x % 2 == 1)", [1, 3]),
    ("[1, 2, 3].map(x, x * 2)", [2, 4, 6]),
    ("[1, 2, 3].map(x, x > 1, x * 2)", [4, 6]),  # cel-python crashes on the 3-argument map
    ("{'a': 1, 'b': 2}.all(k, k in ['a', 'b'])", True),
    ("{'a': 1}.map(k, k + '!')", ["a!"]),
    ("[].all(x, false)", True),
    ("[].exists(x, true)", False),
    ("[[1, 2], [3]].exists(l, l.exists(x, x == 3))", True),
    ("[1, 2].map(x, [3, 4].map(x, x))", [[3, 4], [3, 4]]),  # the inner variable shadows the outer
    # optionals (Kubernetes enables them for CRD rules; cel-python has none)
    ("{'a': 1}.?a.orValue(5)", 1),
    ("{'a': 1}.?b.orValue(5)", 5),
    ("{'a': 1}.?b.hasValue()", False),
    ("{'a': {'b': 2}}.?a.b.value()", 2),
    ("{'a': 1}[?'a'].value()", 1),
    ("[1][?3].hasValue()", False),
    ("optional.of(1).value()", 1),
    ("optional.none().orValue(2)", 2),
    ("optional.none().or(optional.of(3)).value()", 3),
    ("optional.ofNonZeroValue('').hasValue()", False),
    ("optional.none().orValue(1) == 1 ? 'y' : 'n'", "y"),
]


@pytest.mark.parametrize(("text", "expected"), VALUES)
def test_values(text: str, expected: Any) -> None:
    result = run(text)
    assert result == expected
    assert type(result) is type(expected)


ERRORS = [
    ("9223372036854775807 + 1", "integer overflow"),
    ("-9223372036854775807 - 2", "integer overflow"),
    ("-(-9223372036854775807 - 1)", "integer overflow"),
    ("9223372036854775807 * 2", "integer overflow"),
    ("(-9223372036854775807 - 1) / -1", "integer overflow"),
    ("1u - 2u", "unsigned integer overflow"),
    ("1 / 0", "division by zero"),
    ("1 % 0", "modulus by zero"),
    ("int(9.3e18)", "integer overflow"),
    ("uint(-1)", "unsigned integer overflow"),
    ("int(' 1')", 'strconv.ParseInt: parsing " 1": invalid syntax'),  # cel-python trims and accepts
    ("{'a': 1}.b", "no such key: b"),
    ("{'a': 1}['b']", "no such key: b"),
    ("[1, 2][5]", "index '5' out of range in list size '2'"),
    ("[1, 2, 3][-1]", "index '-1' out of range in list size '3'"),  # cel-python indexes from the end
    ("1 + 1.0", "no such overload"),
    ("1.5 % 1.0", "no such overload"),
    ("!1", "no such overload"),
    ("-'a'", "no such overload"),
    ("1 < 'a'", "no such overload"),
    ("(1 < 2) < 3", "no such overload"),  # cel-python evaluates `1 < 2 < 3` to true
    ("1u + 1", "no such overload"),  # cel-python: 2u
    ("'abc'[0]", "no such overload"),  # cel-python: 'a'
    ("(0.0 / 0.0) < 1.0", "NaN values cannot be ordered"),
    ("(1 / 0 > 0) || false", "division by zero"),
    ("(1 / 0 > 0) || (2 % 0 > 0)", "division by zero"),  # the first error wins
    ("[1, 0].all(x, 1 / x > 0)", "division by zero"),
    ("[1, 2].exists_one(x, 1 / (x - 1) > 0)", "division by zero"),
    ("(1 / 0 > 0) ? 1 : 2", "division by zero"),
    ("1 ? 2 : 3", "no such overload"),
    ("[1, 2].all(x, x)", "no such overload"),
    ("optional.none().value()", "optional.none() dereference"),
    ("{'a': 1, 'a': 2}", "Failed with repeated key: a"),
    ("has({'a': 1}.a.b)", "no such overload"),  # cel-python: false
    ("'['.matches('[' + '')", "error parsing regexp: missing ]: ["),
]


@pytest.mark.parametrize(("text", "message"), ERRORS)
def test_errors(text: str, message: str) -> None:
    assert error_of(text) == message


ABSORBED = [
    # `&&` and `||` are commutative over errors: the deciding side wins wherever it is.
    ("(1 / 0 > 0) && false", False),
    ("false && (1 / 0 > 0)", False),
    ("(1 / 0 > 0) || true", True),
    ("true || (1 / 0 > 0)", True),
    ("('a' + 1 == 'b') || true", True),
    ("[0, 1].exists(x, 1 / x > 0)", True),
    ("[0, 1].all(x, 1 / x < 0)", False),
    ("{'a': 1}.b == 1 || has({'a': 1}.a)", True),
]


@pytest.mark.parametrize(("text", "expected"), ABSORBED)
def test_errors_absorbed_by_deciding_operand(text: str, expected: bool) -> None:
    assert run(text) is expected


def test_self_is_the_bound_value() -> None:
    assert run("self.a + self.b[0]", {"a": 1, "b": [2]}) == 3
    assert run("has(self.a) && !has(self.c)", {"a": None}) is True  # untyped: a null entry is present
    assert error_of("self.c", {"a": 1}) == "no such key: c"


def test_quirk_has_over_a_missing_intermediate_field_is_an_error() -> None:
    # cel-go resolves `t.metadata` before testing `namespace` (evalTestOnly.Eval returns the resolve
    # error); cel-python says false. The JobSet CRD's volumeClaimPolicies rule
    # `!has(t.metadata.namespace) || ...` therefore errors on a template without metadata.
    assert error_of("has(self.metadata.namespace)", {}) == "no such key: metadata"
    assert run("has(self.metadata.namespace)", {"metadata": {}}) is False


def test_old_self_is_bound_only_when_given() -> None:
    program = compile_expression("self == oldSelf", None)
    assert program.uses_old_self
    assert program.evaluate(1, 1)[0] is True
    assert program.evaluate(1, 2)[0] is False
    assert not compile_expression("self == 1", None).uses_old_self


def test_comprehension_variable_is_restored() -> None:
    assert run("[1, 2].all(self, self > 0) && self == 7", 7) is True


SYNTAX_ERRORS = ["1 +", "self.", "has(self)", "has(self.a.?b)", "[1, 2].all(1, true)", "'unterminated", "a.b.c(",
                 "1 2", "'\\q'"]


@pytest.mark.parametrize("text", SYNTAX_ERRORS)
def test_syntax_errors(text: str) -> None:
    with pytest.raises(CelSyntaxError):
        parse(text)
    assert isinstance(program_for(text, None), UnsupportedRule)


def test_invalid_regex_literal_is_a_compile_error() -> None:
    outcome = program_for("self.matches('[')", None)
    assert isinstance(outcome, UnsupportedRule)
    assert outcome.reason == "compilation failed: error parsing regexp: missing ]: ["


def test_expression_size_limit() -> None:
    text = "1 + " * 25_000 + "1"
    assert len(text) > 100_000
    with pytest.raises(CelSyntaxError, match="expression code point size exceeds limit"):
        parse(text)


def test_nesting_limit_never_crashes() -> None:
    deep = "(" * 400 + "1" + ")" * 400
    outcome = program_for(deep, None)
    assert isinstance(outcome, UnsupportedRule)
    chained = " && ".join(["true"] * 600)
    assert isinstance(program_for(chained, None), UnsupportedRule)


def test_cost_limit_stops_runaway_comprehensions() -> None:
    program = compile_expression("self.all(x, self.all(y, self.all(z, true)))", None)
    with pytest.raises(CostExceeded, match="operation cancelled: actual cost limit exceeded"):
        program.evaluate(list(range(200)))
    small, cost = program.evaluate(list(range(5)))
    assert small is True
    assert 5**3 < cost < PER_CALL_LIMIT


def test_cost_counts_string_scans() -> None:
    program = compile_expression("self.matches('^a+$')", None)
    _, short = program.evaluate("a" * 10)
    _, long = program.evaluate("a" * 10_000)
    assert long - short >= 900


def test_cost_limit_is_not_absorbed_by_logical_operators() -> None:
    program = compile_expression("self.exists(x, self.exists(y, false)) || true", None)
    with pytest.raises(CostExceeded):
        program.evaluate(list(range(2000)), limit=10_000)


def test_unknown_functions_fall_back_to_cel_python() -> None:
    # getFullYear() is not in our subset; cel-python evaluates it.
    program = program_for("timestamp('2024-05-01T00:00:00Z').getFullYear() == 2024", None)
    assert isinstance(program, FallbackProgram)
    assert program.evaluate(None)[0] is True


def test_fallback_is_under_the_cost_limit() -> None:
    program = program_for("self.all(x, self.all(y, timestamp('2024-05-01T00:00:00Z').getFullYear() > 0))", None)
    assert isinstance(program, FallbackProgram)
    with pytest.raises(CostExceeded):
        program.evaluate(list(range(300)), limit=5_000)
    assert program.evaluate(list(range(3)))[0] is True


def test_neither_engine_is_unsupported_not_a_crash() -> None:
    outcome = program_for("self.isSorted()", None)
    assert isinstance(outcome, UnsupportedRule)
    assert "isSorted" in outcome.reason
    with pytest.raises(Unsupported):
        compile_expression("quantity(self).isGreaterThan(quantity('1'))", None)


def test_sandbox_builds_closures_only() -> None:
    # A rule is data: nothing in it reaches Python's eval, imports or attributes.
    for hostile in ("__import__('os').system('true')", "().__class__.__bases__", "eval('1')"):
        outcome = program_for(hostile, None)
        assert isinstance(outcome, UnsupportedRule)
    assert error_of("self.__class__", {}) == "no such key: __class__"


def test_compilation_is_cached_per_text_and_node() -> None:
    assert compile_expression("self > 1", None) is compile_expression("self > 1", None)


def test_optional_values_compare() -> None:
    assert run("optional.of(1) == optional.of(1.0)") is True
    assert run("optional.none() == optional.none()") is True
    assert isinstance(run("{'a': 1}.?a"), Optional)
