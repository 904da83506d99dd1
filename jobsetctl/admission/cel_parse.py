"""Parse CEL text into a small AST, using cel-python's (``celpy``) grammar and lark parser.

celpy's parse tree mirrors the CEL grammar production by production (``expr``, ``conditionalor``,
``relation``, ``member_dot``, ``ident_arg``...); :func:`parse` folds it into the handful of node kinds
below, expands the macros (``has``, ``all``, ``exists``, ``exists_one``, ``filter``, ``map``) and
decodes literals, so that :mod:`.cel_compile` deals with meaning only.

celpy's grammar predates CEL optionals (``x.?f``, ``m[?k]``), which Kubernetes enables for CRD rules;
:func:`_rewrite_optionals` turns those two forms into member calls the grammar accepts before parsing.

Limits, as cel-go's parser applies them (``parser/parser.go``): an expression longer than 100,000
code points is refused (``expression code point size exceeds limit``), and nesting deeper than
:data:`MAX_DEPTH` is refused; cel-go's recursion limit of 250 counts grammar levels, not AST levels,
so this bound is an approximation (noted, not a byte-exact match).
"""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass
from typing import Any, Final

from jobsetctl.admission.cel_values import INT64_MAX, INT64_MIN, UINT64_MAX, Uint

MAX_CODE_POINTS: Final = 100_000
MAX_DEPTH: Final = 200
MACROS: Final = frozenset({"all", "exists", "exists_one", "filter", "map"})
#: Member-call names the optional rewrite uses; no Kubernetes field can be named like this.
OPT_SELECT: Final = "_jsctl_opt_select_"
OPT_INDEX: Final = "_jsctl_opt_index_"


class CelSyntaxError(Exception):
    """The text is not a CEL expression we can parse (or exceeds the parser limits)."""


# ------------------------------------------------------------------------------------------ the AST

class Node:
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Literal(Node):
    value: Any


@dataclass(frozen=True, slots=True)
class Ident(Node):
    name: str


@dataclass(frozen=True, slots=True)
class Select(Node):
    operand: Node
    field: str
    optional: bool = False


@dataclass(frozen=True, slots=True)
class Has(Node):
    """``has(operand.field)``."""

    operand: Node
    field: str


@dataclass(frozen=True, slots=True)
class Index(Node):
    operand: Node
    index: Node
    optional: bool = False


