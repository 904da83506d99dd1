"""Hints for unknown fields: what the user probably meant (only computed when a field is unknown)."""

from __future__ import annotations

from jobsetctl.admission.schema_node import SchemaNode
from jobsetctl.kube.field import Path
from jobsetctl.kube.versions import KubeVersion

#: The seed discussion of serial execution (jobset issue #672) proposed an ``executionPolicy``; what shipped
#: is ``dependsOn`` on each replicated job (KEP-672). jobset.md §5.
EXECUTION_POLICY_HINT = (
    "the seed proposal's executionPolicy shipped upstream as spec.replicatedJobs[].dependsOn (KEP-672)"
)


def unknown_field_hint(node: SchemaNode, path: Path, version: KubeVersion | None = None) -> str | None:
    """A hint for the unknown key at the end of ``path`` inside an object compiled as ``node``."""
    key = path[-1]
    if not isinstance(key, str):
        return None
    names = list(node.properties)
    if key == "executionPolicy" and ("replicatedJobs" in names or "dependsOn" in names):
        return EXECUTION_POLICY_HINT
    if node.ref and version is not None:
        other = _release_with_field(node.ref, key, version)
        if other is not None:
            return (
                f"{node.ref.rsplit('.', 1)[-1]}.{key} exists in Kubernetes {other.value}, not in "
                f"{version.value} (the release being checked)"
            )
    if not names:
        return None
    by_lower = {name.lower(): name for name in names}
    if key.lower() in by_lower:
        return f'did you mean "{by_lower[key.lower()]}"? (field names are case-sensitive)'
    import difflib  # only for an unknown field: every command imports this module

    close = difflib.get_close_matches(key, names, n=1, cutoff=0.75)
    if close:
        return f'did you mean "{close[0]}"?'
    return None


def _release_with_field(definition: str, key: str, version: KubeVersion) -> KubeVersion | None:
    from jobsetctl.admission.schema_compile import k8s_definitions

    for other in KubeVersion:
        if other is version:
            continue
        raw = k8s_definitions(other).get(definition)
        if isinstance(raw, dict) and key in (raw.get("properties") or {}):
            return other
    return None
