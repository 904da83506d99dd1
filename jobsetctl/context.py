"""What jobsetctl knows about the cluster beyond its inputs: the context, and the cluster it cannot see. One
mechanism for ``validate``, ``render`` and ``simulate``.

The context: files whose objects references resolve against but which are not reported (``--context PATH``,
``context:`` in ``.jobsetctl.yaml``). pre-commit passes only the changed files, so a TrainJob edited alone
would miss its TrainingRuntime in an unchanged file; run as the hook (``--pre-commit``) without a context
given, every manifest tracked in the git repository is the context (:func:`repository_manifests`).
``render`` and ``simulate`` create the context's cluster objects (:data:`CLUSTER_KINDS`: namespaces,
PriorityClasses, Kueue's queues and flavors, runtimes) in their fake cluster before the inputs, unprinted
(:meth:`ContextFiles.cluster_objects`, :func:`install`); a workload in the context is looked up, never run.

The unseen cluster: the inputs go to a cluster jobsetctl cannot see. An object a reference names that is in
neither the inputs nor the context may still be there, if it is cluster-scoped (a PriorityClass, a
ClusterTrainingRuntime, a Kueue ClusterQueue) or one administrators create in the users' namespaces (a Kueue
LocalQueue, :data:`ADMINISTERED`): such a finding is a warning with a hint, not an error, unless ``--strict``
(:func:`soften_unresolved`). Other namespaced objects (a TrainingRuntime) usually live next to what uses them,
so their absence stays an error. ``render`` and ``simulate`` go on to create what the inputs lead to in a
fake cluster that holds only the inputs and the context, so for them the rule has one more condition: the
finding must be one of a rule whose objects are all created and then wait (``Rule.waits``: a Kueue Workload
pending for its LocalQueue, Kueue's own behaviour); where the missing object refuses a creation (the
Priority admission plugin refuses pods of a PriorityClass it does not know, the Trainer webhook a TrainJob
of a runtime it does not know, Kueue creates no Workload for a WorkloadPriorityClass it does not know),
what they would show is not what the cluster does, and the error stays, with the same hint.

Generic by construction: any check that reports a reference it could not resolve passes
``unresolved=(group, kind, name)`` to ``Rule.finding``; scope comes from
:data:`jobsetctl.kinds.index.CLUSTER_SCOPED`.
"""

from __future__ import annotations

import builtins
import dataclasses
import os
import re
import subprocess
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from jobsetctl.diagnostics import Finding, Severity
from jobsetctl.kinds.index import ObjectIndex, is_cluster_scoped, object_key, stored_key
from jobsetctl.kinds.interface import AdmissionContext, ClusterView, Object
from jobsetctl.loader.sources import MANIFEST_SUFFIXES, Source, discover, read_text
from jobsetctl.status import UsageError

if TYPE_CHECKING:
    from jobsetctl.fakecluster.apiserver import APIServer

#: How long ``git ls-files`` may take before the hook goes on without the repository's manifests.
GIT_TIMEOUT_SECONDS = 30

KUEUE = "kueue.x-k8s.io"
#: What a cluster holds before any workload arrives and the inputs' references resolve against, in the order
#: it is created: what ``render`` and ``simulate`` create from the context, and what ``render`` submits of the
#: inputs first. The Priority admission plugin resolves ``priorityClassName`` at create time; Kueue's objects
#: come before the jobs, since its webhooks default a job's LocalQueue and WorkloadPriorityClass from them and
#: its reconciler reads priorities when it builds a Workload; the TrainJob webhook and controller resolve
#: ``runtimeRef``.
CLUSTER_KINDS: tuple[tuple[str, str], ...] = (
    ("", "Namespace"),
    ("scheduling.k8s.io", "PriorityClass"),
    (KUEUE, "ResourceFlavor"),
    (KUEUE, "Topology"),
    (KUEUE, "AdmissionCheck"),
    (KUEUE, "Cohort"),
    (KUEUE, "ClusterQueue"),
    (KUEUE, "LocalQueue"),
    (KUEUE, "WorkloadPriorityClass"),
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"),
    ("trainer.kubeflow.org", "TrainingRuntime"),
)


