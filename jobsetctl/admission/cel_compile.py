"""Compile CEL expressions into Python closures: fast, exact, sandboxed.

Why not interpret: cel-python's interpreter walks the parse tree on every evaluation (about a
millisecond per rule), and ``validate`` has roughly that for a whole document. Here each AST node
becomes one closure, built once per (rule text, schema node) and cached; evaluating the JobSet
``spec`` rule is a handful of Python calls (see ``bench/bench_cel.py``).

Exactness: operators and functions follow cel-go (``cel_values``), values are typed by the schema as
Kubernetes types them (``cel_schema``): the compiler knows each sub-expression's schema node
statically (``self`` is the node the rule sits on, ``x`` in ``self.items.all(x, ...)`` the items node)
and emits the conversion or the typed equality where Kubernetes would apply it.

Sandbox: nothing is ever ``eval``-ed or ``exec``-ed; the only code that runs is these closures. Each
evaluation carries a cost counter: the expression's node count, plus the loop body's node count for
every comprehension iteration, plus one unit per ten characters a string function scans. Evaluation
stops at Kubernetes' per-expression limit, ``PerCallLimit`` = 1,000,000
(``k8s.io/apiserver/pkg/apis/cel/config.go``), with cel-go's ``operation cancelled: actual cost limit
exceeded``. These units approximate cel-go's cost model (which also charges by node) without
reproducing it call for call.

Anything outside the subset raises :class:`Unsupported`; :mod:`.cel_program` then falls back to the
cel-python interpreter.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Final

from jobsetctl.admission import cel_parse as ast
from jobsetctl.admission.cel_schema import (
    convert,
    info,
    typed_add,
    typed_equal,
    unescape,
    with_type_and_object_meta,
)
from jobsetctl.admission.cel_values import (
    ABSENT,
    NONE_OPTIONAL,
    TYPE_NAMES,
    TYPES,
    CelError,
    CostExceeded,
    NoSuchOverload,
    Optional,
    Uint,
    add,
    compare,
    divide,
    equal,
    logical_not,
    map_lookup,
    modulo,
    multiply,
    negate,
    subtract,
    type_name,
)
from jobsetctl.admission.schema import SchemaNode

PER_CALL_LIMIT: Final = 1_000_000
#: Environment key of the cost counter ``[spent, limit]``; not a valid CEL identifier.
COST: Final = "\x00cost"

Env = dict[str, Any]
Fn = Callable[[Env], Any]


class Unsupported(Exception):
    """A construct outside the compiled subset (an unknown function, a message literal...)."""


class OptionalOf:
    """Static type ``optional(T)`` of a sub-expression, with T's schema node (or None)."""

    __slots__ = ("node",)

    def __init__(self, node: SchemaNode | None) -> None:
        self.node = node


Static = SchemaNode | OptionalOf | None


class _NoConst:
    pass


_NOT_CONST: Final[Any] = _NoConst()


@dataclass(slots=True)
class Compiled:
    """A compiled sub-expression: its closure, static type and node count."""

    fn: Fn
    node: Static = None
    size: int = 1
    const: Any = _NOT_CONST


class _NoOld:
    def __repr__(self) -> str:
        return "NO_OLD"


#: ``evaluate`` without ``oldSelf`` bound (a create, or an uncorrelated value).
NO_OLD: Final[Any] = _NoOld()


class Program:
    """A compiled rule or message expression."""

    __slots__ = ("_fn", "engine", "static_cost", "text", "uses_old_self")

    def __init__(self, text: str, fn: Fn, static_cost: int, uses_old_self: bool, engine: str = "compiled") -> None:
        self.text = text
        self._fn = fn
        self.static_cost = static_cost
        self.uses_old_self = uses_old_self
        self.engine = engine

    def evaluate(self, value: Any, old: Any = NO_OLD, limit: int = PER_CALL_LIMIT) -> tuple[Any, int]:
        """(result, cost). Raises :class:`CelError` (the rule's value is an error) or :class:`CostExceeded`."""
        counter = [self.static_cost, limit]
        if self.static_cost > limit:
            raise CostExceeded()
        env: Env = {"self": value, COST: counter}
        if old is not NO_OLD:
            env["oldSelf"] = old
        return self._fn(env), counter[0]