@dataclass(frozen=True, slots=True)
class Call(Node):
    """A function (``target`` None) or a method call (``target.function(args)``)."""

    function: str
    target: Node | None
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class CreateList(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class CreateMap(Node):
    entries: tuple[tuple[Node, Node], ...]


@dataclass(frozen=True, slots=True)
class Conditional(Node):
    condition: Node
    then: Node
    otherwise: Node


@dataclass(frozen=True, slots=True)
class And(Node):
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Or(Node):
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Not(Node):
    operand: Node


@dataclass(frozen=True, slots=True)
class Negate(Node):
    operand: Node


@dataclass(frozen=True, slots=True)
class Binary(Node):
    """``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``, ``+``, ``-``, ``*``, ``/``, ``%``."""

    op: str
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Comprehension(Node):
    """A macro over a list or map: ``target.macro(variable, args...)``."""

    macro: str
    target: Node
    variable: str
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Unparsed(Node):
    """A construct celpy parses but we do not model (message literals ``T{f: v}``, ``.name``)."""

    what: str


def walk(node: Node) -> list[Node]:
    """Every node of a tree, outermost first (used for sizes and ``oldSelf`` detection)."""
    out: list[Node] = []
    stack: list[Node] = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(reversed(children(current)))
    return out


def children(node: Node) -> list[Node]:
    if isinstance(node, Select | Has | Not | Negate):
        return [node.operand]
    if isinstance(node, Index):
        return [node.operand, node.index]
    if isinstance(node, Call):
        return ([node.target] if node.target is not None else []) + list(node.args)
    if isinstance(node, CreateList):
        return list(node.items)
    if isinstance(node, CreateMap):
        return [part for entry in node.entries for part in entry]
    if isinstance(node, Conditional):
        return [node.condition, node.then, node.otherwise]
    if isinstance(node, And | Or | Binary):
        return [node.left, node.right]
    if isinstance(node, Comprehension):
        return [node.target, *node.args]
    return []


def references(node: Node, name: str) -> bool:
    """Whether an identifier is used anywhere (Kubernetes: a rule "uses oldSelf")."""
    return any(isinstance(n, Ident) and n.name == name for n in walk(node))


# -------------------------------------------------------------------------------------- entry point

_lock = threading.Lock()
_environment: Any = None


def _celpy_environment() -> Any:
    # celpy raises the interpreter's recursion limit to 2,500 when an Environment is created (its
    # grammar is deeply recursive); we create one lazily, once.
    global _environment
    with _lock:
        if _environment is None:
            import celpy

            _environment = celpy.Environment()
        return _environment


@functools.lru_cache(maxsize=4096)
def parse(text: str) -> Node:
    """The AST of a CEL expression; raises :class:`CelSyntaxError`. Cached per text.

    The rules of the schemas we ship come parsed already (:mod:`.cel_builtin`), which spares most runs
    the construction of celpy's parser."""
    from jobsetctl.admission.cel_builtin import ASTS

    builtin = ASTS.get(text)
    if builtin is not None:
        return builtin
    return parse_with_celpy(text)


def parse_with_celpy(text: str) -> Node:
    """:func:`parse` without the table of shipped rules (which this function generates)."""
    if len(text) > MAX_CODE_POINTS:
        raise CelSyntaxError(
            f"expression code point size exceeds limit: size: {len(text)}, limit {MAX_CODE_POINTS}"
        )
    source = _rewrite_optionals(text)
    try:
        tree = _celpy_environment().compile(source)
        node = _Builder().expr(tree)
    except RecursionError as exc:
        raise CelSyntaxError("max recursion depth exceeded") from exc
    except CelSyntaxError:
        raise
    except Exception as exc:  # celpy and lark raise several exception types for bad input
        raise CelSyntaxError(_syntax_message(exc)) from exc
    if _depth(node) > MAX_DEPTH:
        raise CelSyntaxError("max recursion depth exceeded")
    return node


def _syntax_message(exc: Exception) -> str:
    first = str(exc).strip().splitlines()
    return f"Syntax error: {first[0]}" if first else "Syntax error"


def _depth(node: Node) -> int:
    deepest = 0
    stack: list[tuple[Node, int]] = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children(current))
    return deepest


# -------------------------------------------------------------------------- optional-syntax rewrite

_IDENT_START = re.compile(r"\s*\?\s*([_a-zA-Z][_a-zA-Z0-9]*)")
_STRING_START = re.compile(r"[rRbB]{0,2}('''|\"\"\"|'|\")")


def _rewrite_optionals(text: str) -> str:
    """``a.?f`` → ``a._jsctl_opt_select_f()`` and ``a[?k]`` → ``a._jsctl_opt_index_(k)``.

    Strings and comments are copied untouched. ``[?`` only counts as an optional index after an
    operand (an identifier, a literal's end, ``)`` or ``]``); elsewhere it is an optional list
    element, which we leave to the parser to refuse.
    """
    if "?" not in text:
        return text
    out: list[str] = []
    closers: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        string = _STRING_START.match(text, i) if ch in "'\"rRbB" else None
        if string is not None and (ch in "'\"" or not (i and (text[i - 1].isalnum() or text[i - 1] == "_"))):
            end = _string_end(text, string.end(), string.group(1), raw="r" in string.group(0)[:2].lower())
            out.append(text[i:end])
            i = end
            continue
        if ch == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(text[i:end])
            i = end
            continue
        if ch == ".":
            match = _IDENT_START.match(text, i + 1)
            if match is not None:
                out.append(f".{OPT_SELECT}{match.group(1)}()")
                i = match.end()
                continue
        if ch == "[":
            j = i + 1
            while j < n and text[j].isspace():
                j += 1
            previous = "".join(out).rstrip()[-1:]
            if j < n and text[j] == "?" and previous and (previous.isalnum() or previous in "_)]}'\""):
                out.append(f".{OPT_INDEX}(")
                closers.append(")")
                i = j + 1
                continue
            closers.append("]")
        elif ch == "]" and closers:
            out.append(closers.pop())
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _string_end(text: str, start: int, quote: str, raw: bool) -> int:
    i = start
    n = len(text)
    while i < n:
        if not raw and text[i] == "\\":
            i += 2
            continue
        if text.startswith(quote, i):
            return i + len(quote)
        i += 1
    return n


# ---------------------------------------------------------------------------- lark tree to the AST

