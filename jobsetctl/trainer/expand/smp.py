"""A small Kubernetes strategic merge patch, for the JobSetSpec fields runtimePatches can reach.

trainer.md §3.5: the controller serialises the JobSetSpec and each patch's ``trainingRuntimeSpec
.template.spec`` to JSON and applies ``strategicpatch.StrategicMergePatch`` with JobSetSpec type
metadata, patch after patch, then restores the runtime's replicated-job order. Patches can only touch
the fields of trainer.md §1.3, so a merge-key table for exactly the lists §3.5 names is enough:

* lists in :data:`MERGE_KEYS` merge item by item on their key; every other list is replaced whole
  (``tolerations`` has no patch strategy in core/v1);
* maps and structs merge recursively, patch values win; scalars are replaced.

Element order follows apimachinery's ``mergeSlice`` (``normalizeElementOrder`` +
``mergeSortedSlice``): items named in the patch keep the patch's order, the others keep the original
order, and the two are interleaved by their original positions, so an item the original lacks is
placed *before* the original items that follow the last matched one (e.g. a new volume lands first).

The patch is first made to look like what Go's ``json.Marshal`` of the typed patch produces: nulls,
empty lists, empty label/annotation/nodeSelector maps and ``$`` directives are dropped (omitempty and
typed decoding), so they never delete or clear anything.
"""

from __future__ import annotations

from typing import Any

from jobsetctl.kube.jsontree import copy_tree

_POD = ("replicatedJobs", "template", "spec", "template", "spec")

#: Field path from the JobSetSpec root (list items are not path segments) → merge key.
MERGE_KEYS: dict[tuple[str, ...], str] = {
    ("replicatedJobs",): "name",
    ("replicatedJobs", "dependsOn"): "name",
    (*_POD, "containers"): "name",
    (*_POD, "initContainers"): "name",
    (*_POD, "containers", "env"): "name",
    (*_POD, "initContainers", "env"): "name",
    (*_POD, "containers", "volumeMounts"): "mountPath",
    (*_POD, "initContainers", "volumeMounts"): "mountPath",
    (*_POD, "volumes"): "name",
    (*_POD, "imagePullSecrets"): "name",
    (*_POD, "schedulingGates"): "name",
}

#: Map-typed (not struct) fields: Go's omitempty drops them from the patch when empty.
_MAP_FIELDS = frozenset({"labels", "annotations", "nodeSelector"})


def merge_jobset_spec(original: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``original`` with ``patch`` strategically merged in; neither argument is modified."""
    cleaned = clean_patch(patch)
    if not isinstance(cleaned, dict):
        return copy_tree(original)
    return _merge_map(original, cleaned, ())


def restore_job_order(spec: dict[str, Any], runtime_order: list[str]) -> None:
    """Put replicated jobs back in the runtime's order, in place (``sort.SliceStable``).

    Quirk (Go ``map`` zero value): a job the runtime does not have sorts as if it had index 0.
    """
    jobs = spec.get("replicatedJobs")
    if not isinstance(jobs, list):
        return
    position = {name: index for index, name in enumerate(runtime_order)}
    jobs.sort(key=lambda job: position.get(str(job.get("name")), 0) if isinstance(job, dict) else 0)


def clean_patch(value: Any, key: str = "") -> Any:
    """The patch as Go would serialise it from its typed form (see the module docstring)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str) or k.startswith("$") or v is None:
                continue
            cleaned = clean_patch(v, k)
            if cleaned is None:
                continue
            out[k] = cleaned
        if not out and key in _MAP_FIELDS:
            return None
        return out
    if isinstance(value, list):
        items = [clean_patch(item) for item in value if item is not None]
        return items or None
    return value


def _merge_map(original: dict[str, Any], patch: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    merged = copy_tree(original)
    for key, patch_value in patch.items():
        sub_path = (*path, key)
        current = merged.get(key)
        merge_key = MERGE_KEYS.get(sub_path)
        if merge_key is not None and isinstance(patch_value, list) and isinstance(current, list):
            merged[key] = _merge_list(current, patch_value, merge_key, sub_path)
        elif isinstance(patch_value, dict) and isinstance(current, dict):
            merged[key] = _merge_map(current, patch_value, sub_path)
        else:
            merged[key] = copy_tree(patch_value)
    return merged


def _key_of(item: Any, merge_key: str) -> Any:
    return item.get(merge_key) if isinstance(item, dict) else None


def _merge_list(original: list[Any], patch: list[Any], merge_key: str, path: tuple[str, ...]) -> list[Any]:
    merged = copy_tree(original)
    for item in patch:
        key = _key_of(item, merge_key)
        index = next(
            (i for i, existing in enumerate(merged) if key is not None and _key_of(existing, merge_key) == key), None
        )
        if index is not None and isinstance(item, dict) and isinstance(merged[index], dict):
            merged[index] = _merge_map(merged[index], item, path)
        else:
            # Go refuses a patch item without its merge key; a typed patch always has it (required).
            merged.append(copy_tree(item))
    patch_keys = [_key_of(item, merge_key) for item in patch]
    original_keys = [_key_of(item, merge_key) for item in original]
    from_patch = [item for item in merged if _key_of(item, merge_key) in patch_keys]
    server_only = [item for item in merged if _key_of(item, merge_key) not in patch_keys]
    from_patch.sort(key=lambda item: patch_keys.index(_key_of(item, merge_key)))
    server_only.sort(
        key=lambda item: original_keys.index(_key_of(item, merge_key))
        if _key_of(item, merge_key) in original_keys else len(original_keys)
    )
    return _interleave(server_only, from_patch, original_keys, merge_key)


def _interleave(left: list[Any], right: list[Any], server_keys: list[Any], merge_key: str) -> list[Any]:
    """apimachinery ``mergeSortedSlice``: a server-only item goes first only when both it and the next
    patch item are in the original and it came earlier there."""
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            left_key, right_key = _key_of(left[i], merge_key), _key_of(right[j], merge_key)
            if left_key in server_keys and right_key in server_keys and (
                server_keys.index(left_key) < server_keys.index(right_key)
            ):
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


def merge_resources(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Trainer's ``MergeResourceRequirements``: ``limits``/``requests`` merged per resource (override
    wins), ``claims`` merged by name (trainer.md §3.6)."""
    merged: dict[str, Any] = {}
    for field in ("limits", "requests"):
        values = dict(base.get(field) or {}) if isinstance(base.get(field), dict) else {}
        extra = override.get(field)
        if isinstance(extra, dict):
            for name, quantity in extra.items():
                if quantity is None:
                    values.pop(name, None)
                else:
                    values[name] = quantity
        if values:
            merged[field] = values
    base_claims: list[Any] = base["claims"] if isinstance(base.get("claims"), list) else []
    override_claims: list[Any] = override["claims"] if isinstance(override.get("claims"), list) else []
    if base_claims or override_claims:
        merged["claims"] = _merge_list(base_claims, override_claims, "name", ())
    return merged