def spend(env: Env, units: int) -> None:
    counter = env[COST]
    counter[0] += units
    if counter[0] > counter[1]:
        raise CostExceeded()


@functools.lru_cache(maxsize=8192)
def compile_expression(
    text: str, node: SchemaNode | None, resource_root: bool = False, optional_old_self: bool = False
) -> Program:
    """Compile ``text`` for ``self`` typed by ``node``; raises ``CelSyntaxError`` or :class:`Unsupported`."""
    tree = ast.parse(text)
    self_node = with_type_and_object_meta(node) if node is not None and resource_root else node
    scope: dict[str, Static] = {
        "self": self_node,
        "oldSelf": OptionalOf(self_node) if optional_old_self else self_node,
    }
    compiled = Compiler().compile(tree, scope)
    return Program(text, compiled.fn, compiled.size, ast.references(tree, "oldSelf"))


def _constant(value: Any) -> Compiled:
    return Compiled(lambda env: value, None, 1, value)


def node_of(static: Static) -> SchemaNode | None:
    return static if isinstance(static, SchemaNode) else None


class Compiler:
    def compile(self, node: ast.Node, scope: dict[str, Static]) -> Compiled:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise Unsupported(type(node).__name__)
        result: Compiled = method(node, scope)
        return result

    # -------------------------------------------------------------------------------- leaves

    def _Literal(self, node: ast.Literal, scope: dict[str, Static]) -> Compiled:
        return _constant(node.value)

    def _Unparsed(self, node: ast.Unparsed, scope: dict[str, Static]) -> Compiled:
        raise Unsupported(node.what)

    def _Ident(self, node: ast.Ident, scope: dict[str, Static]) -> Compiled:
        if node.name in scope:
            return Compiled(itemgetter(node.name), scope[node.name])
        if node.name in TYPE_NAMES:
            return _constant(TYPES[node.name])
        raise Unsupported(f"undeclared reference to '{node.name}'")

    # ---------------------------------------------------------------------- selection, index

    def _Select(self, node: ast.Select, scope: dict[str, Static]) -> Compiled:
        target = self.compile(node.operand, scope)
        static = target.node
        through_optional = isinstance(static, OptionalOf)
        value_node = static.node if isinstance(static, OptionalOf) else static
        get, child = _field_getter(node.field, value_node)
        tfn = target.fn
        missing = f"no such key: {node.field}"
        size = target.size + 1

        if node.optional or through_optional:
            def optional_select(env: Env) -> Any:
                value = tfn(env)
                if type(value) is Optional:
                    if not value.has:
                        return value
                    value = value.value
                found = get(value)
                if found is ABSENT:
                    if node.optional:
                        return NONE_OPTIONAL
                    raise CelError(missing)
                return Optional(True, found)

            return Compiled(optional_select, OptionalOf(child), size)

        def select(env: Env) -> Any:
            found = get(tfn(env))
            if found is ABSENT:
                raise CelError(missing)
            return found

        return Compiled(select, child, size)

    def _Has(self, node: ast.Has, scope: dict[str, Static]) -> Compiled:
        target = self.compile(node.operand, scope)
        value_node = node_of(target.node)
        kind = info(value_node).kind if value_node is not None else "dyn"
        tfn = target.fn
        if kind == "object":
            assert value_node is not None
            name = unescape(node.field)
            if name not in value_node.properties:
                name = None

            def has_field(env: Env) -> bool:
                value = tfn(env)
                if type(value) is dict:
                    return name is not None and value.get(name) is not None
                raise NoSuchOverload()

            return Compiled(has_field, None, target.size + 1)
        if kind == "empty":
            return Compiled(lambda env: _require_dict(tfn(env)) and False, None, target.size + 1)
        field = node.field

        def has_key(env: Env) -> bool:
            value = tfn(env)
            if type(value) is dict:
                return field in value
            raise NoSuchOverload()

        return Compiled(has_key, None, target.size + 1)

    def _Index(self, node: ast.Index, scope: dict[str, Static]) -> Compiled:
        target = self.compile(node.operand, scope)
        index = self.compile(node.index, scope)
        value_node = node_of(target.node)
        get, child = _index_getter(value_node)
        tfn, ifn = target.fn, index.fn
        size = target.size + index.size + 1
        if node.optional:
            def optional_index(env: Env) -> Any:
                value = tfn(env)
                key = ifn(env)
                try:
                    return Optional(True, get(value, key))
                except _Missing:
                    return NONE_OPTIONAL

            return Compiled(optional_index, OptionalOf(child), size)

        def index_fn(env: Env) -> Any:
            value = tfn(env)
            key = ifn(env)
            try:
                return get(value, key)
            except _Missing as missing:
                raise CelError(str(missing)) from None

        return Compiled(index_fn, child, size)

    # ------------------------------------------------------------------------------ operators

    def _And(self, node: ast.And, scope: dict[str, Static]) -> Compiled:
        left, right = self.compile(node.left, scope), self.compile(node.right, scope)
        return Compiled(_logical(left.fn, right.fn, decisive=False), None, left.size + right.size + 1)

    def _Or(self, node: ast.Or, scope: dict[str, Static]) -> Compiled:
        left, right = self.compile(node.left, scope), self.compile(node.right, scope)
        return Compiled(_logical(left.fn, right.fn, decisive=True), None, left.size + right.size + 1)

    def _Not(self, node: ast.Not, scope: dict[str, Static]) -> Compiled:
        operand = self.compile(node.operand, scope)
        ofn = operand.fn
        return Compiled(lambda env: logical_not(ofn(env)), None, operand.size + 1)

    def _Negate(self, node: ast.Negate, scope: dict[str, Static]) -> Compiled:
        operand = self.compile(node.operand, scope)
        if operand.const is not _NOT_CONST and type(operand.const) in (int, float):
            try:
                return _constant(negate(operand.const))
            except CelError:
                pass
        ofn = operand.fn
        return Compiled(lambda env: negate(ofn(env)), None, operand.size + 1)

    def _Conditional(self, node: ast.Conditional, scope: dict[str, Static]) -> Compiled:
        condition = self.compile(node.condition, scope)
        then, otherwise = self.compile(node.then, scope), self.compile(node.otherwise, scope)
        cfn, tfn, ofn = condition.fn, then.fn, otherwise.fn

        def conditional(env: Env) -> Any:
            chosen = cfn(env)
            if chosen is True:
                return tfn(env)
            if chosen is False:
                return ofn(env)
            raise NoSuchOverload()

        static = then.node if then.node is otherwise.node else None
        return Compiled(conditional, static, condition.size + then.size + otherwise.size + 1)

    def _Binary(self, node: ast.Binary, scope: dict[str, Static]) -> Compiled:
        left, right = self.compile(node.left, scope), self.compile(node.right, scope)
        size = left.size + right.size + 1
        lfn, rfn = left.fn, right.fn
        op = node.op
        left_node = node_of(left.node)
        if op in ("==", "!="):
            equality = _equality(left, right)
            if op == "==":
                return Compiled(equality, None, size)
            return Compiled(lambda env: not equality(env), None, size)
        if op in _ORDERINGS:
            test = _ORDERINGS[op]
            return Compiled(lambda env: test(compare(lfn(env), rfn(env))), None, size)
        if op == "in":
            container = node_of(right.node)
            return Compiled(lambda env: _contains(rfn(env), lfn(env), container), None, size)
        if op == "+" and left_node is not None and left_node.list_type in ("map", "set"):
            typed = left_node

            def typed_plus(env: Env) -> Any:
                value = lfn(env)
                if type(value) is list:
                    return typed_add(value, rfn(env), typed)
                return add(value, rfn(env))

            return Compiled(typed_plus, None, size)
        arithmetic = _ARITHMETIC[op]
        return Compiled(lambda env: arithmetic(lfn(env), rfn(env)), None, size)

    # --------------------------------------------------------------------- literals of data

    def _CreateList(self, node: ast.CreateList, scope: dict[str, Static]) -> Compiled:
        items = [self.compile(item, scope) for item in node.items]
        fns = [item.fn for item in items]
        return Compiled(lambda env: [f(env) for f in fns], None, 1 + sum(item.size for item in items))

    def _CreateMap(self, node: ast.CreateMap, scope: dict[str, Static]) -> Compiled:
        entries = [(self.compile(k, scope), self.compile(v, scope)) for k, v in node.entries]
        pairs = [(k.fn, v.fn) for k, v in entries]

        def create_map(env: Env) -> dict[Any, Any]:
            result: dict[Any, Any] = {}
            for kfn, vfn in pairs:
                key = kfn(env)
                if type(key) not in (str, int, Uint, bool):
                    raise CelError(f"unsupported key type: {key!r}")
                if map_lookup(result, key) is not ABSENT:
                    raise CelError(f"Failed with repeated key: {key}")
                result[key] = vfn(env)
            return result

        return Compiled(create_map, None, 1 + sum(k.size + v.size for k, v in entries))

    # ---------------------------------------------------------------------------- functions

    def _Call(self, node: ast.Call, scope: dict[str, Static]) -> Compiled:
        from jobsetctl.admission.cel_calls import compile_call

        return compile_call(self, node, scope)

    def _Comprehension(self, node: ast.Comprehension, scope: dict[str, Static]) -> Compiled:
        from jobsetctl.admission.cel_calls import compile_comprehension

        return compile_comprehension(self, node, scope)


