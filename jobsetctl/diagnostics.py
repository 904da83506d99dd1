"""The value types every layer produces: findings inside an object, diagnostics with a file position."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from jobsetctl.kube.field import Path, path_string

if TYPE_CHECKING:
    from jobsetctl.rules.interface import Rule


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]


class Layer(StrEnum):
    """Where in the admission chain a finding comes from, in upstream order (issue #2)."""

    #: Reading the input: files, YAML syntax, documents without apiVersion/kind.
    INPUT = "input"
    #: Structural schema: types, unknown fields, required, enums, ranges.
    SCHEMA = "schema"
    #: CRD and webhook defaulting.
    DEFAULTS = "defaults"
    #: ``x-kubernetes-validations`` rules.
    CEL = "cel"
    #: Validating admission webhooks and built-in API validation.
    WEBHOOK = "webhook"
    #: Checks across objects: runtime references, PodGroup references, priorities.
    REFERENCE = "reference"
    #: Admitted by the API server, but a later creation or admission fails and the workload never runs
    #: (a child Job the API server refuses, a TrainJob's JobSet the JobSet webhook refuses, pods the
    #: Priority admission plugin refuses, a gang the scheduler can never admit, a Kueue workload that can
    #: never be admitted). Errors by default: the apply succeeds, the training never starts (issue #13).
    CONSEQUENCE = "consequence"
    #: Accepted upstream, regretted later.
    LINT = "lint"

    @property
    def admission(self) -> bool:
        """Whether the API server itself answers with findings of this layer on a create or update:
        exactly what ``kubectl apply --dry-run=server`` reports (``validate --admission-only``)."""
        return self not in _AFTER_ADMISSION


#: What upstream says only after admission has accepted the object, or never (issue #13).
_AFTER_ADMISSION = frozenset({Layer.CONSEQUENCE, Layer.LINT})

#: The API server's own validation of a request (structural schema, ObjectMeta, CEL: one 422 with every
#: cause). When it fails, the validating webhooks are never called (trainer.md §2.1, jobset.md §2.1).
_BEFORE_WEBHOOKS: tuple[Layer, ...] = (Layer.SCHEMA, Layer.CEL)
#: What the validating webhooks answer, their lookups included.
_WEBHOOK_LAYERS = frozenset({Layer.WEBHOOK, Layer.REFERENCE})


def stopped_before(layer: Layer, errors: frozenset[Layer], *, webhooks: bool) -> Layer | None:
    """The layer whose errors stop the request before upstream reaches ``layer`` for this object, or None.

    ``errors`` are the layers of the object's error findings; ``webhooks`` says whether its kind's
    validation is a validating webhook (``KindHandler.webhooks``): a built-in kind's API validation runs
    in the same pass as its schema, so nothing of it comes "after". (Consequences of a refused object are
    not reported at all: there is no object to fail later.)
    """
    if not webhooks or layer not in _WEBHOOK_LAYERS:
        return None
    return next((candidate for candidate in _BEFORE_WEBHOOKS if candidate in errors), None)


@dataclass(frozen=True, slots=True)
class ObjectRef:
    api_version: str
    kind: str
    namespace: str
    name: str

    def as_dict(self) -> dict[str, str]:
        return {"apiVersion": self.api_version, "kind": self.kind, "namespace": self.namespace, "name": self.name}

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"

    @classmethod
    def of(cls, obj: Any, default_namespace: str = "") -> ObjectRef:
        """The reference of a manifest dict, tolerating any shape (input may be malformed)."""
        if not isinstance(obj, dict):
            return cls("", "", "", "")
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        name = meta.get("name")
        if not isinstance(name, str) or not name:
            generate = meta.get("generateName")
            name = generate if isinstance(generate, str) else ""
        namespace = meta.get("namespace")
        return cls(
            _text(obj.get("apiVersion")),
            _text(obj.get("kind")),
            namespace if isinstance(namespace, str) else default_namespace,
            name,
        )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem found inside one object, before it is placed in a file.

    ``message`` is the upstream text, verbatim (for field errors the whole
    ``<path>: <Type>: <value>: <detail>`` rendering). ``path`` is the upstream field path when
    upstream reports one (quirks included, e.g. ``spec.RuntimeRef``), else the path we point at.
    ``at`` is where in the object the position is taken from; it defaults to ``path`` parsed.
    """

    rule: Rule
    message: str
    path: str = ""
    at: Path = ()
    severity: Severity | None = None
    hint: str | None = None
    #: ``(group, kind, name)`` of the object whose absence is the whole finding (a reference that does not
    #: resolve). ``validate`` treats a cluster-scoped one as possibly in the cluster (:mod:`jobsetctl.context`).
    unresolved: tuple[str, str, str] | None = None

    @property
    def effective_severity(self) -> Severity:
        return self.severity or self.rule.severity


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A finding placed in a file, as reporters print it. ``line`` and ``column`` are 1-based."""

    file: str
    line: int
    column: int
    severity: Severity
    layer: Layer
    rule: str
    message: str
    path: str = ""
    object: ObjectRef | None = None
    hint: str | None = None
    #: Where in its document the finding points (List prefix included): what ``jobsetctl fix`` edits. Not
    #: part of the reported output.
    at: Path = ()
    #: Set when upstream never gets this far for the object: the layer whose errors stop the request first
    #: (schema or CEL errors stop it before any validating webhook is called). The finding is still
    #: reported, so that one pass shows everything.
    after: Layer | None = None

    def sort_key(self) -> tuple[str, int, int, int, str, str]:
        return (self.file, self.line, self.column, self.severity.rank, self.rule, self.message)

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "severity": str(self.severity),
            "layer": str(self.layer),
            "rule": self.rule,
            "message": self.message,
            "path": self.path,
            "object": self.object.as_dict() if self.object else None,
        }
        if self.hint:
            data["hint"] = self.hint
        if self.after is not None:
            data["after"] = str(self.after)
        return data

    @property
    def after_note(self) -> str | None:
        """One sentence for reporters: why this finding is not what the API server would answer."""
        if self.after is None:
            return None
        return (f"upstream stops at the {self.after} errors of this object and never calls the validating "
                "webhooks; reported so that one pass shows everything")


@dataclass(slots=True)
class Report:
    """What ``validate`` returns: every diagnostic, sorted, plus counts for the summary."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: int = 0
    objects: int = 0
    #: Warnings about the run rather than a file (``no manifests found under DIR``): stderr, not the report.
    notes: list[str] = field(default_factory=list)

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity is severity)

    @property
    def errors(self) -> int:
        return self.count(Severity.ERROR)

    @property
    def warnings(self) -> int:
        return self.count(Severity.WARNING)


def at_path(path: Path) -> str:
    """Shorthand used by checks that report the path they point at."""
    return path_string(path)
