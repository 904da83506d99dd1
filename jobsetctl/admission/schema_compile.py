"""Compile OpenAPI v3 / JSON Schema documents into :class:`SchemaNode` trees.

Three kinds of documents are compiled, and each keeps the semantics its source has upstream:

* **CRD schemas** (an ``openAPIV3Schema``, or one of ours under ``jobsetctl/schemas/``): structural-schema
  semantics. An object without ``additionalProperties`` or ``x-kubernetes-preserve-unknown-fields`` has no
  other keys (apiextensions prunes them, strict field validation reports them); only the formats
  apiextensions keeps are checked (``int32``/``int64`` are stripped,
  apiextensions-apiserver ``pkg/apiserver/validation/formats.go``); ``null`` is a value only where
  ``nullable: true``.
* **Kubernetes definitions as built-in kinds see them** (:data:`NATIVE`, kubernetes-validate's strict
  ``_definitions.json``): JSON Schema semantics (an object without ``additionalProperties`` is open), the
  ``"null"`` in optional fields' type lists is honoured (Go decodes ``null`` as the zero value), and the
  formats the Go decoder enforces are checked (int32/int64 ranges, RFC 3339 times, base64).
* **Kubernetes definitions embedded in a CRD** (:data:`EMBEDDED`, our ``k8s:`` references): the same
  definitions as controller-gen writes them into a CRD: not nullable, no ``apiVersion``/``kind`` enums,
  IntOrString and Quantity as ``x-kubernetes-int-or-string`` with controller-gen's ``anyOf`` (and the
  quantity ``pattern``), plus the ``+default`` markers of ``k8s.io/api`` and the restricted embedded
  ``ObjectMeta``. Those last two come from ``jobsetctl/schemas/_k8s_embedded.json`` (see its ``$comment``).

References: ``#/$defs/<name>`` (the current document), ``/api/_definitions.json#/$defs/<name>``
(kubernetes-validate), ``k8s:<definition>`` (a Kubernetes definition, embedded), and
``<file>.json#/$defs/<name>`` (another of our schemas). A ``$ref`` may carry sibling keywords, which
override the target's (e.g. a ``default`` or ``x-kubernetes-validations``), and an
``x-jobsetctl-patch`` list of RFC 6902 ``add``/``replace``/``remove`` operations applied to a copy of the
target before it is compiled (how Trainer's runtime embeds its pinned, slightly older JobSet schema).

Definitions are compiled once per (definition, release, mode) and shared, so recursive definitions
terminate and every JobSet shares one ``PodSpec`` tree.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Final

from jobsetctl.admission.schema_definitions import Definitions
from jobsetctl.admission.schema_derive import derive, finish
from jobsetctl.admission.schema_node import MISSING, CelRule, SchemaNode
from jobsetctl.kube.versions import KubeVersion, schema_dir


class Mode(Enum):
    """How a Kubernetes definition is compiled (see the module docstring)."""

    NATIVE = "native"
    EMBEDDED = "embedded"


NATIVE: Final = Mode.NATIVE
EMBEDDED: Final = Mode.EMBEDDED

QUANTITY_DEFINITION: Final = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING_DEFINITION: Final = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
OBJECT_META_DEFINITION: Final = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
#: The pattern controller-gen puts on every Quantity of a CRD (k8s.io/apimachinery's Quantity OpenAPI).
QUANTITY_CRD_PATTERN: Final = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

#: Formats apiextensions keeps in CRD schemas, after its "-" normalisation (formats.go). Only those we
#: can check are listed in schema_validate's checkers; the others are accepted unchecked.
CRD_FORMATS: Final = frozenset({
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3", "uuid4",
    "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor", "byte", "password",
    "date", "duration", "datetime",
})
#: Formats whose violation the Go JSON decoder of a built-in kind rejects.
NATIVE_FORMATS: Final = frozenset({"int32", "int64", "date-time", "byte"})

_K8S_PREFIX = "k8s:"
_K8S_DEFS_PREFIXES = ("#/$defs/", "/api/_definitions.json#/$defs/")
_K8S_FILE_PREFIX = "/api/_definitions.json#/$defs/"
_IGNORED_SIBLINGS = frozenset({"description", "$comment"})


@dataclass(frozen=True, slots=True)
class Doc:
    """The document a schema fragment belongs to: decides what ``#/$defs`` means and which semantics apply."""

    #: "k8s" (kubernetes-validate definitions), "authored" (jobsetctl/schemas), "crd" (a given schema).
    kind: str
    name: str
    data: Any
    mode: Mode = EMBEDDED
    #: Inside anyOf/oneOf/allOf: value validations only, which never prune (JSON Schema semantics).
    branch: bool = False

    @property
    def closed_objects(self) -> bool:
        return self.kind != "k8s" and not self.branch

    @property
    def native(self) -> bool:
        return self.kind == "k8s" and self.mode is NATIVE