# ------------------------------------------------------------------------------------- helpers

_ORDERINGS: Final[dict[str, Callable[[int], bool]]] = {
    "<": lambda c: c < 0, "<=": lambda c: c <= 0, ">": lambda c: c > 0, ">=": lambda c: c >= 0,
}
_ARITHMETIC: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "+": add, "-": subtract, "*": multiply, "/": divide, "%": modulo,
}


def _require_dict(value: Any) -> bool:
    if type(value) is not dict:
        raise NoSuchOverload()
    return True


def _logical(left: Fn, right: Fn, decisive: bool) -> Fn:
    """``&&`` (decisive value False) and ``||`` (True) with cel-go's error absorption: evaluate left
    to right, stop at the decisive value, otherwise report the first error (or non-bool)."""

    def logical(env: Env) -> bool:
        first_error: CelError | None = None
        try:
            value = left(env)
        except CelError as exc:
            first_error = exc
            value = None
        if value is decisive:
            return decisive
        if first_error is None and value is not (not decisive):
            first_error = NoSuchOverload()
        try:
            other = right(env)
        except CelError as exc:
            raise (first_error or exc) from None
        if other is decisive:
            return decisive
        if first_error is not None:
            raise first_error
        if other is not (not decisive):
            raise NoSuchOverload()
        return not decisive

    return logical


