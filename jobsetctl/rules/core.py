"""Rules about the input itself and the admission envelope (files, YAML, kinds, versions)."""

from __future__ import annotations

from jobsetctl.diagnostics import Layer, Severity
from jobsetctl.rules.registry import define

E, W, N = Severity.ERROR, Severity.WARNING, Severity.INFO

UNREADABLE = define("input-unreadable", Layer.INPUT, E, "A path cannot be read (missing, permission denied, not a file).")
TOO_LARGE = define("input-too-large", Layer.INPUT, E, "A file is larger than the input size limit.")
ENCODING = define("input-encoding", Layer.INPUT, E, "A file is not valid UTF-8 text.")
YAML_SYNTAX = define("yaml-syntax", Layer.INPUT, E, "The YAML (or JSON) cannot be parsed.")
YAML_DUPLICATE_KEY = define(
    "yaml-duplicate-key", Layer.INPUT, E, "A mapping repeats a key; Kubernetes' YAML decoder rejects it."
)
YAML_TAG = define("yaml-tag", Layer.INPUT, E, "A YAML tag other than the standard scalar, sequence and mapping tags.")
YAML_ALIASES = define("yaml-aliases", Layer.INPUT, E, "Aliases expand to an excessive document (an alias bomb).")
YAML_DEPTH = define("yaml-depth", Layer.INPUT, E, "A document is nested deeper than the decoder allows.")
NOT_AN_OBJECT = define("not-an-object", Layer.INPUT, E, "A document is not a mapping (an object).")
MISSING_TYPE = define("missing-api-version-or-kind", Layer.INPUT, E, "A document has no apiVersion or no kind.")
EMPTY_FILE = define("empty-file", Layer.INPUT, N, "A file holds no documents.")
NOT_A_MANIFEST = define(
    "not-a-manifest", Layer.INPUT, N,
    "A file holds no Kubernetes object (a GitHub workflow, package.json, Helm values); passed over.",
    doc="With --strict its documents are errors (missing-api-version-or-kind, not-an-object) instead.",
)
HELM_TEMPLATE = define(
    "helm-template", Layer.INPUT, E,
    "A file is a Helm chart template, not YAML: render it first (helm template ... | jobsetctl validate -).",
    doc="The pre-commit hook (--pre-commit) passes templates over with a note, unless --strict.",
)
UNKNOWN_KIND = define(
    "unknown-kind", Layer.INPUT, N, "A kind jobsetctl does not check; it is passed over.",
)
NO_MATCH = define(
    "no-kind-match",
    Layer.SCHEMA,
    E,
    "The chosen Kubernetes release does not serve this apiVersion for the kind.",
)
OBJECT_TOO_LARGE = define(
    "object-too-large", Layer.SCHEMA, E, "An object is larger than the API server accepts in one request."
)
