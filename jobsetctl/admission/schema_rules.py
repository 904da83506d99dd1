"""The rules of the structural-schema layer (registered through :mod:`jobsetctl.admission.schema`).

Each rule mirrors one family of API-server messages. For custom resources they come from kube-openapi's
schema validator turned into field errors by apiextensions-apiserver
(``pkg/apiserver/validation/validation.go``, ``kubeOpenAPIResultToFieldErrors``), from structural pruning
under strict field validation, and from ``pkg/apiserver/schema/listtype/validation.go``.
"""

from __future__ import annotations

from jobsetctl.diagnostics import Layer, Severity
from jobsetctl.rules.registry import define

_E = Severity.ERROR
_SPEC = "jobset.md §2.1, trainer.md §2.2"

TYPE = define(
    "schema-type", Layer.SCHEMA, _E, "A value has the wrong type for its field.", spec=_SPEC,
    doc="kube-openapi typeValidator: `<path> in body must be of type <type>: \"<given>\"`. An object with "
    "type errors stops admission here: upstream webhooks could not even decode it.",
)
UNKNOWN_FIELD = define(
    "schema-unknown-field", Layer.SCHEMA, _E,
    "A field the schema does not declare (strict field validation).",
    spec=_SPEC,
    doc="What `kubectl apply --validate=strict` reports: `strict decoding error: unknown field \"<path>\"`. "
    "Under the default (warn) validation the API server drops the field silently.",
)
REQUIRED = define("schema-required", Layer.SCHEMA, _E, "A required field is missing.", spec=_SPEC)
ENUM = define("schema-enum", Layer.SCHEMA, _E, "A value is not one of the allowed values.", spec=_SPEC)
RANGE = define(
    "schema-range", Layer.SCHEMA, _E, "A number is outside its minimum/maximum.", spec="jobset.md §2.1"
)
LENGTH = define("schema-length", Layer.SCHEMA, _E, "A string is shorter or longer than allowed.", spec=_SPEC)
PATTERN = define(
    "schema-pattern", Layer.SCHEMA, _E, "A string does not match its pattern (or is not a quantity).",
    spec=_SPEC,
)
ITEMS = define("schema-items", Layer.SCHEMA, _E, "A list has fewer or more items than allowed.", spec=_SPEC)
DUPLICATE = define(
    "schema-duplicate", Layer.SCHEMA, _E,
    "A list-type map repeats a key, or a list-type set repeats an item.", spec="jobset.md §2.2",
)
PROPERTIES = define(
    "schema-properties", Layer.SCHEMA, _E, "An object has fewer or more properties than allowed.",
    spec="trainer.md §1.5",
)
FORMAT = define(
    "schema-format", Layer.SCHEMA, _E, "A value does not match a format the API server enforces.",
    spec=_SPEC,
    doc="For custom resources: the formats apiextensions keeps and we check (date-time, date, byte, uuid; "
    "int32/int64 are stripped). For built-in kinds: what the Go decoder rejects (int32/int64 range, with "
    "encoding/json's message; times and base64 bytes are checked with kube-openapi's rules and wording).",
)
