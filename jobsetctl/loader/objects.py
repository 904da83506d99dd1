"""From files to objects: each YAML document (or each item of a ``List``) becomes an :class:`ObjectRecord`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jobsetctl.diagnostics import Diagnostic, Finding, Layer, ObjectRef, Severity
from jobsetctl.kube.field import Path
from jobsetctl.loader.helm import MESSAGE, helm_position, template_action_position
from jobsetctl.loader.sources import Source, read_text
from jobsetctl.loader.yamlload import Document, LoadProblem, load_documents
from jobsetctl.rules import core, get

#: kube-apiserver's limit on a request body (``MaxRequestBodyBytes``, 3 MiB), measured on the YAML text of a
#: document, and on the compact JSON (the body ``kubectl create`` sends) of an object a Scenario holds inline.
MAX_REQUEST_BYTES = 3 * 1024 * 1024
#: The ``kind`` of jobsetctl's own Scenario file (``jobsetctl.dev/*``), which no API server ever receives.
SCENARIO_KIND = "Scenario"


def is_scenario(obj: dict[str, Any]) -> bool:
    """Whether a loaded document is a Scenario (by kind and the jobsetctl.dev group, any version): a file for
    ``simulate``, not an API object, so the request limit applies to each object it submits, not to it."""
    api_version = obj.get("apiVersion")
    return obj.get("kind") == SCENARIO_KIND and isinstance(api_version, str) and api_version.startswith("jobsetctl.dev/")


def request_too_large(obj: dict[str, Any]) -> bool:
    """Whether the JSON body of a create request for ``obj`` would pass :data:`MAX_REQUEST_BYTES`."""
    import json

    return len(json.dumps(obj, separators=(",", ":"), ensure_ascii=False, default=str).encode()) > MAX_REQUEST_BYTES


def too_large_message() -> str:
    return f"Request entity too large: limit is {MAX_REQUEST_BYTES}"


@dataclass(slots=True)
class ObjectRecord:
    """One object of the input and where it came from. ``prefix`` locates it inside its document
    (``("items", 3)`` for the fourth item of a List)."""

    document: Document
    prefix: Path
    obj: dict[str, Any]
    ref: ObjectRef = field(init=False)

    def __post_init__(self) -> None:
        self.ref = ObjectRef.of(self.obj)

    @property
    def file(self) -> str:
        return self.document.file

    def position(self, at: Path) -> tuple[int, int]:
        return self.document.position(self.prefix + at)

    def diagnostic(self, finding: Finding, after: Layer | None = None) -> Diagnostic:
        line, column = self.position(finding.at)
        hint = finding.hint
        if hint is None and finding.rule.id == "schema-type":
            hint = self.scalar_hint(finding.at)
        return Diagnostic(
            self.file, line, column, finding.effective_severity, finding.rule.layer, finding.rule.id,
            finding.message, finding.path, self.ref, hint, self.prefix + finding.at, after,
        )

    def scalar_hint(self, at: Path) -> str | None:
        """If the value at ``at`` is an unquoted scalar that YAML 1.1 reads surprisingly, say so."""
        from jobsetctl.loader.yamlload import PosScalar, yaml11_surprise

        node = self.document.node_at(self.prefix + at)
        if isinstance(node, PosScalar):
            return yaml11_surprise(node.text)
        return None


@dataclass(slots=True)
class LoadedFile:
    source: Source
    records: list[ObjectRecord] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    documents: int = 0


def _problem_diagnostic(file: str, problem: LoadProblem) -> Diagnostic:
    rule = get(problem.code) or core.YAML_SYNTAX
    return Diagnostic(file, problem.line + 1, problem.column + 1, rule.severity, rule.layer, rule.id, problem.message)


def load_file(
    source: Source, *, strict: bool = False, skip_templates: bool = False, positions: bool = False
) -> LoadedFile:
    """Read, parse and split one file into object records, with diagnostics for what cannot be used.

    Two kinds of file are no manifests and get one diagnostic instead of a list of errors: a Helm template
    (``helm-template``: an error, a note with ``skip_templates``) and, unless ``strict``, a file that parses
    but holds no Kubernetes object at all (``not-a-manifest``, a note): a GitHub workflow, ``package.json``,
    Helm values. pre-commit hands such files to the hook along with the manifests (issue #10).

    ``positions``: build every document's position tree while loading (``validate``, whose findings nearly
    always need them: built later, one document at a time, they cost a second parse of each), rather than
    when first asked for (``simulate`` and ``render``, where most runs ask for none).
    """
    loaded = LoadedFile(source)
    text, problem, (line, column) = read_text(source)
    if problem is not None:
        rule = get(problem.code) or core.UNREADABLE
        loaded.diagnostics.append(
            Diagnostic(source.name, line + 1, column + 1, rule.severity, rule.layer, rule.id, problem.message)
        )
        return loaded
    assert text is not None
    template_at = helm_position(source.path, text)
    if template_at is not None:
        return _template(loaded, template_at, skip_templates)
    documents, stream_problems = load_documents(text, source.name, positions=positions)
    if stream_problems:
        template_at = template_action_position(text)
        if template_at is not None:
            return _template(loaded, template_at, skip_templates)
    if not stream_problems and all(d.value is None for d in documents):
        # Comments only, or only `---` (empty documents, which kubectl skips): say that nothing was
        # checked in this file, rather than nothing.
        loaded.diagnostics.append(Diagnostic(
            source.name, 1, 1, core.EMPTY_FILE.severity, core.EMPTY_FILE.layer, core.EMPTY_FILE.id,
            "file holds no YAML documents" if not documents else "file holds only empty YAML documents",
        ))
    elif not strict and not stream_problems and not any(_could_be_manifest(d.value) for d in documents):
        loaded.documents = len(documents)
        line, column = next(d for d in documents if d.value is not None).position(())
        loaded.diagnostics.append(Diagnostic(
            source.name, line, column, core.NOT_A_MANIFEST.severity, core.NOT_A_MANIFEST.layer, core.NOT_A_MANIFEST.id,
            "no Kubernetes object in this file; passed over",
        ))
        return loaded
    for document in documents:
        loaded.documents += 1
        for issue in document.problems:
            loaded.diagnostics.append(_problem_diagnostic(source.name, issue))
        loaded.records.extend(_records(document, loaded.diagnostics))
    for issue in stream_problems:
        loaded.diagnostics.append(_problem_diagnostic(source.name, issue))
    return loaded


def _template(loaded: LoadedFile, at: tuple[int, int], skip: bool) -> LoadedFile:
    rule = core.HELM_TEMPLATE
    severity = Severity.INFO if skip else rule.severity
    message = f"{MESSAGE}; skipped" if skip else MESSAGE
    loaded.diagnostics.append(Diagnostic(loaded.source.name, at[0] + 1, at[1] + 1, severity, rule.layer, rule.id, message))
    return loaded


def _could_be_manifest(value: Any) -> bool:
    """Whether a document is, or tries to be, a Kubernetes object: a mapping with a kind, metadata or a
    ``group/version`` apiVersion, a list of objects (a common slip, which not-an-object explains), or a lone
    scalar. Mappings and lists of other data (a workflow, package.json, an Ansible playbook, a Helm
    ``Chart.yaml`` with its ``apiVersion: v2``) are someone else's files."""
    if value is None:
        return False
    if isinstance(value, dict):
        return _object_like(value)
    if isinstance(value, list):
        return any(isinstance(item, dict) and _object_like(item) for item in value)
    return True