def repository_manifests(start: str = ".") -> list[str]:
    """Every ``*.yaml``, ``*.yml`` and ``*.json`` file git tracks in the repository around ``start``
    (absolute paths); empty outside a git repository or without git. Tracked files only: ``node_modules``,
    virtual environments and build output stay out, as ``.gitignore`` says."""
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=start, capture_output=True, text=True,
            timeout=GIT_TIMEOUT_SECONDS, check=False,
        )
        if top.returncode != 0:
            return []
        root = top.stdout.strip()
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--", *(f"*{suffix}" for suffix in MANIFEST_SUFFIXES)],
            cwd=root, capture_output=True, timeout=GIT_TIMEOUT_SECONDS, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if listed.returncode != 0:
        return []
    names = [name for name in listed.stdout.decode("utf-8", errors="surrogateescape").split("\0") if name]
    return [path for path in (os.path.join(root, name) for name in names) if os.path.isfile(path)]


#: Where a file may define (or mention) an object of a kind: any ``kind: X`` in its text, block, flow or JSON.
_KIND = re.compile(r"""\bkind["']?\s*:\s*["']?([A-Za-z][A-Za-z0-9]*)""")


class ContextFiles:
    """The context's files, read as text once and parsed (and admitted) one file at a time, only when a lookup
    may find something there: a file is a candidate for kind K and name N when its text says ``kind: K``
    and holds N. A TrainJob edited alone then reads the file of its runtime, not the whole repository.

    Nothing here is reported: a broken context file is reported when it is an input itself.
    """

    def __init__(self, sources: Sequence[Source], ctx: AdmissionContext) -> None:
        self.ctx = ctx
        self.index = ObjectIndex()
        self._sources = list(sources)
        self._texts: list[str | None] = []
        self._by_kind: dict[str, list[int]] = {}
        for number, source in enumerate(self._sources):
            text, problem, _ = read_text(source)
            self._texts.append(text if problem is None else None)
            for kind in set(_KIND.findall(text or "")):
                self._by_kind.setdefault(kind, []).append(number)
        #: Bumped whenever a file is loaded, so that merged listings know they are stale.
        self.generation = 0
        #: The objects of :data:`CLUSTER_KINDS` admission accepted, as it left them, in load order.
        self._accepted: list[Object] = []

    @classmethod
    def discover(
        cls, paths: Sequence[str], inputs: Sequence[Source], ctx: AdmissionContext, *, explicit: bool
    ) -> ContextFiles:
        """The files under ``paths`` but the inputs. ``explicit`` paths (``--context``, ``context:``) must exist:
        a typo there is a usage error, not a context that silently holds nothing."""
        sources, problems = discover(list(paths))
        if explicit and problems:
            raise UsageError(f"context: {problems[0].message}")
        seen = {_identity(source) for source in inputs}
        return cls([source for source in sources if _identity(source) not in seen], ctx)

    def candidates(self, kind: str, name: str | None = None) -> bool:
        """Load the files that may hold ``kind`` (named ``name``); whether any was left to load."""
        loaded = False
        for number in self._by_kind.get(kind, ()):
            text = self._texts[number]
            if text is None or (name is not None and name not in text):
                continue
            self._load(number)
            loaded = True
        return loaded

    def _load(self, number: int) -> None:
        from jobsetctl.admission.chain import admit
        from jobsetctl.loader.objects import load_file

        self._texts[number] = None
        for record in load_file(self._sources[number], skip_templates=True).records:
            result = admit(record.obj, self.ctx)
            self.index.add(result.obj if result.obj is not None else record.obj)
            if result.obj is not None and object_key(result.obj)[:2] in _CLUSTER_RANK:
                self._accepted.append(result.obj)
        self.generation += 1

    def cluster_objects(self) -> list[Object]:
        """The context's objects of :data:`CLUSTER_KINDS` that admission accepts, in creation order (by kind,
        then as read): what ``render`` and ``simulate`` create before the inputs. Reads every file that may
        hold one."""
        for _, kind in CLUSTER_KINDS:
            self.candidates(kind)
        return sorted(self._accepted, key=lambda obj: _CLUSTER_RANK[object_key(obj)[:2]])