_RELATIONS: Final = {
    "relation_lt": "<", "relation_le": "<=", "relation_gt": ">", "relation_ge": ">=",
    "relation_eq": "==", "relation_ne": "!=", "relation_in": "in",
}
_ARITHMETIC: Final = {
    "addition_add": "+", "addition_sub": "-",
    "multiplication_mul": "*", "multiplication_div": "/", "multiplication_mod": "%",
}


class _Builder:
    """Folds celpy's parse tree (one node per grammar production) into :class:`Node` objects."""

    def expr(self, tree: Any) -> Node:
        kind = tree.data
        method = getattr(self, f"_{kind}", None)
        if method is None:
            raise CelSyntaxError(f"unexpected construct {kind}")
        result: Node = method(tree.children)
        return result

    def _expr(self, parts: list[Any]) -> Node:
        if len(parts) == 1:
            return self.expr(parts[0])
        return Conditional(self.expr(parts[0]), self.expr(parts[1]), self.expr(parts[2]))

    def _conditionalor(self, parts: list[Any]) -> Node:
        if len(parts) == 1:
            return self.expr(parts[0])
        return Or(self.expr(parts[0]), self.expr(parts[1]))

    def _conditionaland(self, parts: list[Any]) -> Node:
        if len(parts) == 1:
            return self.expr(parts[0])
        return And(self.expr(parts[0]), self.expr(parts[1]))

    def _relation(self, parts: list[Any]) -> Node:
        if len(parts) == 1:
            return self.expr(parts[0])
        operator = parts[0]
        return Binary(_RELATIONS[operator.data], self.expr(operator.children[0]), self.expr(parts[1]))

    def _addition(self, parts: list[Any]) -> Node:
        if len(parts) == 1:
            return self.expr(parts[0])
        operator = parts[0]
        return Binary(_ARITHMETIC[operator.data], self.expr(operator.children[0]), self.expr(parts[1]))

    _multiplication = _addition

    def _unary(self, parts: list[Any]) -> Node:
        if len(parts) == 1:
            return self.expr(parts[0])
        operand = self.expr(parts[1])
        if parts[0].data == "unary_not":
            return Not(operand)
        return Negate(operand)

    def _member(self, parts: list[Any]) -> Node:
        return self.expr(parts[0])

    def _primary(self, parts: list[Any]) -> Node:
        return self.expr(parts[0])

    def _paren_expr(self, parts: list[Any]) -> Node:
        return self.expr(parts[0])

    def _member_dot(self, parts: list[Any]) -> Node:
        return Select(self.expr(parts[0]), str(parts[1]))

    def _member_index(self, parts: list[Any]) -> Node:
        return Index(self.expr(parts[0]), self.expr(parts[1]))

    def _member_object(self, parts: list[Any]) -> Node:
        return Unparsed("message construction")

    def _dot_ident(self, parts: list[Any]) -> Node:
        return Unparsed("root-scoped identifier")

    def _dot_ident_arg(self, parts: list[Any]) -> Node:
        return Unparsed("root-scoped function")

    def _ident(self, parts: list[Any]) -> Node:
        return Ident(str(parts[0]))

    def _arguments(self, parts: list[Any]) -> list[Any]:
        return list(parts[0].children) if parts else []

    def _member_dot_arg(self, parts: list[Any]) -> Node:
        target_tree, name_token = parts[0], str(parts[1])
        raw_args = self._arguments(parts[2:])
        if name_token.startswith(OPT_SELECT) and not raw_args:
            return Select(self.expr(target_tree), name_token[len(OPT_SELECT):], optional=True)
        if name_token == OPT_INDEX and len(raw_args) == 1:
            return Index(self.expr(target_tree), self.expr(raw_args[0]), optional=True)
        target = self.expr(target_tree)
        if name_token in MACROS and len(raw_args) in (2, 3):
            variable = self._variable(raw_args[0])
            if variable is not None and (len(raw_args) == 2 or name_token == "map"):
                return Comprehension(name_token, target, variable, tuple(self.expr(a) for a in raw_args[1:]))
            if variable is None:
                raise CelSyntaxError(f"{name_token}() variable name must be a simple identifier")
        return Call(name_token, target, tuple(self.expr(a) for a in raw_args))

    def _variable(self, tree: Any) -> str | None:
        node = self.expr(tree)
        return node.name if isinstance(node, Ident) else None

    def _ident_arg(self, parts: list[Any]) -> Node:
        name = str(parts[0])
        raw_args = self._arguments(parts[1:])
        if name == "has":
            if len(raw_args) != 1:
                raise CelSyntaxError("invalid argument to has() macro")
            argument = self.expr(raw_args[0])
            if not isinstance(argument, Select) or argument.optional:
                raise CelSyntaxError("invalid argument to has() macro")
            return Has(argument.operand, argument.field)
        return Call(name, None, tuple(self.expr(a) for a in raw_args))

    def _list_lit(self, parts: list[Any]) -> Node:
        return CreateList(tuple(self.expr(a) for a in self._arguments(parts)))

    def _map_lit(self, parts: list[Any]) -> Node:
        if not parts:
            return CreateMap(())
        values = [self.expr(a) for a in parts[0].children]
        return CreateMap(tuple((values[i], values[i + 1]) for i in range(0, len(values), 2)))

    def _literal(self, parts: list[Any]) -> Node:
        token = parts[0]
        return Literal(decode_literal(token.type, str(token)))


