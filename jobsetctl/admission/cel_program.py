"""A rule's program: our compiled closures, or cel-python's interpreter for what they do not cover.

:func:`program_for` returns a :class:`~.cel_compile.Program` (compiled), a :class:`FallbackProgram`
(cel-python's ``Evaluator``, under the same cost limit: every parse-tree node it visits costs one
unit), or an :class:`UnsupportedRule` saying why neither can evaluate it. Nothing raises for a bad
rule: a CRD from a user is input, and input never crashes us.

The fallback is best effort. cel-python differs from cel-go in places (no heterogeneous equality,
``string(true)`` is ``"True"``, negative list indices work, ``has()`` on a non-map is false...) and
its error texts are its own; errors that only say "celpy could not do this" (an undeclared function,
an internal exception) become :class:`Unsupported` so that we report "not checked" rather than a
made-up failure.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any, Final

from jobsetctl.admission import cel_parse
from jobsetctl.admission.cel_compile import NO_OLD, PER_CALL_LIMIT, Program, Unsupported, compile_expression
from jobsetctl.admission.cel_schema import info
from jobsetctl.admission.cel_values import CelError, CostExceeded, NoSuchOverload, Optional
from jobsetctl.admission.schema import SchemaNode

#: Wall-clock bound of one cel-python evaluation. Besides the cost limit (which counts parse-tree
#: visits), cel-python's own error formatting can grow exponentially with nested errors; a rule that
#: needs this much time is reported as not checked.
FALLBACK_SECONDS: Final = 2.0


@dataclass(frozen=True, slots=True)
class UnsupportedRule:
    """A rule we cannot evaluate, and why."""

    text: str
    reason: str


class FallbackProgram:
    """cel-python's interpreter behind :class:`Program`'s interface."""

    engine: Final = "celpy"

    def __init__(self, text: str, tree: Any, node: SchemaNode | None, uses_old_self: bool) -> None:
        self.text = text
        self._tree = tree
        self._node = node
        self.uses_old_self = uses_old_self
        self.static_cost = 1

    def evaluate(self, value: Any, old: Any = NO_OLD, limit: int = PER_CALL_LIMIT) -> tuple[Any, int]:
        import celpy
        from celpy.evaluation import CELEvalError

        counter = [0, limit]
        activation = {"self": _to_celpy(value, self._node)}
        if old is not NO_OLD:
            if isinstance(old, Optional):
                raise Unsupported("optionalOldSelf needs CEL optionals, which cel-python lacks")
            activation["oldSelf"] = _to_celpy(old, self._node)
        environment = celpy.Environment()
        deadline = time.monotonic() + FALLBACK_SECONDS
        evaluator = _budgeted_evaluator()(
            self._tree, environment.program(self._tree).new_activation(), counter, deadline
        )
        try:
            result = evaluator.evaluate(activation)
        except CostExceeded:
            raise
        except CELEvalError as exc:
            raise _translate(exc) from None
        except RecursionError as exc:
            raise Unsupported("expression too deeply nested for cel-python") from exc
        except Exception as exc:  # cel-python bugs must not escape as crashes
            raise Unsupported(f"cel-python failed: {type(exc).__name__}: {exc}") from exc
        return _from_celpy(result), counter[0]


@functools.cache
def _budgeted_evaluator() -> Any:
    from celpy.evaluation import Evaluator

    class BudgetedEvaluator(Evaluator):
        """Charges one unit per visited parse-tree node, including inside macros."""

        def __init__(self, tree: Any, activation: Any, counter: list[int], deadline: float) -> None:
            super().__init__(tree, activation)
            self._counter = counter
            self._deadline = deadline

        def sub_evaluator(self, ast: Any) -> Any:
            return BudgetedEvaluator(ast, self.activation, self._counter, self._deadline)

        def _visit_tree(self, tree: Any) -> Any:
            counter = self._counter
            counter[0] += 1
            if counter[0] > counter[1]:
                raise CostExceeded()
            if counter[0] % 64 == 0 and time.monotonic() > self._deadline:
                raise Unsupported("cel-python took too long")
            return super()._visit_tree(tree)

    return BudgetedEvaluator


def _translate(exc: Exception) -> Exception:
    """cel-python's error → the cel-go text, or :class:`Unsupported` when it is about celpy itself."""
    args = exc.args
    message = str(args[0]) if args else str(exc)
    cause = args[1] if len(args) > 1 else None
    detail = args[2] if len(args) > 2 else None
    if "undeclared reference" in message or "unknown function" in message:
        return Unsupported(f"cel-python: {message}")
    if cause is KeyError or "no such key" in message or "no such member" in message:
        key = detail[0] if isinstance(detail, tuple) and detail else message.rsplit(":", 1)[-1].strip(" '")
        return CelError(f"no such key: {key}")
    if cause is ZeroDivisionError:
        return CelError("division by zero")
    if cause is IndexError:
        return CelError("index out of bounds")
    if "overflow" in message:
        return CelError("integer overflow")
    if "overload" in message:
        return NoSuchOverload()
    return CelError(message)


