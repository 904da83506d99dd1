"""What ``validate`` knows about the cluster beyond its inputs: the context, and the cluster it cannot see.

The context: files whose objects references resolve against but which are not reported (``--context PATH``,
``context:`` in ``.jobsetctl.yaml``). pre-commit passes only the changed files, so a TrainJob edited alone
would miss its TrainingRuntime in an unchanged file; run as the hook (``--pre-commit``) without a context
given, every manifest tracked in the git repository is the context (:func:`repository_manifests`).

The unseen cluster: ``validate`` stands for a dry-run create in a cluster it cannot see. An object a
reference names that is in neither the inputs nor the context may still be there, if it is cluster-scoped
(a PriorityClass, a ClusterTrainingRuntime, a Kueue ClusterQueue): such a finding is a warning with a hint,
not an error, unless ``--strict`` (:func:`soften_unresolved`). Namespaced objects (a TrainingRuntime, a
LocalQueue) usually live next to what uses them, so their absence stays an error. ``render`` and
``simulate`` run a fake cluster that holds nothing else: for them a missing object is missing.

Generic by construction: any check that reports a reference it could not resolve passes
``unresolved=(group, kind, name)`` to ``Rule.finding``; scope comes from
:data:`jobsetctl.kinds.index.CLUSTER_SCOPED`.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from jobsetctl.diagnostics import Finding, Severity
from jobsetctl.kinds.index import is_cluster_scoped
from jobsetctl.kinds.interface import AdmissionContext, ClusterView
from jobsetctl.loader.sources import MANIFEST_SUFFIXES, Source, discover
from jobsetctl.status import UsageError

#: How long ``git ls-files`` may take before the hook goes on without the repository's manifests.
GIT_TIMEOUT_SECONDS = 30


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


def context_objects(
    paths: Sequence[str], inputs: Sequence[Source], ctx: AdmissionContext, *, explicit: bool
) -> Iterator[dict[str, Any]]:
    """The objects of the context files as admission leaves them (defaults applied), leaving out the files
    that are inputs. Nothing here is reported: a broken context file is reported when it is an input.

    ``explicit`` paths (``--context``, ``context:``) must exist: a typo there is a usage error, not a
    context that silently holds nothing.
    """
    from jobsetctl.admission.chain import admit
    from jobsetctl.loader.objects import load_file

    sources, problems = discover(list(paths))
    if explicit and problems:
        raise UsageError(f"context: {problems[0].message}")
    seen = {_identity(source) for source in inputs}
    for source in sources:
        if _identity(source) in seen:
            continue
        for record in load_file(source, skip_templates=True).records:
            result = admit(record.obj, ctx)
            yield result.obj if result.obj is not None else record.obj


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


def soften_unresolved(finding: Finding, cluster: ClusterView, *, unseen_cluster: bool, strict: bool) -> Finding:
    """An error that only says a cluster-scoped object is missing becomes a warning with a hint when the
    cluster may hold it (``validate``), unless ``strict``; or unless the name is a slip of one that is known
    (``did you mean``): then the cluster most likely does not hold it either."""
    missing = finding.unresolved
    if missing is None or not unseen_cluster or strict or finding.effective_severity is not Severity.ERROR:
        return finding
    group, kind, name = missing
    if not is_cluster_scoped(group, kind):
        return finding
    names = (_name(obj) for obj in cluster.list(group, kind))
    close = did_you_mean(name, (n for n in names if n))
    if close:
        if finding.hint and "did you mean" in finding.hint:
            return finding
        suggestion = "did you mean " + " or ".join(f'"{c}"' for c in close) + "?"
        return dataclasses.replace(finding, hint=f"{suggestion} {finding.hint}" if finding.hint else suggestion)
    advice = (
        f'{kind} "{name}" is cluster-scoped and in neither the inputs nor the context: the cluster may hold it. '
        "Add the file that defines it to the context (--context PATH, or context: in .jobsetctl.yaml); "
        "--strict makes this an error"
    )
    hint = f"{finding.hint}; {advice}" if finding.hint else advice
    return dataclasses.replace(finding, severity=Severity.WARNING, hint=hint)
