"""``--crd FILE``: check objects against the exact CustomResourceDefinition a cluster runs.

Each ``apiextensions.k8s.io/v1`` CustomResourceDefinition found in the given files and directories
becomes a :class:`CrdHandler` registered for its group and kind, ahead of our built-in handler. The CRD
replaces only the *schema* (structural defaults, types, enums, CEL rules): the defaulting and
validating webhooks of a kind we know (JobSet, TrainJob, ...) keep running, as they do in a cluster
where the CRD is installed next to the controller's webhooks. A CRD for a kind we do not know gets
the API server's behaviour only (schema, defaults, CEL).

A file that cannot be used is a usage error (exit status 2), reported as ``file:line:column: message``:
missing files, YAML errors, documents that are not v1 CRDs, versions without a schema, and schemas
our compiler refuses.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from jobsetctl.kinds.interface import AdmissionContext, KindHandler, Object
from jobsetctl.kinds.registry import handler_for, register_extra
from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION, KubeVersion, _version_rank
from jobsetctl.loader.objects import ObjectRecord, load_file
from jobsetctl.loader.sources import discover
from jobsetctl.status import UsageError

if TYPE_CHECKING:
    from jobsetctl.admission.schema import StructuralSchema
    from jobsetctl.diagnostics import Finding

CRD_API_VERSION = "apiextensions.k8s.io/v1"
CRD_KIND = "CustomResourceDefinition"


class CrdHandler(KindHandler):
    """A kind as one CRD defines it; webhook behaviour delegated to the built-in handler, if any.

    ``group``, ``kind`` and ``namespaced`` are class attributes in the handler interface, so each CRD
    gets its own small subclass (:func:`handler_class`).
    """

    group: ClassVar[str] = ""
    kind: ClassVar[str] = ""
    namespaced: ClassVar[bool] = True

    def __init__(self, name: str, source: str, schemas: dict[str, dict[str, Any]], builtin: KindHandler | None) -> None:
        self.name = name
        self.source = source
        #: Served version -> its ``openAPIV3Schema``.
        self.schemas = schemas
        self.builtin = builtin
        # The webhooks of a kind we know keep running next to the CRD (see the module docstring).
        self.webhooks = builtin.webhooks if builtin is not None else False
        self.consequences_look_up = builtin.consequences_look_up if builtin is not None else False
        self._compiled: dict[tuple[str, KubeVersion], StructuralSchema] = {}

    def served_versions(self, version: KubeVersion) -> tuple[str, ...]:
        # A CRD serves the same versions whatever the Kubernetes release.
        return tuple(sorted(self.schemas, key=_version_rank, reverse=True))

    def schema(self, api_version: str, version: KubeVersion) -> StructuralSchema:
        served = api_version.rpartition("/")[2]
        key = (served, version)
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = _compile(self.schemas[served], f"{self.name}/{served}", version)
            self._compiled[key] = compiled
        return compiled

    def default(self, obj: Object, ctx: AdmissionContext) -> None:
        if self.builtin is not None:
            self.builtin.default(obj, ctx)

    def validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return self.builtin.validate(obj, ctx) if self.builtin is not None else ()

    def validate_in_cluster(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return self.builtin.validate_in_cluster(obj, ctx) if self.builtin is not None else ()

    def validate_update(self, old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return self.builtin.validate_update(old, new, ctx) if self.builtin is not None else ()

    def validate_consequences(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return self.builtin.validate_consequences(obj, ctx) if self.builtin is not None else ()

    def __repr__(self) -> str:
        return f"CrdHandler({self.group}/{self.kind} from {self.source})"


#: Compiled schemas by their canonical JSON text and release: the same CRD given again (another run of
#: validate in one process, render after validate) is not compiled twice.
_COMPILED: dict[tuple[str, str, KubeVersion], StructuralSchema] = {}


def _compile(schema: dict[str, Any], name: str, version: KubeVersion) -> StructuralSchema:
    from jobsetctl.admission.schema import compile_openapi

    key = (json.dumps(schema, sort_keys=True, default=str), name, version)
    compiled = _COMPILED.get(key)
    if compiled is None:
        compiled = compile_openapi(schema, name, version)
        _COMPILED[key] = compiled
    return compiled


def handler_class(group: str, kind: str, namespaced: bool) -> type[CrdHandler]:
    return type(f"Crd{kind}Handler", (CrdHandler,), {"group": group, "kind": kind, "namespaced": namespaced})


def register_crd_files(paths: list[str]) -> None:
    """Load every CRD under ``paths`` and register a handler for each; raises :class:`UsageError`."""
    sources, problems = discover(paths)
    if problems:
        problem = problems[0]
        detail = problem.message.removeprefix(f"{problem.name}: ")
        raise UsageError(f"--crd: {problem.name}:1:1: {detail}")
    handlers = [crd_handler(record) for source in sources for record in _records(source)]
    for handler in handlers:
        register_extra(handler)


def _records(source: Any) -> list[ObjectRecord]:
    loaded = load_file(source)
    errors = [d for d in loaded.diagnostics if d.severity == "error"]
    if errors:
        first = errors[0]
        raise UsageError(f"--crd: {first.file}:{first.line}:{first.column}: {first.message}")
    if not loaded.records:
        raise UsageError(f"--crd: {source.name}:1:1: no CustomResourceDefinition in the file")
    return loaded.records


def _fail(record: ObjectRecord, at: tuple[str | int, ...], message: str) -> UsageError:
    line, column = record.position(at)
    return UsageError(f"--crd: {record.file}:{line}:{column}: {message}")


def crd_handler(record: ObjectRecord) -> CrdHandler:
    """The handler for one CRD document; raises :class:`UsageError` when it cannot be used."""
    obj = record.obj
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if kind != CRD_KIND:
        raise _fail(record, ("kind",), f"not a {CRD_KIND}: found {kind} ({api_version})")
    if api_version != CRD_API_VERSION:
        raise _fail(record, ("apiVersion",), f"{api_version} {CRD_KIND} is not served since Kubernetes 1.22; "
                                             f"use {CRD_API_VERSION}")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        raise _fail(record, ("spec",), "the CRD has no spec")
    group = spec.get("group")
    names = spec.get("names")
    crd_kind = names.get("kind") if isinstance(names, dict) else None
    if not isinstance(group, str) or not group:
        raise _fail(record, ("spec", "group"), "spec.group: Required value")
    if not isinstance(crd_kind, str) or not crd_kind:
        raise _fail(record, ("spec", "names", "kind"), "spec.names.kind: Required value")
    scope = spec.get("scope")
    if scope not in ("Namespaced", "Cluster"):
        raise _fail(record, ("spec", "scope"), f'spec.scope: Unsupported value: {scope!r}: supported values: '
                                               f'"Cluster", "Namespaced"')
    schemas = _served_schemas(record, spec)
    builtin = handler_for(group, crd_kind)
    if isinstance(builtin, CrdHandler):
        builtin = builtin.builtin
    meta = obj.get("metadata")
    name = crd_kind
    if isinstance(meta, dict) and isinstance(meta.get("name"), str):
        name = meta["name"]
    handler = handler_class(group, crd_kind, scope == "Namespaced")(name, record.file, schemas, builtin)
    _check_compiles(record, handler)
    return handler


def _served_schemas(record: ObjectRecord, spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    versions = spec.get("versions")
    if not isinstance(versions, list) or not versions:
        raise _fail(record, ("spec", "versions"), "spec.versions: Required value: the CRD defines no version")
    schemas: dict[str, dict[str, Any]] = {}
    for index, version in enumerate(versions):
        if not isinstance(version, dict) or not isinstance(version.get("name"), str):
            raise _fail(record, ("spec", "versions", index), "a version without a name")
        if version.get("served") is not True:
            continue
        schema = version.get("schema")
        openapi = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
        if not isinstance(openapi, dict):
            raise _fail(record, ("spec", "versions", index), f"version {version['name']} has no "
                                                             "schema.openAPIV3Schema to check objects against")
        schemas[version["name"]] = openapi
    if not schemas:
        raise _fail(record, ("spec", "versions"), "the CRD serves no version")
    return schemas


def _check_compiles(record: ObjectRecord, handler: CrdHandler) -> None:
    """Compile each served version now, so that a schema we cannot use fails at start-up."""
    from jobsetctl.admission.schema import SchemaError

    versions = record.obj["spec"]["versions"]
    for index, version in enumerate(versions):
        name = version["name"]
        if name not in handler.schemas:
            continue
        try:
            handler.schema(f"{handler.group}/{name}", DEFAULT_KUBE_VERSION)
        except SchemaError as exc:
            raise _fail(record, ("spec", "versions", index, "schema", "openAPIV3Schema"),
                        f"cannot use the schema of version {name}: {exc}") from exc