class SchemaError(ValueError):
    """A schema we cannot compile (a programming error in our schemas, or an unsupported ``--crd``)."""


# --- documents -------------------------------------------------------------------------------------


@functools.cache
def k8s_definitions(version: KubeVersion) -> Definitions:
    """kubernetes-validate's strict ``$defs`` for a release (read once; each definition parsed on first use)."""
    return Definitions.read(f"{schema_dir(version)}/_definitions.json")


#: Our schemas (package data, ``jobsetctl/schemas``).
_SCHEMAS_DIR: Final = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "schemas")


@functools.cache
def authored_document(name: str) -> dict[str, Any]:
    """One of our schemas, ``jobsetctl/schemas/<name>.json`` (package data)."""
    # A path beside the package rather than ``importlib.resources.files``: that imports importlib.readers
    # and zipfile (~7 ms of every run), and jobsetctl is installed as files (kubernetes-validate's data
    # is read the same way, kube.versions).
    path = os.path.join(_SCHEMAS_DIR, f"{name}.json")
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError as exc:
        raise SchemaError(f"no schema jobsetctl/schemas/{name}.json") from exc
    data: dict[str, Any] = json.loads(text)
    return data


@functools.cache
def _overlay() -> dict[str, Any]:
    return authored_document("_k8s_embedded")


# --- the compiler ------------------------------------------------------------------------------------

#: Shared compiled definitions: (document kind, document name, definition, release, mode) -> node.
_MEMO: dict[tuple[str, str, str, KubeVersion, Mode], SchemaNode] = {}


