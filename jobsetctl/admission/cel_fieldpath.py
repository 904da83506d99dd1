"""``fieldPath`` of a validation rule: Kubernetes' ``ValidFieldPath`` (apiextensions ``schema/cel``).

A relative JSON path such as ``.spec.replicas`` or ``.labels['app.kubernetes.io/name']``: ``.name``
or ``['name']`` selects a property where the schema has ``properties`` and a map key where it has
``additionalProperties``. The path is rendered the way apimachinery renders a ``field.Path`` built
from it (properties joined by dots, map keys in brackets), then appended to the rule's node path as a
*single* child, exactly as the API server does (``currentFldPath.Child(normalized)``).

A path the API server would have refused at CRD creation yields None; the error is then reported at
the node itself.
"""

from __future__ import annotations

import functools
import re

from jobsetctl.admission.schema import SchemaNode
from jobsetctl.kube.field import Path

_TOKEN = re.compile(r"'(?:[^'\\]|\\.)*'|[.\[\]]|[^.\[\]']+")
_SINGLE_QUOTE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
                         "'": "'", "\\": "\\"}


@functools.cache
def normalize_field_path(text: str, node: SchemaNode) -> tuple[str, Path] | None:
    """(rendered path, segments in the object) for a rule's ``fieldPath``; None when invalid."""
    tokens = _TOKEN.findall(text)
    if "".join(tokens) != text:
        return None
    rendered = ""
    segments: list[str | int] = []
    schema: SchemaNode | None = node
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "[":
            if i + 2 >= len(tokens) or tokens[i + 2] != "]":
                return None
            quoted = tokens[i + 1]
            if len(quoted) < 2 or quoted[0] != "'" or quoted[-1] != "'":
                return None
            name = _unescape_single_quote(quoted[1:-1])
            if name is None:
                return None
            i += 3
        elif token == ".":
            if i + 1 >= len(tokens) or tokens[i + 1] in (".", "[", "]"):
                return None
            name = tokens[i + 1]
            i += 2
        else:
            return None
        if schema is None:
            return None
        if schema.properties:
            if name not in schema.properties:
                return None
            rendered = name if not rendered else f"{rendered}.{name}"
            schema = schema.properties[name]
        elif isinstance(schema.additional, SchemaNode):
            rendered = f"{rendered}[{name}]"
            schema = schema.additional
        else:
            return None
        segments.append(name)
    if not segments:
        return None
    return rendered, tuple(segments)


def _unescape_single_quote(body: str) -> str | None:
    out: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\":
            if i + 1 >= len(body) or body[i + 1] not in _SINGLE_QUOTE_ESCAPES:
                return None
            out.append(_SINGLE_QUOTE_ESCAPES[body[i + 1]])
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)