def _equality(left: Compiled, right: Compiled) -> Fn:
    lfn, rfn = left.fn, right.fn
    left_node = node_of(left.node)
    if left_node is not None and info(left_node).typed_equality:
        typed = left_node
        return lambda env: typed_equal(lfn(env), rfn(env), typed)
    if type(right.const) is str:
        literal = right.const

        def equal_string(env: Env) -> bool:
            value = lfn(env)
            return value == literal if type(value) is str else equal(value, literal)

        return equal_string
    return lambda env: equal(lfn(env), rfn(env))


class _Missing(Exception):
    """A lookup found nothing; the message is the CEL error text for a plain index."""


def _field_getter(field: str, node: SchemaNode | None) -> tuple[Callable[[Any], Any], SchemaNode | None]:
    """How ``value.field`` reads a value typed by ``node``: returns the value or ABSENT."""
    kind = info(node).kind if node is not None else "dyn"
    if kind == "object":
        assert node is not None
        name = unescape(field)
        child = node.properties.get(name) if name is not None else None
        # Only declared fields are visible (Kubernetes refuses other names when the CRD is created,
        # and its Find() finds nothing for them at run time).
        declared = child is not None
        converter = info(child).converter if child is not None else None

        def object_field(value: Any) -> Any:
            if type(value) is dict:
                found = value.get(name) if declared else None
                if found is None:  # absent, or null: Kubernetes treats a null field as absent
                    return ABSENT
                return found if converter is None else converter(found)
            raise NoSuchOverload()

        return object_field, child
    if kind == "map":
        assert node is not None and isinstance(node.additional, SchemaNode)
        values = node.additional

        def map_field(value: Any) -> Any:
            if type(value) is dict:
                found = value.get(field, ABSENT)
                return found if found is ABSENT else convert(found, values)
            raise NoSuchOverload()

        return map_field, values
    if kind == "empty":

        def hidden_field(value: Any) -> Any:
            _require_dict(value)
            return ABSENT

        return hidden_field, None

    def dynamic_field(value: Any) -> Any:
        if type(value) is dict:
            return value.get(field, ABSENT)
        raise NoSuchOverload()

    return dynamic_field, None


