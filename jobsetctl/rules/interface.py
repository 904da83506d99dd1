"""What a rule is. Rules are data; the checks that report them live next to the behaviour they mirror."""

from __future__ import annotations

from dataclasses import dataclass

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.kube.field import Path, parse_path


@dataclass(frozen=True, slots=True)
class Rule:
    """One stable, documented check.

    ``id`` is kebab-case and never changes once released (users put it in ``--ignore`` and in the
    ``jobsetctl.dev/ignore`` annotation). ``spec`` cites the section of ``shared/spec`` that
    describes the upstream behaviour the rule mirrors.
    """

    id: str
    layer: Layer
    severity: Severity
    summary: str
    spec: str = ""
    doc: str = ""
    #: Its findings say that everything the object leads to is created and then waits (a Kueue Workload
    #: pending for its queue), so nothing ``render`` or ``simulate`` creates depends on the missing object
    #: they name: those commands soften them as ``validate`` does (:func:`jobsetctl.context.soften_unresolved`).
    waits: bool = False

    @property
    def fix(self) -> str | None:
        """What ``jobsetctl fix`` does about this rule's findings, or None when it has no fix. Fixes are
        declared next to their code, keyed by rule id (:mod:`jobsetctl.fix.registry`)."""
        from jobsetctl.fix.registry import fix_summary

        return fix_summary(self.id)

    def finding(
        self,
        message: str,
        *,
        path: str | None = None,
        at: Path | None = None,
        hint: str | None = None,
        severity: Severity | None = None,
        unresolved: tuple[str, str, str] | None = None,
    ) -> Finding:
        """Build a finding. ``at`` defaults to ``path`` parsed, ``path`` to ``at`` rendered. ``unresolved``
        names the object (group, kind, name) a reference finding did not find."""
        from jobsetctl.kube.field import path_string

        if at is None:
            at = parse_path(path) if path else ()
        if path is None:
            path = path_string(at)
        return Finding(self, message, path, at, severity, hint, unresolved)