def _object_like(value: dict[str, Any]) -> bool:
    api_version = value.get("apiVersion")
    return "kind" in value or "metadata" in value or (isinstance(api_version, str) and "/" in api_version)


def _records(document: Document, diagnostics: list[Diagnostic]) -> Iterator[ObjectRecord]:
    value = document.value
    if value is None:
        return  # an empty document, as kubectl skips it
    if not isinstance(value, dict):
        line, column = document.position(())
        kind = "a list" if isinstance(value, list) else "a scalar"
        diagnostics.append(Diagnostic(
            document.file, line, column, core.NOT_AN_OBJECT.severity, core.NOT_AN_OBJECT.layer,
            core.NOT_AN_OBJECT.id, f"document {document.index + 1} is {kind}, not an object (a mapping)",
        ))
        return
    if _is_list(value):
        items = value.get("items")
        if items is None:
            items = []
        if not isinstance(items, list):
            # Passing this over in silence would call a broken file valid (kubectl cannot decode it).
            line, column = document.position(("items",))
            diagnostics.append(Diagnostic(
                document.file, line, column, core.NOT_AN_OBJECT.severity, core.NOT_AN_OBJECT.layer,
                core.NOT_AN_OBJECT.id, f"the items of a {value['kind']} must be a list of objects",
            ))
            return
        for index, item in enumerate(items):
            prefix: Path = ("items", index)
            if not isinstance(item, dict):
                line, column = document.position(prefix)
                diagnostics.append(Diagnostic(
                    document.file, line, column, core.NOT_AN_OBJECT.severity, core.NOT_AN_OBJECT.layer,
                    core.NOT_AN_OBJECT.id, f"item {index} of the List is not an object (a mapping)",
                ))
                continue
            yield from _checked(document, prefix, item, diagnostics)
        return
    yield from _checked(document, (), value, diagnostics)


def _is_list(value: dict[str, Any]) -> bool:
    kind = value.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and value.get("apiVersion") == "v1" and "items" in value


def _checked(
    document: Document, prefix: Path, obj: dict[str, Any], diagnostics: list[Diagnostic]
) -> Iterator[ObjectRecord]:
    missing = [k for k in ("apiVersion", "kind") if not isinstance(obj.get(k), str) or not obj.get(k)]
    if missing:
        at = prefix + ((missing[0],) if missing[0] in obj else ())
        line, column = document.position(at)
        what = " and ".join(missing)
        message = (
            f"Object 'Kind' is missing in '{_short(obj)}'" if missing == ["kind"]
            else f"document is missing {what}: every Kubernetes object needs apiVersion and kind"
        )
        diagnostics.append(Diagnostic(
            document.file, line, column, core.MISSING_TYPE.severity, core.MISSING_TYPE.layer,
            core.MISSING_TYPE.id, message, missing[0],
        ))
        return
    if not prefix and document.size > MAX_REQUEST_BYTES and not is_scenario(obj):
        # The API server refuses such a request body before decoding it (items of a List go one by one; a
        # Scenario's inline objects are checked one by one by its parser).
        line, column = document.position(())
        diagnostics.append(Diagnostic(
            document.file, line, column, core.OBJECT_TOO_LARGE.severity, core.OBJECT_TOO_LARGE.layer,
            core.OBJECT_TOO_LARGE.id, too_large_message(),
        ))
        return
    yield ObjectRecord(document, prefix, obj)


def _short(obj: dict[str, Any]) -> str:
    import json

    text = json.dumps(obj, separators=(",", ":"), default=str)
    return text if len(text) <= 80 else text[:77] + "..."
