"""Property tests: our compiled CEL agrees with cel-python (``celpy``), the reference interpreter.

Two families, both comparing the outcome (the value, or "an error" on both sides):

* every rule of the upstream CRDs (../shared/upstream/*/crd), on random objects drawn from the schema
  at the rule's node (skipped when the folder is absent);
* random well-typed expressions over the subset, on random JSON objects.

Expressions are generated well-typed, as the API server's type checker only admits well-typed rules,
and avoid the places where cel-python departs from cel-go (heterogeneous equality, ``string(double)``,
negative list indices, ``has()`` on a non-map, ``MinInt64 % -1``, NaN ordering): those are pinned to
cel-go's values in ``test_cel_engine.py`` instead. The one departure schema-shaped data reaches (a
nested ``has()`` over a missing field) is accepted only in its exact known form (:func:`known_deviation`). Data is compared untyped (no schema), which is
exactly what cel-python sees.
"""

from __future__ import annotations

import copy
import functools
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.admission.cel_compile import NO_OLD, compile_expression
from jobsetctl.admission.cel_parse import parse
from jobsetctl.admission.cel_values import CelError
from tests.helpers import UPSTREAM, requires_upstream

Outcome = tuple[str, Any]

# cel-python raises the recursion limit when its first Environment is built; do it before hypothesis
# runs, which otherwise warns that it cannot restore the limit.
parse("true")


def ours(text: str, value: Any, old: Any = NO_OLD) -> Outcome:
    try:
        result, _ = compile_expression(text, None).evaluate(value, old)
    except CelError:
        return ("error", None)
    return ("value", result)


def our_error(text: str, value: Any, old: Any = NO_OLD) -> str:
    try:
        compile_expression(text, None).evaluate(value, old)
    except CelError as exc:
        return str(exc)
    return ""


NESTED_HAS = re.compile(r"has\(\w+(\.\w+){2,}\)")


def known_deviation(text: str, value: Any, old: Any, mine: Outcome, reference: Outcome) -> bool:
    """The one departure of cel-python that schema-shaped data reaches: ``has(a.b.c)`` with ``b``
    missing is false in cel-python but an error in cel-go (``evalTestOnly.Eval`` returns the error of
    resolving ``a.b``; interpreter/interpretable.go), so the API server reports ``no such key: b``."""
    return (
        mine == ("error", None) and reference[0] == "value" and NESTED_HAS.search(text) is not None
        and our_error(text, value, old).startswith("no such key: ")
    )


@functools.cache
def _celpy_program(text: str) -> Any:
    import celpy

    environment = celpy.Environment()
    return environment.program(environment.compile(text))


def theirs(text: str, value: Any, old: Any = NO_OLD) -> Outcome:
    import celpy
    from celpy.evaluation import CELEvalError

    activation = {"self": celpy.json_to_cel(value)}
    if old is not NO_OLD:
        activation["oldSelf"] = celpy.json_to_cel(old)
    try:
        return ("value", plain(_celpy_program(text).evaluate(activation)))
    except CELEvalError:
        return ("error", None)


def plain(value: Any) -> Any:
    """cel-python values as plain Python, keeping bool, int and float apart."""
    from celpy import celtypes

    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, celtypes.IntType | celtypes.UintType):
        return int(value)
    if isinstance(value, celtypes.DoubleType | float):
        return float(value)
    if isinstance(value, celtypes.StringType | str):
        return str(value)
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    return value


def same(left: Outcome, right: Outcome) -> bool:
    return left == right and _kinds(left[1]) == _kinds(right[1])


def _kinds(value: Any) -> Any:
    if isinstance(value, list):
        return [_kinds(v) for v in value]
    if isinstance(value, dict):
        return {k: _kinds(v) for k, v in value.items()}
    return type(value).__name__


# ------------------------------------------------------------------------------ upstream CRD rules

#: Places checked per distinct rule text (`self == oldSelf` alone sits at dozens of places).
PLACES_PER_RULE = 3