_CLUSTER_RANK = {kind: rank for rank, kind in enumerate(CLUSTER_KINDS)}


class ClusterIndex(ObjectIndex):
    """validate's view of the cluster, in precedence order: what is added (the inputs, ``--runtimes`` files),
    then the context (loaded as lookups need it), then ``defaults`` (the built-in runtimes, which a
    platform's own runtime of the same name replaces)."""

    def __init__(self, context: ContextFiles | None = None, defaults: ObjectIndex | None = None) -> None:
        super().__init__()
        self.context = context
        self.defaults = defaults if defaults is not None else ObjectIndex()
        self._generation = 0
        self._merged: dict[tuple[str, str], tuple[int, builtins.list[Object]]] = {}
        #: Objects of files that stand for the cluster, not the inputs (``--runtimes``), as admission left them.
        self.installed: builtins.list[Object] = []

    def cluster_objects(self) -> builtins.list[Object]:
        """What the cluster holds before the inputs arrive: the ``--runtimes`` files' objects, then the
        context's (:meth:`ContextFiles.cluster_objects`)."""
        return [*self.installed, *(self.context.cluster_objects() if self.context is not None else ())]

    def add(self, obj: Object) -> None:
        super().add(obj)
        self._generation += 1

    def get(self, group: str, kind: str, namespace: str, name: str) -> Object | None:
        found = super().get(group, kind, namespace, name)
        if found is None and self.context is not None:
            self.context.candidates(kind, name)
            found = self.context.index.get(group, kind, namespace, name)
        return found if found is not None else self.defaults.get(group, kind, namespace, name)

    def list(self, group: str, kind: str, namespace: str | None = None) -> builtins.list[Object]:
        if self.context is not None:
            self.context.candidates(kind)
        layers = [layer for layer in (self.defaults, self.context.index if self.context else None) if layer is not None]
        if not any(layer.list(group, kind) for layer in layers):
            return super().list(group, kind, namespace)
        generation = self._generation + (self.context.generation if self.context else 0)
        cached = self._merged.get((group, kind))
        if cached is None or cached[0] != generation:
            merged: dict[tuple[str, str, str, str], Object] = {}
            for objects in (*(layer.list(group, kind) for layer in layers), super().list(group, kind)):
                for obj in objects:
                    merged[self._key(obj)] = obj  # later layers win
            cached = (generation, [merged[key] for key in sorted(merged)])
            self._merged[(group, kind)] = cached
        return [obj for obj in cached[1] if namespace is None or self._key(obj)[2] == namespace]

    def all(self) -> builtins.list[Any]:
        merged: dict[tuple[str, str, str, str], Object] = {}
        for layer in (self.defaults, self.context.index if self.context else None):
            for obj in layer.all() if layer is not None else ():
                merged[self._key(obj)] = obj
        for obj in super().all():
            merged[self._key(obj)] = obj
        return list(merged.values())


