"""A Scenario's ``kubernetesVersion`` and ``featureGates``, checked as the run would use them.

Their problems are diagnostics at their position (``scenario-invalid-value``), reported with the
Scenario's other problems: ``simulate`` shows every problem of a Scenario in one run, and ``validate``
checks a Scenario as ``simulate`` would read it. The same values on the command line are usage errors.
"""

from __future__ import annotations

from jobsetctl.diagnostics import Diagnostic
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION, KubeVersion
from jobsetctl.simulate.scenario import INVALID_VALUE, Scenario
from jobsetctl.status import UsageError


def settings_problems(scenario: Scenario, version_override: str | None = None) -> list[Diagnostic]:
    """The Scenario's ``kubernetesVersion`` (unless ``version_override``, a valid release, replaces it) and
    ``featureGates`` that name no supported release or no known gate, as ``scenario-invalid-value``
    diagnostics at their position. Shared by ``simulate`` (every problem of a Scenario in one run) and
    ``validate`` (which checks a Scenario as simulate would read it)."""
    problems: list[Diagnostic] = []
    version = DEFAULT_KUBE_VERSION
    if version_override is not None:
        version = KubeVersion.parse(version_override)
    elif scenario.kubernetes_version:
        try:
            version = KubeVersion.parse(scenario.kubernetes_version)
        except UsageError as exc:
            problems.append(_setting_problem(scenario, scenario.kubernetes_version_at, "spec.kubernetesVersion", exc))
    if scenario.feature_gates:
        try:
            parse_feature_gates(scenario.feature_gates, version)
        except UsageError as exc:
            problems.append(_setting_problem(scenario, scenario.feature_gates_at, "spec.featureGates", exc))
    return problems


def _setting_problem(scenario: Scenario, at: tuple[int, int], path: str, exc: Exception) -> Diagnostic:
    line, column = at
    return Diagnostic(scenario.file, line, column, INVALID_VALUE.severity, INVALID_VALUE.layer, INVALID_VALUE.id,
                      f"{path}: {exc}", path=path, object=scenario.record.ref)
