"""ObjectMeta validation every kind gets from the API server on create.

Mirrors apimachinery ``pkg/api/validation/objectmeta.go`` (``ValidateObjectMetaAccessor`` with
``NameIsDNSSubdomain``, the name function of custom resources and of the built-in kinds we check) and
``pkg/apis/meta/v1/validation`` (``ValidateLabels``), in upstream order: generateName, name, namespace,
labels, annotations. Owner references, finalizers and managed fields are not checked (users do not
write them in manifests).

What happens before validation matters:

* ``generateName`` without ``name``: the API server generates the name first (the prefix cut to 58
  characters plus 5 random ones), then validates both. The random name cannot be reproduced, so only
  the prefix is validated here; a bad prefix yields upstream a second error on the generated name.
* a cluster-scoped object with a namespace: the REST layer clears it before validation
  (``EnsureObjectNamespaceMatchesRequestNamespace``, apiserver ``pkg/registry/rest/create.go``), so the
  ``Forbidden: not allowed on this type`` branch of ``ValidateObjectMeta`` never fires for a create. We
  mirror that: no error, an informational note.

Any shape is tolerated: metadata of the wrong type is the schema layer's finding, not this one's.
"""

from __future__ import annotations

from typing import Any, Final

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kube.field import invalid, required, too_long
from jobsetctl.kube.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)
from jobsetctl.rules.registry import define

_SPEC = "jobset.md §2.1"

NAME = define(
    "meta-name", Layer.SCHEMA, Severity.ERROR,
    "metadata.name / generateName is missing or not a DNS-1123 subdomain.",
    spec=_SPEC,
)
NAMESPACE = define(
    "meta-namespace", Layer.SCHEMA, Severity.ERROR,
    "metadata.namespace is not a DNS-1123 label (or is set on a cluster-scoped kind, where it is ignored).",
    spec=_SPEC,
)
LABELS = define(
    "meta-labels", Layer.SCHEMA, Severity.ERROR,
    "A label key is not a qualified name or a value is not a label value.",
    spec=_SPEC,
)
ANNOTATIONS = define(
    "meta-annotations", Layer.SCHEMA, Severity.ERROR,
    "An annotation key is not a qualified name, or all annotations exceed 256 KiB.", spec=_SPEC,
)

_LABELS: Final = "metadata.labels"
_ANNOTATIONS: Final = "metadata.annotations"

#: apimachinery ``TotalAnnotationSizeLimitB``: keys and values together, in bytes.
TOTAL_ANNOTATION_SIZE_LIMIT: Final = 256 * (1 << 10)


def validate_object_meta(obj: dict[str, Any], namespaced: bool) -> list[Finding]:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict):
        meta = {}
    findings: list[Finding] = []
    findings.extend(_name(meta))
    findings.extend(_namespace(meta, namespaced))
    findings.extend(_labels(meta.get("labels")))
    findings.extend(_annotations(meta.get("annotations")))
    return findings


def validate_name_and_namespace(obj: dict[str, Any], namespaced: bool) -> list[Finding]:
    """The part of :func:`validate_object_meta` that reads ``name``, ``generateName`` and ``namespace``
    (the rest reads only the labels and annotations), in its order."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict):
        meta = {}
    return [*_name(meta), *_namespace(meta, namespaced)]


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """apimachinery ``NameIsDNSSubdomain``; a ``generateName`` prefix may end in '-' (``maskTrailingDash``)."""
    if prefix and len(name) > 1 and name.endswith("-"):
        # Upstream replaces the last *two* characters with "a" (name[:len-2] + "a"): a quirk kept as is.
        name = name[:-2] + "a"
    return is_dns1123_subdomain(name)


def _name(meta: dict[str, Any]) -> list[Finding]:
    findings: list[Finding] = []
    name = meta.get("name")
    generate = meta.get("generateName")
    if isinstance(generate, str) and generate:
        for msg in name_is_dns_subdomain(generate, prefix=True):
            where = ("metadata", "generateName")
            findings.append(NAME.finding(invalid("metadata.generateName", generate, msg), at=where))
    if isinstance(name, str) and name:
        for msg in name_is_dns_subdomain(name, prefix=False):
            findings.append(NAME.finding(invalid("metadata.name", name, msg), at=("metadata", "name")))
    elif name not in (None, "") or generate not in (None, ""):
        pass  # a name of the wrong type is a schema type error; a generateName gets a generated name
    else:
        message = required("metadata.name", "name or generateName is required")
        findings.append(NAME.finding(message, path="metadata.name", at=("metadata",)))
    return findings


def _namespace(meta: dict[str, Any], namespaced: bool) -> list[Finding]:
    namespace = meta.get("namespace")
    if not namespaced:
        if isinstance(namespace, str) and namespace:
            # Upstream clears it silently before validation; say so instead of failing.
            return [NAMESPACE.finding(
                f"metadata.namespace {namespace!r} is ignored: the kind is cluster-scoped and the API server "
                "clears the namespace on create",
                at=("metadata", "namespace"),
                severity=Severity.INFO,
                hint="remove metadata.namespace; ValidateObjectMeta's 'Forbidden: not allowed on this type' "
                "is unreachable for a create because the namespace is cleared first",
            )]
        return []
    if not isinstance(namespace, str) or not namespace:
        message = required("metadata.namespace")
        return [NAMESPACE.finding(message, path="metadata.namespace", at=("metadata",))]
    return [
        NAMESPACE.finding(invalid("metadata.namespace", namespace, msg), at=("metadata", "namespace"))
        for msg in is_dns1123_label(namespace)
    ]


def _labels(labels: Any) -> list[Finding]:
    if not isinstance(labels, dict):
        return []
    findings: list[Finding] = []
    for key, value in labels.items():
        if not isinstance(key, str):
            continue
        at = ("metadata", "labels", key)
        for msg in is_qualified_name(key):
            findings.append(LABELS.finding(invalid(_LABELS, key, msg), path=_LABELS, at=at))
        if isinstance(value, str):
            for msg in is_valid_label_value(value):
                findings.append(LABELS.finding(invalid(_LABELS, value, msg), path=_LABELS, at=at))
    return findings


def _annotations(annotations: Any) -> list[Finding]:
    if not isinstance(annotations, dict):
        return []
    findings: list[Finding] = []
    total = 0
    for key, value in annotations.items():
        if not isinstance(key, str):
            continue
        # Upstream: "QualifiedName except that case doesn't matter", so the key is lowercased first.
        for msg in is_qualified_name(key.lower()):
            at = ("metadata", "annotations", key)
            findings.append(ANNOTATIONS.finding(invalid(_ANNOTATIONS, key, msg), path=_ANNOTATIONS, at=at))
        total += len(key.encode()) + (len(value.encode()) if isinstance(value, str) else 0)
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        message = too_long(_ANNOTATIONS, TOTAL_ANNOTATION_SIZE_LIMIT)
        findings.append(ANNOTATIONS.finding(message, path=_ANNOTATIONS, at=("metadata", "annotations")))
    return findings