def _name(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


def _identity(source: Source) -> tuple[int, int] | str:
    if source.path is None:
        return source.name
    try:
        info = os.stat(source.path)
    except OSError:
        return os.path.abspath(source.path)
    return info.st_dev, info.st_ino


def did_you_mean(name: str, known: Iterable[str]) -> list[str]:
    """The known names ``name`` is most likely a slip of, closest first (at most three): at most two edits away
    (one for names under six characters), a swap of neighbours counting as one edit, as cobra and kubectl
    suggest commands. Siblings such as training-low and training-high are four edits apart."""
    limit = 1 if len(name) < 6 else 2
    scored = sorted((distance, other) for other in set(known)
                    if other != name and (distance := _edits(name, other, limit)) <= limit)
    return [other for _, other in scored[:3]]


def _edits(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance between ``a`` and ``b``, or ``limit + 1`` once it exceeds ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, previous = previous, current
    return previous[-1]


#: Namespaced kinds that, like cluster-scoped ones, the cluster's administrators create, not the users whose
#: manifests refer to them: Kueue's LocalQueue (Kueue's "Administer cluster quotas" task, step 3, is the batch
#: administrator's), so a job's queue is rarely in the job's repository.
ADMINISTERED = frozenset({("kueue.x-k8s.io", "LocalQueue")})


def soften_unresolved(finding: Finding, cluster: ClusterView, *, unseen_cluster: bool, strict: bool,
                      creates: bool = False, has_strict: bool = True) -> Finding:
    """An error that only says a cluster-scoped (or :data:`ADMINISTERED`) object is missing becomes a warning with
    a hint when the cluster may hold it (``unseen_cluster``), unless ``strict``; or unless the name is a slip of
    one that is known (``did you mean``): then the cluster most likely does not hold it either.

    ``creates``: the command goes on to create what the inputs lead to in a fake cluster of the inputs and the
    context (``render``, ``simulate``). Only a finding of a rule that :attr:`~jobsetctl.rules.interface.Rule.waits`
    is softened there; any other stays an error (its creation is refused there, and would not be in a cluster
    that holds the object), with the hint that says where to put the object. ``has_strict``: the command has a
    ``--strict`` (simulate has none), which the hint names."""
    missing = finding.unresolved
    if missing is None or not unseen_cluster or strict or finding.effective_severity is not Severity.ERROR:
        return finding
    group, kind, name = missing
    cluster_scoped = is_cluster_scoped(group, kind)
    if not cluster_scoped and (group, kind) not in ADMINISTERED:
        return finding
    names = (_name(obj) for obj in cluster.list(group, kind))
    close = did_you_mean(name, (n for n in names if n))
    if close:
        if finding.hint and "did you mean" in finding.hint:
            return finding
        suggestion = "did you mean " + " or ".join(f'"{c}"' for c in close) + "?"
        return dataclasses.replace(finding, hint=f"{suggestion} {finding.hint}" if finding.hint else suggestion)
    scope = "cluster-scoped" if cluster_scoped else "created by the cluster's administrators"
    soften = not creates or finding.rule.waits
    advice = (
        f'{kind} "{name}" is {scope} and in neither the inputs nor the context: the cluster may hold it'
        + ("" if soften else ", but here what needs it is refused")
        + ". Add the file that defines it to the context (--context PATH, or context: in .jobsetctl.yaml)"
        + ("; --strict makes this an error" if soften and has_strict else "")
    )
    if finding.hint and advice in finding.hint:
        return finding  # softened once already (the same finding passes here twice)
    hint = f"{finding.hint}; {advice}" if finding.hint else advice
    if not soften:
        return dataclasses.replace(finding, hint=hint)
    return dataclasses.replace(finding, severity=Severity.WARNING, hint=hint)


def install(api: APIServer, inputs: Sequence[Object], installed: Sequence[Object]) -> None:
    """Before the inputs of ``render`` or ``simulate``, what the cluster already holds, each unless an input
    defines the same object (an input is what the user is about to apply): ``installed`` (the context's
    cluster objects, ``--runtimes`` files; admitted already), then, when a TrainJob is among the inputs, the
    ClusterTrainingRuntimes Kubeflow Trainer ships (trainer.md §4), which ``validate`` resolves ``runtimeRef``
    against too, unless the context has its own of that name. Not through admission again: nothing here is
    a submission."""
    from jobsetctl.kube.jsontree import copy_tree
    from jobsetctl.trainer.catalog import builtin_runtimes

    namespace = api.default_namespace
    taken = {stored_key(obj, namespace) for obj in inputs}
    fresh = [copy_tree(obj) for obj in installed]
    if any(obj.get("kind") == "TrainJob" for obj in inputs):
        fresh.extend(builtin_runtimes())  # fresh copies already
    for obj in fresh:
        key = stored_key(obj, namespace)
        if key not in taken:
            taken.add(key)
            api.create(obj, skip_admission=True)