def _to_celpy(value: Any, node: SchemaNode | None) -> Any:
    """Object data as cel-python values, typed by the schema the way Kubernetes types them."""
    import celpy
    from celpy import celtypes

    if node is None or value is None:
        return celpy.json_to_cel(value)
    details = info(node)
    if details.kind == "list" and isinstance(value, list) and node.items is not None:
        return celtypes.ListType([_to_celpy(item, node.items) for item in value])
    if details.kind in ("object", "map") and isinstance(value, dict):
        children = {}
        for key, item in value.items():
            child = node.properties.get(key) if details.kind == "object" else node.additional
            if details.kind == "object" and item is None:
                continue  # a null field of an object is an absent field
            children[celtypes.StringType(key)] = _to_celpy(item, child if isinstance(child, SchemaNode) else None)
        return celtypes.MapType(children)
    if details.converter is not None:
        converted = details.converter(value)
        return _python_to_celpy(converted)
    return celpy.json_to_cel(value)


def _python_to_celpy(value: Any) -> Any:
    from datetime import datetime, timedelta

    import celpy
    from celpy import celtypes

    if isinstance(value, datetime):
        return celtypes.TimestampType(value)
    if isinstance(value, timedelta):
        return celtypes.DurationType(value)
    if isinstance(value, bytes):
        return celtypes.BytesType(value)
    return celpy.json_to_cel(value)


def _from_celpy(value: Any) -> Any:
    from celpy import celtypes

    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, celtypes.StringType | str):
        return str(value)
    if isinstance(value, celtypes.IntType | celtypes.UintType):
        return int(value)
    if isinstance(value, celtypes.DoubleType | float):
        return float(value)
    return value


@functools.lru_cache(maxsize=8192)
def program_for(
    text: str, node: SchemaNode | None, resource_root: bool = False, optional_old_self: bool = False
) -> Program | FallbackProgram | UnsupportedRule:
    """The program for one rule (or message expression) at one schema node; cached."""
    try:
        return compile_expression(text, node, resource_root, optional_old_self)
    except cel_parse.CelSyntaxError as exc:
        return UnsupportedRule(text, str(exc))
    except Unsupported as exc:
        reason = str(exc)
    except RecursionError:
        return UnsupportedRule(text, "expression too deeply nested")
    parsed = cel_parse.parse(text)
    if not _celpy_knows(parsed):
        return UnsupportedRule(text, reason)
    try:
        import celpy

        tree = celpy.Environment().compile(text)
    except Exception:
        return UnsupportedRule(text, reason)
    return FallbackProgram(text, tree, node, cel_parse.references(parsed, "oldSelf"))


def _celpy_knows(tree: cel_parse.Node) -> bool:
    """Whether every function a rule calls exists in cel-python (else the fallback cannot help)."""
    from celpy.evaluation import base_functions

    for node in cel_parse.walk(tree):
        if isinstance(node, cel_parse.Unparsed):
            return False
        if isinstance(node, cel_parse.Call) and node.function not in base_functions and node.function != "dyn":
            return False
    return True