def _index_getter(node: SchemaNode | None) -> tuple[Callable[[Any, Any], Any], SchemaNode | None]:
    """How ``value[key]`` reads a value typed by ``node``; raises :class:`_Missing` when absent."""
    kind = info(node).kind if node is not None else "dyn"
    if kind == "list":
        assert node is not None
        items = node.items

        def typed_list_index(value: Any, key: Any) -> Any:
            if type(value) is not list:
                return _dynamic_index(value, key)
            if type(key) is not int:
                raise CelError(f"unsupported index: {key}")  # Kubernetes lists take int only
            if key < 0 or key >= len(value):
                raise _Missing(f"index out of bounds: {key}")
            return value[key] if items is None else convert(value[key], items)

        return typed_list_index, items
    if kind in ("object", "map", "empty"):
        assert node is not None

        def typed_map_index(value: Any, key: Any) -> Any:
            if type(key) is not str:
                raise NoSuchOverload()
            get, _ = _field_getter(key, node)
            found = get(value)
            if found is ABSENT:
                raise _Missing(f"no such key: {key}")
            return found

        child = node.additional if kind == "map" and isinstance(node.additional, SchemaNode) else None
        return typed_map_index, child
    return _dynamic_index, None


def _dynamic_index(value: Any, key: Any) -> Any:
    if type(value) is list:
        kind = type(key)
        if kind is float and key.is_integer():
            key = int(key)
        elif kind not in (int, Uint):
            raise CelError(f"unsupported index type '{_type_label(key)}' in list")
        if key < 0 or key >= len(value):
            raise _Missing(f"index '{key}' out of range in list size '{len(value)}'")
        return value[key]
    if type(value) is dict:
        found = map_lookup(value, key)
        if found is ABSENT:
            raise _Missing(f"no such key: {key}")
        return found
    raise NoSuchOverload()


def _type_label(value: Any) -> str:
    return type_name(value)


def _contains(container: Any, element: Any, node: SchemaNode | None) -> bool:
    """``element in container``: list membership by CEL equality, map key presence."""
    kind = type(container)
    if kind is list:
        items = node.items if node is not None else None
        if items is not None and info(items).typed_equality:
            return any(typed_equal(convert(e, items), element, items) for e in container)
        return any(equal(e, element) for e in container)
    if kind is dict:
        if node is not None and info(node).kind == "object":
            name = unescape(element) if type(element) is str else None
            return name in node.properties and container.get(name) is not None
        if node is not None and info(node).kind == "empty":
            return False
        return map_lookup(container, element) is not ABSENT
    raise NoSuchOverload()

