"""``duplicate-object``: two input documents that define the same object (the ``lint`` layer: ``kubectl
apply`` accepts both and keeps the last, and ``kubectl apply --dry-run=server`` says nothing, so
``validate --admission-only`` leaves it out; issue #13).

An object is identified by its group, kind, namespace and name: the version does not count (a 1.36
``v1alpha2`` and a 1.37 ``v1beta1`` PodGroup of one name are the same stored object), a namespaced
object without ``metadata.namespace`` lands in the default namespace (as ``kubectl`` sends it), and a
cluster-scoped one has no namespace at all (the API server clears one written on it). Objects named by
``generateName`` get a fresh name each and never collide; jobsetctl's own documents (a ``simulate``
Scenario) are not API objects.

Each input is compared with the inputs only: with ``--old`` the inputs that name a stored object are
updates of it, and the stored object itself is no second definition. Two inputs updating the same
stored object are still reported: each update replaces the whole object, so the first one is lost.

Phase B of ``validate`` runs :func:`check_duplicates` over every loaded object, admitted or not. The
definitions of one object are ordered by file path (compared directory by directory, the order in
which ``kubectl apply -f <dir>/`` reads a tree), then by position in the file; the second and every
later one is reported, naming the first one's file and line. Sorting keeps the result independent of
the order the files are named on the command line, as every other check of ``validate`` is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import PurePath

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kinds.index import already_exists, object_key
from jobsetctl.kube.field import Path, go_quote, path_string
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define

#: jobsetctl's own document kinds (a ``simulate`` Scenario) live in this group: ``kubectl`` never sends them.
JOBSETCTL_GROUP = "jobsetctl.dev"
NAME_AT: Path = ("metadata", "name")

DUPLICATE_OBJECT = define(
    "duplicate-object", Layer.LINT, Severity.WARNING,
    "Two input documents define the same object: kubectl create refuses the second, kubectl apply keeps the last.",
    spec="Kubernetes object names: unique per group, kind and namespace (create answers AlreadyExists)",
    doc=(
        "Two documents among the inputs (in one file or in several) define the same object: same API "
        "group and kind, same namespace once the default namespace is filled in (none for cluster-scoped "
        "kinds such as PriorityClass or ClusterTrainingRuntime), same metadata.name. The apiVersion does "
        "not matter: every served version reads and writes the same stored object.\n\n"
        "What happens depends on how the manifests are sent. `kubectl create` creates the first and "
        "refuses the second with AlreadyExists (`<resource>.<group> \"<name>\" already exists`); "
        "`jobsetctl render` and `simulate` do the same, so they fail where validate passed. `kubectl "
        "apply` accepts both and keeps the last: the first definition is silently lost.\n\n"
        "Why a warning and not an error: each document is valid on its own, and with `kubectl apply` the "
        "set is accepted; what is wrong is that one of the two definitions never takes effect. It is "
        "reported on the second (and every later) definition, naming the first one's file:line; keep one "
        "definition, or rename one object. An input that updates an object given with `--old` is not a "
        "duplicate of it; two inputs updating the same object are.\n"
    ),
)


@dataclass(frozen=True, slots=True)
class Defined:
    """An object among the inputs, as :func:`check_duplicates` needs it."""

    record: ObjectRecord
    #: Whether the kind lives in namespaces (the admission handler's scope; cluster-scoped kinds ignore
    #: ``metadata.namespace``).
    namespaced: bool
    #: The object is given with ``--old``: the input updates it instead of creating it.
    update: bool = False


ObjectIdentity = tuple[str, str, str, str]


def identity(defined: Defined, default_namespace: str) -> ObjectIdentity | None:
    """(group, kind, namespace, name) of the stored object; None when the input names none."""
    group, kind, namespace, name = object_key(defined.record.obj)
    if not kind or not name or group == JOBSETCTL_GROUP:
        return None
    return group, kind, (namespace or default_namespace) if defined.namespaced else "", name


def _input_order(defined: Defined) -> tuple[tuple[str, ...], int, tuple[tuple[int, int, str], ...]]:
    record = defined.record
    prefix = tuple((0, part, "") if isinstance(part, int) else (1, 0, part) for part in record.prefix)
    return PurePath(record.file).parts, record.document.index, prefix


def check_duplicates(
    inputs: Iterable[Defined], default_namespace: str, where: Callable[[ObjectRecord], str]
) -> Iterator[tuple[ObjectRecord, Finding]]:
    """A finding on every definition after the first of the same object; ``where(record)`` says where
    the first one is (``file:line``)."""
    first: dict[ObjectIdentity, Defined] = {}
    for defined in sorted(inputs, key=_input_order):
        key = identity(defined, default_namespace)
        if key is None:
            continue
        earlier = first.setdefault(key, defined)
        if earlier is defined:
            continue
        group, kind, namespace, name = key
        what = f"{kind} {go_quote(f'{namespace}/{name}' if namespace else name)}"
        if defined.update:
            message = (f"{what} is updated twice among the inputs, first at {where(earlier.record)}: an update "
                       "replaces the whole object, so only the last one takes effect")
        else:
            message = (f"{what} is defined twice among the inputs, first at {where(earlier.record)}: kubectl "
                       f"create (and render, simulate) refuses this one with {already_exists(group, kind, name)}, "
                       "and kubectl apply keeps only the last definition")
        yield defined.record, DUPLICATE_OBJECT.finding(
            message, path=path_string(NAME_AT), at=NAME_AT,
            hint="keep one definition, or give one of the objects another metadata.name",
        )