class Compiler:
    """Compiles fragments of one release; definitions go through the process-wide memo."""

    def __init__(self, version: KubeVersion) -> None:
        self.version = version

    # public entry points

    def compile_root(self, schema: dict[str, Any], doc: Doc) -> SchemaNode:
        root = self.node(schema, doc)
        finish(root)
        return root

    def definition(self, name: str, mode: Mode) -> SchemaNode:
        node = self._k8s(name, mode)
        finish(node)
        return node

    # references

    def node(self, schema: Any, doc: Doc) -> SchemaNode:
        if not isinstance(schema, dict):
            if schema is True or schema == {}:
                return self._fill(SchemaNode(), {}, doc)
            raise SchemaError(f"not a schema: {schema!r}")
        ref = schema.get("$ref")
        if ref is None:
            return self._fill(SchemaNode(), schema, doc)
        siblings = {k: v for k, v in schema.items() if k != "$ref" and k not in _IGNORED_SIBLINGS}
        patch = siblings.pop("x-jobsetctl-patch", None)
        if patch is not None:
            raw, target_doc = self._raw(ref, doc)
            merged = _apply_patch(copy.deepcopy(raw), patch)
            merged.update(siblings)
            return self._fill(SchemaNode(), merged, target_doc)
        base = self._resolve(ref, doc)
        return _override(base, siblings, doc) if siblings else base

    def _resolve(self, ref: str, doc: Doc) -> SchemaNode:
        if ref.startswith(_K8S_PREFIX):
            return self._k8s(ref[len(_K8S_PREFIX):], EMBEDDED)
        if doc.kind == "k8s":
            for prefix in _K8S_DEFS_PREFIXES:
                if ref.startswith(prefix):
                    return self._k8s(ref[len(prefix):], doc.mode)
        if ref.startswith(_K8S_FILE_PREFIX):
            # A kubernetes-validate top-level file (job-batch-v1.json) given as a schema: built-in semantics.
            return self._k8s(ref[len(_K8S_FILE_PREFIX):], NATIVE)
        target_doc, name = self._split_local(ref, doc)
        key = (target_doc.kind, target_doc.name, name, self.version, target_doc.mode)
        node = _MEMO.get(key)
        if node is None:
            node = SchemaNode()
            _MEMO[key] = node
            raw = _defs(target_doc.data).get(name)
            if raw is None:
                raise SchemaError(f"unresolved $ref {ref!r} in {doc.name}")
            self._fill_ref(node, raw, target_doc)
        return node

    def _raw(self, ref: str, doc: Doc) -> tuple[dict[str, Any], Doc]:
        """The uncompiled target of a local reference, and the document it lives in (for patching)."""
        if ref.startswith(_K8S_PREFIX) or doc.kind == "k8s":
            raise SchemaError(f"x-jobsetctl-patch applies to our own $defs only, not {ref!r}")
        target_doc, name = self._split_local(ref, doc)
        raw = _defs(target_doc.data).get(name)
        if raw is None:
            raise SchemaError(f"unresolved $ref {ref!r} in {doc.name}")
        return raw, target_doc

    def _split_local(self, ref: str, doc: Doc) -> tuple[Doc, str]:
        file, sep, pointer = ref.partition("#")
        if not sep or not pointer.startswith("/$defs/"):
            raise SchemaError(f"unsupported $ref {ref!r} in {doc.name}")
        name = pointer[len("/$defs/"):]
        if not file:
            return doc, name
        stem = file.removesuffix(".json")
        return Doc("authored", stem, authored_document(stem)), name

    def _k8s_raw(self, name: str) -> dict[str, Any]:
        raw = k8s_definitions(self.version).get(name)
        if raw is None:
            raise SchemaError(f"Kubernetes {self.version.value} has no definition {name}")
        return raw

    def _k8s(self, name: str, mode: Mode) -> SchemaNode:
        key = ("k8s", "definitions", name, self.version, mode)
        node = _MEMO.get(key)
        if node is not None:
            return node
        node = SchemaNode()
        _MEMO[key] = node
        doc = Doc("k8s", "definitions", None, mode)
        if name == QUANTITY_DEFINITION:
            _fill_quantity(node, mode)
        elif name == INT_OR_STRING_DEFINITION:
            _fill_int_or_string(node, mode)
        else:
            self._fill(node, self._k8s_raw(name), doc, definition=name)
        node.ref = name
        return node

    def _fill_ref(self, node: SchemaNode, raw: Any, doc: Doc) -> None:
        if isinstance(raw, dict) and "$ref" in raw:
            # An alias definition: compile its target into this node.
            target = self.node(raw, doc)
            for name in SchemaNode.__slots__:
                setattr(node, name, getattr(target, name))
            return
        self._fill(node, raw, doc)

    # one node

    def _fill(self, node: SchemaNode, s: dict[str, Any], doc: Doc, definition: str = "") -> SchemaNode:
        embedded_k8s = doc.kind == "k8s" and doc.mode is EMBEDDED
        types, label, nullable = _types(s.get("type"), honour_null=not embedded_k8s)
        if s.get("nullable") is True:
            nullable = True
        node.nullable = nullable
        if s.get("x-kubernetes-int-or-string") is True:
            types, label = ("integer", "string"), "integer,string"
            node.int_or_string = True
        properties = s.get("properties") or {}
        overlay = _overlay() if embedded_k8s else {}
        defaults = overlay.get("defaults", {}).get(definition, {}) if definition else {}
        replaced = overlay.get("embeddedRefs", {})
        compiled: dict[str, SchemaNode] = {}
        for key, sub in properties.items():
            child = self._property(sub, doc, replaced)
            if embedded_k8s and key in ("apiVersion", "kind") and child.enum is not None:
                # kubernetes-validate pins apiVersion/kind of top-level kinds; controller-gen does not.
                child = replace(child, enum=None)
                derive(child)
            if key in defaults:
                child = replace(child, default=copy.deepcopy(defaults[key]))
                derive(child)
            compiled[key] = child
        node.properties = compiled
        additional = s.get("additionalProperties", MISSING)
        if isinstance(additional, dict):
            node.additional = self.node(additional, doc) if additional else True
        elif additional is True:
            node.additional = True
        elif additional is False:
            node.additional = False
        else:
            node.additional = None
        items = s.get("items")
        node.items = self.node(items, doc) if isinstance(items, dict) else None
        node.required = tuple(s.get("required") or ())
        enum = s.get("enum")
        node.enum = tuple(enum) if isinstance(enum, list) else None
        node.minimum = _number(s.get("minimum"))
        node.maximum = _number(s.get("maximum"))
        node.exclusive_minimum = s.get("exclusiveMinimum") is True
        node.exclusive_maximum = s.get("exclusiveMaximum") is True
        node.min_length = s.get("minLength")
        node.max_length = s.get("maxLength")
        node.pattern = s.get("pattern")
        node.min_items = s.get("minItems")
        node.max_items = s.get("maxItems")
        node.min_properties = s.get("minProperties")
        node.max_properties = s.get("maxProperties")
        node.format = s.get("format")
        node.default = copy.deepcopy(s["default"]) if "default" in s else MISSING
        node.preserve_unknown = s.get("x-kubernetes-preserve-unknown-fields") is True
        node.embedded_resource = s.get("x-kubernetes-embedded-resource") is True
        node.list_type = s.get("x-kubernetes-list-type")
        node.list_map_keys = tuple(s.get("x-kubernetes-list-map-keys") or ())
        node.map_type = s.get("x-kubernetes-map-type")
        if definition and embedded_k8s and node.map_type is None:
            node.map_type = overlay.get("mapTypes", {}).get(definition)
        node.validations = tuple(_cel_rule(r) for r in s.get("x-kubernetes-validations") or ())
        branches: dict[str, tuple[SchemaNode, ...]] = {}
        for keyword in ("anyOf", "oneOf", "allOf"):
            raw_branches = s.get(keyword)
            if isinstance(raw_branches, list) and raw_branches:
                branch_doc = replace(doc, branch=True)
                branches[keyword] = tuple(self.node(b, branch_doc) for b in raw_branches)
        node.any_of = branches.get("anyOf", ())
        node.one_of = branches.get("oneOf", ())
        node.all_of = branches.get("allOf", ())
        if doc.native:
            # The Go decoder of a built-in kind has no anyOf/oneOf; what it accepts is the type union.
            node.any_of = node.one_of = ()
        node.types = frozenset(types)
        node.type_label = label
        if node.embedded_resource:
            _add_embedded_meta(node)
        if doc.native:
            node.checked_format = node.format if node.format in NATIVE_FORMATS else ""
        else:
            fmt = (node.format or "").replace("-", "")
            node.checked_format = (node.format or "") if fmt in CRD_FORMATS else ""
        node.unique = node.list_type if node.list_type in ("map", "set") and not doc.native else ""
        node.open = (
            node.preserve_unknown
            or node.additional is True
            or (node.additional is None and not doc.closed_objects)
        )
        derive(node)
        return node

    def _property(self, sub: Any, doc: Doc, replaced: dict[str, Any]) -> SchemaNode:
        if isinstance(sub, dict) and doc.kind == "k8s" and doc.mode is EMBEDDED:
            ref = sub.get("$ref", "")
            for prefix in _K8S_DEFS_PREFIXES:
                if ref.startswith(prefix) and ref[len(prefix):] in replaced:
                    overlay_doc = Doc("authored", "_k8s_embedded", _overlay())
                    return self.node(replaced[ref[len(prefix):]], overlay_doc)
        return self.node(sub, doc)