def _upstream_rules() -> list[tuple[str, str, dict[str, Any], bool]]:
    """(id, rule, schema at the rule's node, is the resource root) for every upstream CRD rule."""
    import yaml

    found: dict[tuple[str, str], tuple[str, str, dict[str, Any], bool]] = {}
    for crd in sorted(UPSTREAM.glob("*/crd/*.yaml")):
        for document in yaml.safe_load_all(crd.read_text()):
            for version in document["spec"]["versions"]:
                _collect(version["schema"]["openAPIV3Schema"], crd.stem, "", found, root=True)
    chosen: list[tuple[str, str, dict[str, Any], bool]] = []
    per_text: dict[str, int] = {}
    # Shallow places first: they are the cheapest to generate and the most varied.
    for entry in sorted(found.values(), key=lambda e: (e[0].count("."), e[0])):
        if per_text.get(entry[1], 0) < PLACES_PER_RULE:
            per_text[entry[1]] = per_text.get(entry[1], 0) + 1
            chosen.append(entry)
    return chosen


def _collect(schema: Any, crd: str, where: str, found: dict[Any, Any], root: bool = False) -> None:
    if not isinstance(schema, dict):
        return
    for rule in schema.get("x-kubernetes-validations") or ():
        key = (rule["rule"], where)
        found.setdefault(key, (f"{crd}:{where or '<root>'}", rule["rule"], schema, root))
    for name, child in (schema.get("properties") or {}).items():
        _collect(child, crd, f"{where}.{name}", found)
    if isinstance(schema.get("items"), dict):
        _collect(schema["items"], crd, f"{where}[]", found)
    if isinstance(schema.get("additionalProperties"), dict):
        _collect(schema["additionalProperties"], crd, f"{where}{{}}", found)


UPSTREAM_RULES = _upstream_rules() if UPSTREAM.is_dir() else []

INTERESTING_STRINGS = st.sampled_from([
    "", "a", "node", "InOrder", "AnyOrder", "s3://bucket/data", "hf://org/model", "://x", "1abc://x",
    "trainer.kubeflow.org/trainjob-controller", "kueue.x-k8s.io/multikueue", "abc-def", "Abc", "a" * 70,
])
STRINGS = st.one_of(INTERESTING_STRINGS, st.text(alphabet="abz-:/.09", max_size=12))
KEYS = st.sampled_from(["a", "b", "app.kubernetes.io/name"])