# ------------------------------------------------------------------------------------------ literals

_ESCAPES: Final = {
    "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
    "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?",
}


def decode_literal(kind: str, text: str) -> Any:
    """The value of a literal token (cel-spec "Literals")."""
    if kind == "INT_LIT":
        value = _integer(text)
        if value < INT64_MIN or value > INT64_MAX:
            raise CelSyntaxError(f"invalid int literal: {text}")
        return value
    if kind == "UINT_LIT":
        value = _integer(text[:-1])
        if value < 0 or value > UINT64_MAX:
            raise CelSyntaxError(f"invalid uint literal: {text}")
        return Uint(value)
    if kind == "FLOAT_LIT":
        return float(text)
    if kind == "BOOL_LIT":
        return text == "true"
    if kind == "NULL_LIT":
        return None
    if kind in ("STRING_LIT", "MLSTRING_LIT"):
        return decode_string(text)
    if kind == "BYTES_LIT":
        return decode_bytes(text[1:])
    raise CelSyntaxError(f"unexpected literal {text}")


def _integer(text: str) -> int:
    negative = text.startswith("-")
    body = text.lstrip("-")
    value = int(body[2:], 16) if body[:2] in ("0x", "0X") else int(body)
    return -value if negative else value


def _split_quotes(text: str) -> tuple[bool, str]:
    raw = text[0] in "rR"
    if raw:
        text = text[1:]
    quote = text[:3] if text[:3] in ("'''", '"""') else text[0]
    return raw, text[len(quote):-len(quote)]


def decode_string(text: str) -> str:
    raw, body = _split_quotes(text)
    if raw:
        return body
    return "".join(chr(code) if isinstance(code, int) else code for code in _unescape(body, as_bytes=False))


def decode_bytes(text: str) -> bytes:
    raw, body = _split_quotes(text)
    if raw:
        return body.encode("utf-8")
    out = bytearray()
    for part in _unescape(body, as_bytes=True):
        if isinstance(part, int):
            out.append(part)
        else:
            out.extend(part.encode("utf-8"))
    return bytes(out)


def _unescape(body: str, as_bytes: bool) -> list[str | int]:
    """Characters and escapes of a quoted literal body; octal and ``\\x`` escapes are bytes in a bytes
    literal and code points in a string literal (cel-spec)."""
    out: list[str | int] = []
    i = 0
    n = len(body)
    while i < n:
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= n:
            raise CelSyntaxError("invalid escape at end of string")
        code = body[i + 1]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        elif code in "xX":
            out.append(_hex(body, i + 2, 2))
            i += 4
        elif code == "u" and not as_bytes:
            out.append(chr(_hex(body, i + 2, 4)))
            i += 6
        elif code == "U" and not as_bytes:
            out.append(chr(_hex(body, i + 2, 8)))
            i += 10
        elif code in "0123":
            digits = body[i + 1:i + 4]
            if len(digits) != 3 or any(d not in "01234567" for d in digits):
                raise CelSyntaxError(f"invalid octal escape \\{digits}")
            out.append(int(digits, 8))
            i += 4
        else:
            raise CelSyntaxError(f"invalid escape \\{code}")
    return out


def _hex(body: str, start: int, count: int) -> int:
    digits = body[start:start + count]
    if len(digits) != count or any(d not in "0123456789abcdefABCDEF" for d in digits):
        raise CelSyntaxError(f"invalid hex escape {digits!r}")
    value = int(digits, 16)
    if count > 2 and (value > 0x10FFFF or 0xD800 <= value <= 0xDFFF):
        raise CelSyntaxError(f"invalid unicode code point {digits}")
    return value
