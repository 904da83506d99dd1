"""Function calls and comprehension macros for :mod:`.cel_compile`.

Macro semantics are cel-go's expansions (``parser/macro.go``): ``all`` folds with ``&&`` and
``exists`` with ``||`` (so an error in one element is absorbed when another element decides, and the
loop stops at the deciding element), ``exists_one``, ``filter`` and ``map`` propagate the first error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from jobsetctl.admission import cel_functions as lib
from jobsetctl.admission import cel_parse as ast
from jobsetctl.admission.cel_compile import (
    COST,
    Compiled,
    Env,
    Fn,
    OptionalOf,
    Static,
    Unsupported,
    node_of,
    spend,
)
from jobsetctl.admission.cel_parse import CelSyntaxError
from jobsetctl.admission.cel_schema import RESERVED, convert, info, list_of
from jobsetctl.admission.cel_values import (
    ABSENT,
    CelError,
    CostExceeded,
    NoSuchOverload,
    Optional,
)
from jobsetctl.admission.schema import SchemaNode

if TYPE_CHECKING:
    from jobsetctl.admission.cel_compile import Compiler

#: Characters scanned per cost unit by string functions (cel-go charges 0.1 per character).
_CHARS_PER_UNIT = 10


def compile_call(compiler: Compiler, node: ast.Call, scope: dict[str, Static]) -> Compiled:
    if node.target is None:
        return _global_call(compiler, node, scope)
    if isinstance(node.target, ast.Ident) and node.target.name == "optional" and "optional" not in scope:
        return _optional_namespace(compiler, node, scope)
    return _member_call(compiler, node, scope)


def _arguments(compiler: Compiler, node: ast.Call, scope: dict[str, Static]) -> list[Compiled]:
    return [compiler.compile(argument, scope) for argument in node.args]


def _global_call(compiler: Compiler, node: ast.Call, scope: dict[str, Static]) -> Compiled:
    entry = lib.GLOBAL_FUNCTIONS.get(node.function)
    if entry is None:
        raise Unsupported(f"unknown function {node.function}()")
    counts, impl = entry
    if len(node.args) not in counts:
        raise Unsupported(f"{node.function}() takes {counts[0]} argument(s)")
    args = _arguments(compiler, node, scope)
    size = 1 + sum(a.size for a in args)
    if node.function == "matches":
        return _matches(args[0], args[1], size)
    if len(args) == 1:
        only = args[0].fn
        static = args[0].node if node.function == "dyn" else None
        return Compiled(lambda env: impl(only(env)), static, size)
    first, second = args[0].fn, args[1].fn
    return Compiled(lambda env: impl(first(env), second(env)), None, size)


def _matches(text: Compiled, pattern: Compiled, size: int) -> Compiled:
    tfn = text.fn
    if type(pattern.const) is str:
        try:
            search = lib.compile_regex(pattern.const)
        except lib.RegexError as exc:
            # The API server rejects such a rule when the CRD is created (cel-go validates regex
            # literals), so this is a compile error, not something to evaluate another way.
            raise CelSyntaxError(f"compilation failed: {exc}") from exc

        def matches_literal(env: Env) -> bool:
            value = tfn(env)
            if type(value) is not str:
                raise NoSuchOverload()
            if len(value) >= _CHARS_PER_UNIT:
                spend(env, len(value) // _CHARS_PER_UNIT)
            return search(value) is not None

        return Compiled(matches_literal, None, size)
    pfn = pattern.fn

    def matches_dynamic(env: Env) -> bool:
        value = tfn(env)
        if type(value) is str and len(value) >= _CHARS_PER_UNIT:
            spend(env, len(value) // _CHARS_PER_UNIT)
        return lib.matches(value, pfn(env))

    return Compiled(matches_dynamic, None, size)


def _optional_namespace(compiler: Compiler, node: ast.Call, scope: dict[str, Static]) -> Compiled:
    args = _arguments(compiler, node, scope)
    size = 1 + sum(a.size for a in args)
    if node.function == "none" and not args:
        none = Optional(False)
        return Compiled(lambda env: none, OptionalOf(None), size)
    if node.function == "of" and len(args) == 1:
        only = args[0].fn
        return Compiled(lambda env: Optional(True, only(env)), OptionalOf(node_of(args[0].node)), size)
    if node.function == "ofNonZeroValue" and len(args) == 1:
        only = args[0].fn
        return Compiled(lambda env: lib.optional_of_non_zero(only(env)), OptionalOf(node_of(args[0].node)), size)
    raise Unsupported(f"unknown function optional.{node.function}()")


def _member_call(compiler: Compiler, node: ast.Call, scope: dict[str, Static]) -> Compiled:
    assert node.target is not None
    target = compiler.compile(node.target, scope)
    args = _arguments(compiler, node, scope)
    size = target.size + 1 + sum(a.size for a in args)
    tfn = target.fn
    name = node.function
    if name in ("orValue", "or") and len(args) == 1:
        return _optional_or(tfn, args[0], name, target.node, size)
    if name == "matches" and len(args) == 1:
        return _matches(target, args[0], size)
    entry = lib.MEMBER_FUNCTIONS.get(name)
    if entry is None:
        raise Unsupported(f"unknown function {name}()")
    counts, impl = entry
    if len(args) not in counts:
        raise Unsupported(f"{name}() takes {counts[0]} argument(s)")
    static: Static = None
    if name == "value" and isinstance(target.node, OptionalOf):
        static = target.node.node
    traversing = name in lib.TRAVERSING
    fns = [a.fn for a in args]

    def member(env: Env) -> Any:
        value = tfn(env)
        if traversing and type(value) is str and len(value) >= _CHARS_PER_UNIT:
            spend(env, len(value) // _CHARS_PER_UNIT)
        return impl(value, *[f(env) for f in fns])

    return Compiled(member, static, size)


def _optional_or(target: Fn, alternative: Compiled, name: str, static: Static, size: int) -> Compiled:
    # cel-go evaluates the alternative of or()/orValue() only when the optional is empty.
    afn = alternative.fn

    def optional_or(env: Env) -> Any:
        value = target(env)
        if type(value) is not Optional:
            raise NoSuchOverload()
        if value.has:
            return value.value if name == "orValue" else value
        other = afn(env)
        if name == "or" and type(other) is not Optional:
            raise NoSuchOverload()
        return other

    result: Static = static.node if name == "orValue" and isinstance(static, OptionalOf) else None
    if name == "or":
        result = static
    return Compiled(optional_or, result, size)


# ------------------------------------------------------------------------------- comprehensions

def _escape(name: str) -> str:
    """Kubernetes ``cel.Escape`` (keys of a typed object as a comprehension sees them)."""
    if name in RESERVED:
        return f"__{name}__"
    out = name.replace("__", "__underscores__")
    return out.replace(".", "__dot__").replace("-", "__dash__").replace("/", "__slash__")


def _iteration(node: SchemaNode | None) -> tuple[Callable[[Any], Iterable[Any]], Callable[[Any], Any] | None]:
    """(what a comprehension iterates over a value, how each element is typed) for a target node."""
    kind = info(node).kind if node is not None else "dyn"
    if kind == "list" and node is not None and node.items is not None:
        items = node.items
        details = info(items)
        converter = None if details.converter is None and details.nullable else (lambda e: convert(e, items))
        return _list_or_keys, converter
    if kind == "object" and node is not None:
        declared = node.properties

        def object_keys(value: Any) -> Iterable[Any]:
            if type(value) is not dict:
                raise NoSuchOverload()
            return [_escape(key) for key in value if key in declared]

        return object_keys, None
    if kind == "empty":
        return (lambda value: [] if type(value) is dict else _list_or_keys(value)), None
    return _list_or_keys, None


def _list_or_keys(value: Any) -> Iterable[Any]:
    if type(value) is list:
        return value
    if type(value) is dict:
        return list(value)
    raise NoSuchOverload()


def compile_comprehension(compiler: Compiler, node: ast.Comprehension, scope: dict[str, Static]) -> Compiled:
    target = compiler.compile(node.target, scope)
    target_node = node_of(target.node)
    elements, element_type = _iteration(target_node)
    item_node = target_node.items if target_node is not None and info(target_node).kind == "list" else None
    inner = dict(scope)
    inner[node.variable] = item_node
    args = [compiler.compile(argument, inner) for argument in node.args]
    step = 1 + sum(a.size for a in args)
    size = target.size + step
    loop = _Loop(target.fn, elements, element_type, node.variable, step)
    macro = node.macro
    if macro in ("all", "exists"):
        return Compiled(loop.quantifier(args[0].fn, decisive=macro == "exists"), None, size)
    if macro == "exists_one":
        return Compiled(loop.exists_one(args[0].fn), None, size)
    if macro == "filter":
        static = list_of(item_node) if item_node is not None else None
        return Compiled(loop.collect(args[0].fn, None), static, size)
    if len(args) == 1:
        return Compiled(loop.collect(None, args[0].fn), None, size)
    return Compiled(loop.collect(args[0].fn, args[1].fn), None, size)


class _Loop:
    """Binds the loop variable, charges the cost of each iteration and restores the scope."""

    __slots__ = ("element_type", "elements", "step", "target", "variable")

    def __init__(
        self, target: Fn, elements: Callable[[Any], Iterable[Any]],
        element_type: Callable[[Any], Any] | None, variable: str, step: int,
    ) -> None:
        self.target = target
        self.elements = elements
        self.element_type = element_type
        self.variable = variable
        self.step = step

    def _run(self, env: Env, body: Callable[[Any], bool], errors: list[Any] | None = None) -> None:
        """Call ``body`` per element until it returns True (stop).

        An element that cannot be typed (a null in a non-nullable list) is an error value for that
        iteration only, as Kubernetes' iterator yields it: with ``errors`` (the quantifiers) it is
        recorded there and may still be absorbed; otherwise it propagates.
        """
        values = self.elements(self.target(env))
        counter = env[COST]
        variable, step, element_type = self.variable, self.step, self.element_type
        saved = env.get(variable, ABSENT)
        try:
            for element in values:
                counter[0] += step
                if counter[0] > counter[1]:
                    raise CostExceeded()
                if element_type is not None:
                    try:
                        element = element_type(element)
                    except CelError as exc:
                        if errors is None:
                            raise
                        if errors[0] is None:
                            errors[0] = exc
                        continue
                if body(element):
                    return
        finally:
            if saved is ABSENT:
                env.pop(variable, None)
            else:
                env[variable] = saved

    def quantifier(self, predicate: Fn, decisive: bool) -> Fn:
        variable = self.variable

        def quantify(env: Env) -> bool:
            state: list[Any] = [None, False]  # first error, decided

            def body(element: Any) -> bool:
                env[variable] = element
                try:
                    result = predicate(env)
                except CelError as exc:
                    if state[0] is None:
                        state[0] = exc
                    return False
                if result is decisive:
                    state[1] = True
                    return True
                if result is not (not decisive) and state[0] is None:
                    state[0] = NoSuchOverload()
                return False

            self._run(env, body, state)
            if state[1]:
                return decisive
            if state[0] is not None:
                raise state[0]
            return not decisive

        return quantify

    def exists_one(self, predicate: Fn) -> Fn:
        variable = self.variable

        def exists_one(env: Env) -> bool:
            count = [0]

            def body(element: Any) -> bool:
                env[variable] = element
                result = predicate(env)
                if result is True:
                    count[0] += 1
                elif result is not False:
                    raise NoSuchOverload()
                return False

            self._run(env, body)
            return count[0] == 1

        return exists_one

    def collect(self, predicate: Fn | None, transform: Fn | None) -> Fn:
        """``filter`` (predicate only), ``map`` (transform, optionally after a predicate)."""
        variable = self.variable

        def collect(env: Env) -> list[Any]:
            out: list[Any] = []

            def body(element: Any) -> bool:
                env[variable] = element
                if predicate is not None:
                    keep = predicate(env)
                    if keep is False:
                        return False
                    if keep is not True:
                        raise NoSuchOverload()
                out.append(transform(env) if transform is not None else element)
                return False

            self._run(env, body)
            return out

        return collect