# --- helpers -----------------------------------------------------------------------------------------


#: Keywords a ``$ref`` may override, and the node field each one sets.
_OVERRIDES: Final[dict[str, str]] = {
    "default": "default",
    "nullable": "nullable",
    "enum": "enum",
    "minimum": "minimum",
    "maximum": "maximum",
    "minLength": "min_length",
    "maxLength": "max_length",
    "pattern": "pattern",
    "minItems": "min_items",
    "maxItems": "max_items",
    "minProperties": "min_properties",
    "maxProperties": "max_properties",
    "format": "format",
    "x-kubernetes-list-type": "list_type",
    "x-kubernetes-list-map-keys": "list_map_keys",
    "x-kubernetes-map-type": "map_type",
    "x-kubernetes-validations": "validations",
}


def _override(base: SchemaNode, siblings: dict[str, Any], doc: Doc) -> SchemaNode:
    """A copy of a referenced node with the sibling keywords of its ``$ref`` applied (they win)."""
    node = replace(base)
    for keyword, value in siblings.items():
        attribute = _OVERRIDES.get(keyword)
        if attribute is None:
            raise SchemaError(f"{doc.name}: keyword {keyword!r} cannot sit next to a $ref")
        if keyword == "x-kubernetes-validations":
            value = tuple(_cel_rule(r) for r in value)
        elif keyword in ("enum", "x-kubernetes-list-map-keys"):
            value = tuple(value)
        elif keyword == "default":
            value = copy.deepcopy(value)
        setattr(node, attribute, value)
    node.unique = node.list_type if node.list_type in ("map", "set") and not doc.native else ""
    fmt = (node.format or "").replace("-", "")
    if not doc.native:
        node.checked_format = (node.format or "") if fmt in CRD_FORMATS else ""
    derive(node)
    return node