def instances(schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Random values of a CRD schema node (optional fields thin out with depth)."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if schema.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(-2, 64), st.sampled_from(["auto", "cpu", "gpu", "50%", "3"]))
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties") or {}
        if not properties:
            values = schema.get("additionalProperties")
            if isinstance(values, dict) and depth < 6:
                return st.dictionaries(KEYS, instances(values, depth + 1), max_size=2)
            return st.just({})
        required = set(schema.get("required") or ())
        optional = {} if depth > 3 else {
            name: instances(child, depth + 1) for name, child in properties.items() if name not in required
        }
        return st.fixed_dictionaries(
            {name: instances(properties[name], depth + 1) for name in sorted(required) if name in properties},
            optional=optional,
        )
    if kind == "array":
        return st.lists(instances(schema.get("items") or {}, depth + 1), max_size=3 if depth < 4 else 1)
    if kind == "string":
        return STRINGS
    if kind == "integer":
        return st.integers(-3, 12)
    if kind == "number":
        return st.floats(-10, 10, allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    return st.just({})


@functools.cache
def _strategy(index: int) -> st.SearchStrategy[Any]:
    _, _, schema, root = UPSTREAM_RULES[index]
    value = instances(schema)
    if root:
        meta = st.fixed_dictionaries({"name": STRINGS})
        value = st.tuples(value, meta).map(lambda pair: {**pair[0], "metadata": pair[1]})
    return value


@requires_upstream
def test_upstream_crds_have_rules() -> None:
    texts = {rule for _, rule, _, _ in UPSTREAM_RULES}
    assert "self == oldSelf" in texts
    assert any("StartupPolicy" not in t and "startupPolicyOrder == 'InOrder'" in t for t in texts)
    assert len(texts) >= 15


@requires_upstream
@pytest.mark.parametrize("index", range(len(UPSTREAM_RULES)), ids=[r[0] for r in UPSTREAM_RULES])
@given(data=st.data())
def test_upstream_rule_matches_cel_python(index: int, data: st.DataObject) -> None:
    _, rule, _, _ = UPSTREAM_RULES[index]
    value = data.draw(_strategy(index), label="self")
    old: Any = NO_OLD
    if "oldSelf" in rule:
        old = data.draw(st.one_of(st.just(copy.deepcopy(value)), _strategy(index)), label="oldSelf")
    mine, reference = ours(rule, value, old), theirs(rule, value, old)
    assert same(mine, reference) or known_deviation(rule, value, old, mine, reference)


# ------------------------------------------------------------------------------ random expressions

SMALL_INTS = st.integers(-1_000_000, 1_000_000)
WORDS = st.text(alphabet="abc-", max_size=5)
DATA = st.fixed_dictionaries(
    {
        "i": SMALL_INTS,
        "s": WORDS,
        "b": st.booleans(),
        "d": st.floats(-1e6, 1e6, allow_nan=False),
        "li": st.lists(st.integers(-5, 5), max_size=4),
        "ls": st.lists(WORDS, max_size=4),
        "m": st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers(-5, 5), max_size=3),
    },
    optional={"j": SMALL_INTS, "t": WORDS, "o": st.fixed_dictionaries({}, optional={"i": SMALL_INTS, "s": WORDS})},
)
REGEXES = ["^a", "b$", "^[ab]*$", "a.c", "-", "^$"]
VARIABLES = ("x", "y")


def _paren(template: str) -> Any:
    return lambda *parts: template.format(*parts)


@functools.cache
def expression(kind: str, depth: int, scope: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Random well-typed CEL text of ``kind`` (int, double, string, bool, list), nested ``depth`` deep."""
    leaves = _LEAVES[kind](scope)
    if depth == 0:
        return leaves
    return st.one_of(leaves, *_composites(kind, depth, scope))


def _leaf_ints(scope: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(-20, 20).map(lambda n: f"({n})"),
        st.sampled_from(["self.i", "self.j", "self.o.i", "size(self.s)", "self.li.size()", "size(self.m)",
                         *scope]),
    )


def _leaf_doubles(scope: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(["1.5", "0.25", "(-2.0)", "1e3", "self.d"]),
                     st.floats(-100, 100, allow_nan=False).map(lambda f: f"({f!r})"))


def _leaf_strings(scope: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(["self.s", "self.t", "self.o.s"]), WORDS.map(lambda w: f"'{w}'"))


def _leaf_bools(scope: tuple[str, ...]) -> st.SearchStrategy[str]:
    fields = ["i", "j", "s", "t", "o", "li", "m", "missing"]
    return st.one_of(st.sampled_from(["true", "false", "self.b"]),
                     st.sampled_from(fields).map(lambda f: f"has(self.{f})"))


def _leaf_lists(scope: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.sampled_from(["self.li", "[]", "[1, 2, 3]", "[0, -1]"])


_LEAVES = {"int": _leaf_ints, "double": _leaf_doubles, "string": _leaf_strings, "bool": _leaf_bools,
           "list": _leaf_lists}


def _composites(kind: str, depth: int, scope: tuple[str, ...]) -> list[st.SearchStrategy[str]]:
    def sub(k: str, extra: tuple[str, ...] = ()) -> st.SearchStrategy[str]:
        return expression(k, depth - 1, scope + extra)

    fresh = next((v for v in VARIABLES if v not in scope), None)
    conditional = st.builds(_paren("({} ? {} : {})"), sub("bool"), sub(kind), sub(kind))
    if kind == "int":
        arithmetic = st.builds(lambda a, op, b: f"({a} {op} {b})", sub("int"), st.sampled_from("+-*/%"), sub("int"))
        return [
            arithmetic, conditional,
            st.builds(_paren("-({})"), sub("int")),
            st.builds(_paren("{}[{}]"), sub("list"), st.integers(0, 3)),
            st.sampled_from(["self.m['a']", "self.m['z']", "self.li[0]"]),
            st.builds(_paren("int(string({}))"), sub("int")),
            st.builds(_paren("int({})"), sub("double")),
            st.builds(_paren("size({})"), sub("string")),
            st.builds(_paren("{}.size()"), sub("list")),
        ]
    if kind == "double":
        return [
            st.builds(lambda a, op, b: f"({a} {op} {b})", sub("double"), st.sampled_from("+-*"), sub("double")),
            st.builds(_paren("double({})"), sub("int")),
            st.builds(_paren("-({})"), sub("double")),
            conditional,
        ]
    if kind == "string":
        return [
            st.builds(_paren("({} + {})"), sub("string"), sub("string")),
            st.builds(_paren("string({})"), sub("int")),
            st.builds(_paren("self.ls[{}]"), st.integers(0, 3)),
            conditional,
        ]
    if kind == "list":
        composites = [st.builds(_paren("({} + {})"), sub("list"), sub("list")),
                      st.builds(_paren("[{}, {}]"), sub("int"), sub("int"))]
        if fresh is not None:
            composites += [
                st.builds(_paren("{}.filter(" + fresh + ", {})"), sub("list"), sub("bool", (fresh,))),
                st.builds(_paren("{}.map(" + fresh + ", {})"), sub("list"), sub("int", (fresh,))),
            ]
        return composites
    relations = st.sampled_from(["<", "<=", ">", ">=", "==", "!="])
    composites = [
        st.builds(lambda a, op, b: f"({a} {op} {b})", sub("int"), relations, sub("int")),
        st.builds(lambda a, op, b: f"({a} {op} {b})", sub("double"), relations, sub("double")),
        st.builds(lambda a, op, b: f"({a} {op} {b})", sub("string"), relations, sub("string")),
        st.builds(lambda a, op, b: f"({a} {op} {b})", sub("bool"), st.sampled_from(["&&", "||", "==", "!="]),
                  sub("bool")),
        st.builds(_paren("!({})"), sub("bool")),
        # string(...) around the receiver: cel-python's `+` returns a plain str, which has no
        # contains()/startsWith()/endsWith() (a cel-python bug; cel-go has no such distinction).
        st.builds(lambda a, f, b: f"string({a}).{f}({b})", sub("string"),
                  st.sampled_from(["startsWith", "endsWith", "contains"]), sub("string")),
        st.builds(lambda a, r: f"{a}.matches('{r}')", sub("string"), st.sampled_from(REGEXES)),
        st.builds(_paren("({} in {})"), sub("int"), sub("list")),
        st.builds(_paren("({} in self.ls)"), sub("string")),
        st.builds(_paren("({} in self.m)"), sub("string")),
        st.builds(_paren("({} == {})"), sub("list"), sub("list")),
        conditional,
    ]
    if fresh is not None:
        composites.append(st.builds(
            lambda target, macro, body: f"{target}.{macro}({fresh}, {body})",
            sub("list"), st.sampled_from(["all", "exists", "exists_one"]), sub("bool", (fresh,)),
        ))
    return composites


@given(text=st.one_of(*(expression(kind, 3, ()) for kind in _LEAVES)), value=DATA)
def test_random_expressions_match_cel_python(text: str, value: dict[str, Any]) -> None:
    assert same(ours(text, value), theirs(text, value)), text


@given(value=DATA)
def test_property_comparisons_are_consistent(value: dict[str, Any]) -> None:
    # An invariant of CEL on any data: `a < b` and `b < a` are never both true, and `a == a` holds.
    for left, right in (("self.i", "size(self.ls)"), ("self.s", "'b'"), ("self.d", "1.5")):
        less = ours(f"{left} < {right}", value)
        more = ours(f"{right} < {left}", value)
        assert not (less == ("value", True) and more == ("value", True))
        assert ours(f"{left} == {left}", value) in (("value", True), ("error", None))


@given(value=DATA)
def test_property_logical_operators_commute_over_errors(value: dict[str, Any]) -> None:
    for left, right in (("self.m['z'] > 0", "self.b"), ("self.o.i > 0", "size(self.ls) > 1")):
        assert ours(f"{left} && {right}", value) == ours(f"{right} && {left}", value)
        assert ours(f"{left} || {right}", value) == ours(f"{right} || {left}", value)
