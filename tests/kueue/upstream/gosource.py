"""A small reader of Go test source: enough of Go's expression syntax to re-express Kueue's test tables
(composite literals, calls, method chains, selectors, literals, unary and binary operators) as data.

Used by :mod:`tests.kueue.upstream.convert` (a development tool run against the kueue mirror); the
generated tables under ``data/`` are what the tests read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

_TOKEN = re.compile(r"""
    (?P<space>[ \t\r]+)
  | (?P<newline>\n)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<raw>`[^`]*`)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<rune>'(?:[^'\\\n]|\\.)+')
  | (?P<number>(?:0[xX][0-9a-fA-F_]+|[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\.\.\.|:=|<-|==|!=|<=|>=|&&|\|\||\+\+|--|[-+*/%&|^!<>=(){}\[\],;:.])
""", re.VERBOSE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # ident, number, string, op, semi, eof
    value: str
    line: int


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    line = 1
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise SyntaxError(f"line {line}: cannot read {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        value = m.group(0)
        pos = m.end()
        if kind == "newline" or (kind == "comment" and "\n" in value):
            if tokens and _ends_statement(tokens[-1]):
                tokens.append(Token("semi", "\n", line))
            line += value.count("\n") if kind == "comment" else 1
            continue
        if kind in ("space", "comment"):
            continue
        if kind == "raw":
            tokens.append(Token("string", value[1:-1], line))
        elif kind == "string":
            tokens.append(Token("string", _unquote(value), line))
        elif kind == "rune":
            tokens.append(Token("number", str(ord(_unquote(value.replace("'", '"'))[0])), line))
        elif kind == "op" and value == ";":
            tokens.append(Token("semi", ";", line))
        else:
            tokens.append(Token(kind or "op", value, line))
    tokens.append(Token("eof", "", line))
    return tokens


def _unquote(text: str) -> str:
    import ast

    return str(ast.literal_eval(text))


def _ends_statement(token: Token) -> bool:
    if token.kind in ("ident", "number", "string"):
        return token.value not in ("func", "struct", "map", "interface", "chan")
    return token.kind == "op" and token.value in (")", "]", "}", "++", "--")


# ---- AST -----------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Node:
    line: int


@dataclass(slots=True)
class Ident(Node):
    name: str


@dataclass(slots=True)
class Lit(Node):
    value: Any


@dataclass(slots=True)
class Sel(Node):
    target: Any
    name: str


@dataclass(slots=True)
class Call(Node):
    fn: Any
    args: list[Any]
    spread: bool = False


@dataclass(slots=True)
class Index(Node):
    target: Any
    index: Any


@dataclass(slots=True)
class Unary(Node):
    op: str
    operand: Any


@dataclass(slots=True)
class Binary(Node):
    op: str
    left: Any
    right: Any


@dataclass(slots=True)
class TypeExpr(Node):
    text: str


@dataclass(slots=True)
class Composite(Node):
    type: Any  # TypeExpr, Ident/Sel (named type) or None (elided)
    elements: list[tuple[Any, Any]] = field(default_factory=list)


@dataclass(slots=True)
class FuncLit(Node):
    text: str
    body: list[Token] = field(default_factory=list)

    def statements(self) -> tuple[list[tuple[str, Any]], Any]:
        """The body's top-level assignments and the expression of its final ``return``."""
        body = [*self.body, Token("eof", "", self.line)]
        function = _read_body("<closure>", body)
        result = None
        depth = 0
        for i, token in enumerate(body):
            if token.value == "{":
                depth += 1
            elif token.value == "}":
                depth -= 1
            elif depth == 0 and token.value == "return":
                parser = Parser(body)
                parser.pos = i + 1
                result = parser.parse_expr()
        return function.assignments, result


class Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.pos = 0

    # ---- helpers -------------------------------------------------------------------------------------
    def peek(self, offset: int = 0) -> Token:
        return self.tokens[min(self.pos + offset, len(self.tokens) - 1)]

    def next(self) -> Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def accept(self, value: str) -> bool:
        token = self.peek()
        if token.kind == "op" and token.value == value:
            self.pos += 1
            return True
        return False

    def expect(self, value: str) -> Token:
        token = self.next()
        if token.value != value:
            raise SyntaxError(f"line {token.line}: expected {value!r}, got {token.value!r}")
        return token

    def skip_semis(self) -> None:
        while self.peek().kind == "semi":
            self.pos += 1

    # ---- types ---------------------------------------------------------------------------------------
    def parse_type(self) -> str:
        token = self.peek()
        if token.value == "*":
            self.next()
            return "*" + self.parse_type()
        if token.value == "[":
            self.next()
            size = ""
            while self.peek().value != "]":
                size += self.next().value
            self.expect("]")
            return f"[{size}]" + self.parse_type()
        if token.value == "map":
            self.next()
            self.expect("[")
            key = self.parse_type()
            self.expect("]")
            return f"map[{key}]" + self.parse_type()
        if token.value in ("struct", "interface"):
            self.next()
            return token.value + self._balanced("{", "}")
        if token.value == "func":
            self.next()
            text = "func" + self._balanced("(", ")")
            if self.peek().value == "(":
                text += self._balanced("(", ")")
            elif self.peek().kind == "ident" or self.peek().value in ("*", "["):
                text += self.parse_type()
            return text
        name = self.next().value
        while self.peek().value == "." and self.peek(1).kind == "ident":
            self.next()
            name += "." + self.next().value
        if self.peek().value == "[" and self.peek(1).kind == "ident" and self.peek(2).value == "]":
            name += self._balanced("[", "]")  # generics
        return name

    def _balanced(self, opening: str, closing: str) -> str:
        text = ""
        depth = 0
        while True:
            token = self.next()
            if token.kind == "eof":
                raise SyntaxError("unbalanced")
            if token.value == opening:
                depth += 1
            elif token.value == closing:
                depth -= 1
            text += (" " if token.kind != "op" else "") + token.value
            if depth == 0:
                return text

    # ---- expressions ---------------------------------------------------------------------------------
    _BINARY: ClassVar[dict[str, int]] = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3,
               "+": 4, "-": 4, "|": 4, "^": 4, "*": 5, "/": 5, "%": 5, "&": 5}

    def parse_expr(self, precedence: int = 0) -> Any:
        left = self.parse_unary()
        while True:
            token = self.peek()
            prec = self._BINARY.get(token.value) if token.kind == "op" else None
            if prec is None or prec <= precedence:
                return left
            self.next()
            right = self.parse_expr(prec)
            left = Binary(token.line, token.value, left, right)

    def parse_unary(self) -> Any:
        token = self.peek()
        if token.kind == "op" and token.value in ("&", "-", "+", "!", "*", "^"):
            self.next()
            return Unary(token.line, token.value, self.parse_unary())
        return self.parse_postfix(self.parse_primary())

    def parse_primary(self) -> Any:
        token = self.peek()
        if token.kind == "number":
            self.next()
            text = token.value.replace("_", "")
            value: Any = int(text, 0) if re.fullmatch(r"0[xX][0-9a-fA-F]+|[0-9]+", text) else float(text)
            return Lit(token.line, value)
        if token.kind == "string":
            self.next()
            return Lit(token.line, token.value)
        if token.value == "(":
            self.next()
            inner = self.parse_expr()
            self.expect(")")
            return inner
        if token.value == "func":
            start = self.pos
            self.next()
            self._balanced("(", ")")
            while self.peek().value != "{":
                self.next()
            body_start = self.pos + 1
            self._balanced("{", "}")
            text = " ".join(t.value for t in self.tokens[start:self.pos])
            return FuncLit(token.line, text, self.tokens[body_start:self.pos - 1])
        if token.value in ("[", "map", "struct") or (False):
            type_text = self.parse_type()
            if self.peek().value == "{":
                return self.parse_composite(TypeExpr(token.line, type_text))
            if self.peek().value == "(":
                return TypeExpr(token.line, type_text)
            return TypeExpr(token.line, type_text)
        if token.value == "{":
            return self.parse_composite(None)
        if token.kind == "ident":
            self.next()
            return Ident(token.line, token.value)
        raise SyntaxError(f"line {token.line}: unexpected {token.value!r}")

    def parse_postfix(self, expr: Any) -> Any:
        while True:
            token = self.peek()
            if token.value == ".":
                self.next()
                if self.peek().value == "(":  # type assertion x.(T)
                    self._balanced("(", ")")
                    continue
                name = self.next()
                expr = Sel(name.line, expr, name.value)
            elif token.value == "(":
                self.next()
                args: list[Any] = []
                spread = False
                self.skip_semis()
                while not self.accept(")"):
                    args.append(self._arg())
                    if self.accept("..."):
                        spread = True
                    self.skip_semis()
                    if not self.accept(","):
                        self.skip_semis()
                        self.expect(")")
                        break
                    self.skip_semis()
                expr = Call(token.line, expr, args, spread)
            elif token.value == "[":
                self.next()
                if self.peek().value == "]":
                    raise SyntaxError(f"line {token.line}: slice type in expression")
                index = self.parse_expr()
                if self.accept(":") and self.peek().value != "]":
                    self.parse_expr()
                self.expect("]")
                expr = Index(token.line, expr, index)
            elif token.value == "{" and _composite_type(expr):
                expr = self.parse_composite(expr)
            else:
                return expr

    def _arg(self) -> Any:
        token = self.peek()
        if token.value in ("map", "[", "*", "struct"):
            saved = self.pos
            try:
                type_text = self.parse_type()
                if self.peek().value == "{":
                    return self.parse_composite(TypeExpr(token.line, type_text))
                if self.peek().value in (",", ")") and token.value != "*":
                    return TypeExpr(token.line, type_text)
            except SyntaxError:
                pass
            self.pos = saved
        return self.parse_expr()

    def parse_composite(self, type_node: Any) -> Composite:
        start = self.expect("{")
        node = Composite(start.line, type_node)
        self.skip_semis()
        while not self.accept("}"):
            value = self._element()
            key = None
            if self.accept(":"):
                self.skip_semis()
                key, value = value, self._element()
            node.elements.append((key, value))
            self.skip_semis()
            if not self.accept(","):
                self.skip_semis()
                self.expect("}")
                break
            self.skip_semis()
        return node

    def _element(self) -> Any:
        if self.peek().value == "{":
            return self.parse_composite(None)
        return self._arg()


def _composite_type(expr: Any) -> bool:
    """Whether ``expr {`` starts a composite literal (a named type, possibly qualified)."""
    if isinstance(expr, Ident):
        return expr.name not in ("range", "if", "for", "switch", "select", "go", "defer", "return", "else")
    if isinstance(expr, Sel):
        return isinstance(expr.target, Ident) and expr.name[:1].isupper()
    if isinstance(expr, Index):
        return _composite_type(expr.target)
    return False


@dataclass(slots=True)
class Function:
    name: str
    #: Top-level ``name := expr`` (and ``var name = expr``) statements, in order.
    assignments: list[tuple[str, Any]]
    #: Assignments that could not be read: name -> reason.
    unreadable: dict[str, str]


def functions(text: str) -> dict[str, Function]:
    """Every ``func TestX(t *testing.T)`` of a file with its readable top-level assignments."""
    tokens = tokenize(text)
    out: dict[str, Function] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.value == "func" and tokens[i + 1].kind == "ident" and tokens[i + 2].value == "(":
            name = tokens[i + 1].value
            j = i + 2
            depth = 0
            while True:  # parameters
                if tokens[j].value == "(":
                    depth += 1
                elif tokens[j].value == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            while tokens[j].value != "{":
                j += 1
            body_start = j + 1
            depth = 1
            k = body_start
            while depth:
                if tokens[k].value == "{":
                    depth += 1
                elif tokens[k].value == "}":
                    depth -= 1
                k += 1
            out[name] = _read_body(name, [*tokens[body_start:k - 1], Token("eof", "", tokens[k - 1].line)])
            i = k
            continue
        i += 1
    return out


def _read_body(name: str, tokens: list[Token]) -> Function:
    function = Function(name, [], {})
    i = 0
    while i < len(tokens):
        token = tokens[i]
        at_statement = i == 0 or tokens[i - 1].kind == "semi" or tokens[i - 1].value in ("{", "}")
        if at_statement and token.kind == "ident" and tokens[i + 1].value == ":=":
            parser = Parser(tokens)
            parser.pos = i + 2
            try:
                expr = parser.parse_expr()
                function.assignments.append((token.value, expr))
                i = parser.pos
                continue
            except (SyntaxError, IndexError) as exc:
                function.unreadable[token.value] = str(exc)
        elif at_statement and token.value in ("var", "const"):
            i = _read_decl(tokens, i, function)
            continue
        # Skip nested blocks (loops, t.Run closures): only top-level statements are read.
        if token.value == "{":
            depth = 1
            i += 1
            while i < len(tokens) and depth:
                if tokens[i].value == "{":
                    depth += 1
                elif tokens[i].value == "}":
                    depth -= 1
                i += 1
            continue
        i += 1
    return function


def _read_decl(tokens: list[Token], i: int, function: Function) -> int:
    """``var``/``const`` declarations (single or parenthesised) at ``tokens[i]``; returns the next index."""
    parser = Parser(tokens)
    parser.pos = i + 1
    grouped = parser.accept("(")
    while True:
        parser.skip_semis()
        if grouped and parser.accept(")"):
            return parser.pos
        names = [parser.next().value]
        while parser.accept(","):
            names.append(parser.next().value)
        try:
            if parser.peek().value != "=" and parser.peek().kind != "semi":
                parser.parse_type()
            if parser.accept("="):
                expr = parser.parse_expr()
                if len(names) == 1:
                    function.assignments.append((names[0], expr))
        except (SyntaxError, IndexError) as exc:
            for name in names:
                function.unreadable[name] = str(exc)
            while parser.peek().kind not in ("semi", "eof") and parser.peek().value != ")":
                if parser.peek().value in ("{", "(", "["):
                    closing = {"{": "}", "(": ")", "[": "]"}[parser.peek().value]
                    parser._balanced(parser.peek().value, closing)
                else:
                    parser.next()
        if not grouped:
            return parser.pos


def globals_of(text: str) -> Function:
    """The package-level ``var`` and ``const`` declarations of a file."""
    tokens = tokenize(text)
    function = Function("<package>", [], {})
    i = 0
    depth = 0
    while i < len(tokens):
        token = tokens[i]
        if token.value in ("{", "("):
            depth += 1
        elif token.value in ("}", ")"):
            depth -= 1
        elif depth == 0 and token.value in ("var", "const") and (i == 0 or tokens[i - 1].kind == "semi"):
            i = _read_decl(tokens, i, function)
            continue
        i += 1
    return function
