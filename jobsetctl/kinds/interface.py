"""The extension point for object kinds (pip-audit's ``interface.py`` idea).

A :class:`KindHandler` knows, for one API kind, everything admission needs: which versions a release
serves, the structural schema, defaulting (apiserver defaults and mutating webhooks), and validation
(built-in API validation or validating webhooks) on create and update. The same handler serves
``validate`` (dry-run create), ``render`` and ``simulate`` (the fake API server), so each rule and
default lives in exactly one place.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from jobsetctl.kube.featuregates import FeatureGates
from jobsetctl.kube.versions import KubeVersion, builtin_served_versions

if TYPE_CHECKING:
    from jobsetctl.admission.schema import StructuralSchema
    from jobsetctl.diagnostics import Finding
    from jobsetctl.kueue.config import KueueConfiguration

Object = dict[str, Any]


class Operation(StrEnum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"


class ClusterView(Protocol):
    """Read access to the objects a check may look up (the fake API server, or validate's inputs)."""

    def get(self, group: str, kind: str, namespace: str, name: str) -> Object | None:
        """One object by group, kind, namespace ('' for cluster-scoped) and name."""

    def list(self, group: str, kind: str, namespace: str | None = None) -> list[Object]:
        """All objects of a kind, optionally in one namespace, in a stable order."""


#: Timestamps that admission writes (e.g. TrainJob ``runtimePatches[].time``) use this instant unless
#: the caller has a clock, so that output is deterministic.
EPOCH = "2026-01-01T00:00:00Z"


@dataclass(frozen=True, slots=True)
class AdmissionContext:
    """Everything a handler may depend on besides the object itself."""

    version: KubeVersion
    gates: FeatureGates
    operation: Operation = Operation.CREATE
    #: None when checks run without a view of other objects (validate's per-file phase): checks that
    #: need lookups run later, in ``validate_in_cluster``.
    cluster: ClusterView | None = None
    now: str = EPOCH
    #: Namespace used for namespaced objects that do not name one (kubectl's default context namespace).
    default_namespace: str = "default"
    #: On UPDATE, the stored object (create-time defaults applied); mutating webhooks compare against it.
    old: Object | None = None
    #: Kueue's configuration when Kueue runs in the modelled cluster (its webhooks and controllers act),
    #: None when it does not (:mod:`jobsetctl.kueue.config`).
    kueue: KueueConfiguration | None = None

    def for_update(self) -> AdmissionContext:
        return replace(self, operation=Operation.UPDATE)


class KindHandler(ABC):
    """Admission behaviour of one kind. Handlers are stateless and shared."""

    group: ClassVar[str]
    kind: ClassVar[str]
    namespaced: ClassVar[bool] = True
    #: True when ``validate``/``validate_in_cluster``/``validate_update`` stand for validating admission
    #: webhooks (JobSet, Trainer), which the API server calls only once the schema and the CEL rules have
    #: passed; False for built-in API validation, which runs in the same pass as the schema (issue #13).
    webhooks: bool = False
    #: True when ``validate_consequences`` looks up other objects through ``ctx.cluster`` (a TrainJob's
    #: runtime); False when it needs nothing but the object, so that ``validate`` runs it beside the
    #: object's own admission, in the worker that has its positions at hand.
    consequences_look_up: bool = True

    def served_versions(self, version: KubeVersion) -> tuple[str, ...]:
        """API versions of this kind that the release serves, newest first. Built-ins read them from
        kubernetes-validate; CRD handlers override this."""
        return builtin_served_versions(version, self.group, self.kind)

    def storage_api_version(self) -> str | None:
        """The apiVersion the API server stores objects of this kind at, when it serves several and converts
        between them (a CRD's storage version); None when objects are stored as written."""
        return None

    def convert(self, obj: Object, api_version: str) -> Object:
        """``obj`` at another served version (the CRD's conversion webhook); ``obj`` itself when it is already
        at ``api_version``. Only kinds with a :meth:`storage_api_version` need it."""
        return obj

    @abstractmethod
    def schema(self, api_version: str, version: KubeVersion) -> StructuralSchema:
        """The structural schema (with its defaults and CEL rules) for one served version."""

    def default(self, obj: Object, ctx: AdmissionContext) -> None:
        """Apiserver defaulting beyond schema defaults, and mutating webhooks, in upstream order.

        Runs on a private copy; mutate in place. Must tolerate any shape (schema checks come after).
        """

    def validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        """Create-time validation that needs nothing but the object and the context."""
        return ()

    def validate_in_cluster(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        """Create-time validation that looks up other objects through ``ctx.cluster`` (never None here)."""
        return ()

    def validate_update(self, old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        """Update validation (immutability, suspended-only mutations). Create checks are not re-run."""
        return ()

    def validate_consequences(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        """What goes wrong after admission has accepted the object (the ``consequence`` layer): objects
        its controller would create that the API server or a webhook would refuse (a JobSet's child Jobs,
        a TrainJob's JobSet), reconcile errors. ``validate`` reports these (``--admission-only`` does
        not); the fake API server does not reject on them, because upstream admits the object and fails
        later: ``render`` and ``simulate`` show the refused creation itself. ``ctx.cluster`` is None when
        ``consequences_look_up`` is False."""
        return ()


class AdmissionWebhook:
    """A webhook of another component on a kind it does not own (Kueue's webhooks on JobSets, TrainJobs
    and Jobs), called by the admission chain after the kind's own handler, as the API server calls the
    webhook configurations of every installed component. Stateless and shared; every method may be a
    no-op. Registered in :data:`jobsetctl.kinds.registry._WEBHOOKS`."""

    def default(self, obj: Object, ctx: AdmissionContext) -> None:
        """Mutating webhook (after the kind's own defaulting); mutate ``obj`` in place."""

    def validate(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return ()

    def validate_in_cluster(self, obj: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return ()

    def validate_update(self, old: Object, new: Object, ctx: AdmissionContext) -> Iterable[Finding]:
        return ()