def _defs(data: Any) -> dict[str, Any]:
    defs = data.get("$defs") if isinstance(data, dict) else None
    return defs if isinstance(defs, dict) else {}


def _types(raw: Any, honour_null: bool) -> tuple[tuple[str, ...], str, bool]:
    """(types without null, kube-openapi's label for them, nullable)."""
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        return (), "", False
    names = tuple(t for t in raw if isinstance(t, str) and t != "null")
    return names, ",".join(names), honour_null and "null" in raw


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _cel_rule(raw: dict[str, Any]) -> CelRule:
    return CelRule(
        rule=str(raw.get("rule", "")),
        message=str(raw.get("message", "")),
        message_expression=str(raw.get("messageExpression", "")),
        reason=str(raw.get("reason", "")),
        field_path=str(raw.get("fieldPath", "")),
        optional_old_self=raw.get("optionalOldSelf") is True,
    )


def _fill_quantity(node: SchemaNode, mode: Mode) -> None:
    if mode is NATIVE:
        # resource.Quantity's UnmarshalJSON: a string or a number, parsed as a quantity; null is zero.
        node.types = frozenset({"string", "number"})
        node.type_label = "string,number"
        node.nullable = True
        node.quantity = True
    else:
        _fill_int_or_string(node, mode)
        node.pattern = QUANTITY_CRD_PATTERN
    derive(node)


def _fill_int_or_string(node: SchemaNode, mode: Mode) -> None:
    node.types = frozenset({"integer", "string"})
    node.type_label = "integer,string"
    node.int_or_string = True
    if mode is NATIVE:
        node.nullable = True
    else:
        # controller-gen writes `anyOf: [{type: integer}, {type: string}]` next to the extension, and
        # kube-openapi validates it as well (a second and third error for a float; see schema_validate).
        node.any_of = (_bare("integer"), _bare("string"))
    derive(node)


def _bare(type_name: str) -> SchemaNode:
    node = SchemaNode(types=frozenset({type_name}), type_label=type_name)
    derive(node)
    return node


def _add_embedded_meta(node: SchemaNode) -> None:
    # Structural schemas of embedded resources imply apiVersion, kind and metadata (apiextensions
    # pruning skips them: pkg/apiserver/schema/pruning/algorithm.go, metaFields).
    extra = {
        "apiVersion": _bare("string"),
        "kind": _bare("string"),
        "metadata": replace(SchemaNode(types=frozenset({"object"}), type_label="object"), open=True),
    }
    derive(extra["metadata"])
    node.properties = {**extra, **node.properties}


def _apply_patch(doc: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    """RFC 6902 ``add``/``replace``/``remove`` on a schema copy (JSON pointers into the raw schema)."""
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in str(op["path"]).split("/")[1:]]
        parent: Any = doc
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent[part]
        last = parts[-1]
        kind = op["op"]
        if kind == "remove":
            del parent[last]
        elif kind in ("add", "replace"):
            parent[last] = copy.deepcopy(op["value"])
        else:
            raise SchemaError(f"unsupported x-jobsetctl-patch op {kind!r}")
    return doc
