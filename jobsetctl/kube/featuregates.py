"""One map of feature gates for Kubernetes, JobSet and Kubeflow Trainer, with upstream defaults.

Sources: scheduling.md §1.1 (Kubernetes gates per release), jobset.md header table (JobSet gates),
trainer.md §1.4/§3.11 (TrainJobStatus). Where a default is not pinned by upstream we say so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from jobsetctl.kube.versions import KubeVersion
from jobsetctl.status import UsageError

V35, V36, V37 = KubeVersion.V1_35, KubeVersion.V1_36, KubeVersion.V1_37


@dataclass(frozen=True, slots=True)
class Gate:
    name: str
    component: str  # "kubernetes", "jobset" or "trainer"
    #: Default per Kubernetes release; a release missing from the map does not have the gate at all.
    #: Gates of JobSet and Trainer exist for every release.
    defaults: Mapping[KubeVersion, bool]
    stage: Mapping[KubeVersion, str]
    summary: str
    locked: bool = False


def _kube(name: str, summary: str, **per_version: tuple[str, bool]) -> Gate:
    versions = {KubeVersion(k.replace("_", ".")[1:]): v for k, v in per_version.items()}
    return Gate(
        name,
        "kubernetes",
        {v: default for v, (_, default) in versions.items()},
        {v: stage for v, (stage, _) in versions.items()},
        summary,
    )


def _addon(name: str, component: str, default: bool, stage: str, summary: str, locked: bool = False) -> Gate:
    return Gate(name, component, dict.fromkeys(KubeVersion, default), dict.fromkeys(KubeVersion, stage), summary, locked)


GATES: dict[str, Gate] = {
    g.name: g
    for g in (
        # Kubernetes (scheduling.md §1.1). 1.37 defaults: GenericWorkload is beta but "disabled by
        # default" (website); the other 1.37 betas depend on it, so they are off by default too
        # (not pinned by a release note in the snapshot: scheduling.md U15).
        _kube("GenericWorkload", "Workload/PodGroup APIs and gang scheduling basics",
              v1_35=("alpha", False), v1_36=("alpha", False), v1_37=("beta", False)),
        _kube("GangScheduling", "kube-scheduler GangScheduling plugin",
              v1_35=("alpha", False), v1_36=("alpha", False), v1_37=("beta", False)),
        _kube("TopologyAwareWorkloadScheduling", "PodGroup schedulingConstraints.topology (KEP-5732)",
              v1_36=("alpha", False), v1_37=("beta", False)),
        _kube("WorkloadAwarePreemption", "PodGroup priority and disruptionMode in preemption (KEP-5710)",
              v1_36=("alpha", False), v1_37=("beta", False)),
        _kube("WorkloadWithJob", "the Job controller creates Workload and PodGroup (KEP-5547)",
              v1_36=("alpha", False), v1_37=("alpha", False)),
        _kube("DRAWorkloadResourceClaims", "PodGroup resourceClaims (KEP-5729)",
              v1_36=("alpha", False), v1_37=("beta", False)),
        _kube("CompositePodGroup", "CompositePodGroup hierarchy (KEP-6012)", v1_37=("alpha", False)),
        _kube("PodGroupPreemptionPolicy", "PodGroup preemptionPolicy", v1_37=("alpha", False)),
        # JobSet (jobset.md, feature gate table).
        _addon("InPlaceRestart", "jobset", False, "alpha", "failurePolicy.restartStrategy InPlaceRestart"),
        _addon("RestartJob", "jobset", False, "alpha", "RestartJob and RestartJobAndIgnoreMaxRestarts actions"),
        _addon("ElasticJobSet", "jobset", False, "alpha", "update parallelism/completions of Indexed replicated jobs"),
        _addon("TLSOptions", "jobset", True, "GA", "webhook TLS options (no effect offline)", locked=True),
        # Kubeflow Trainer (trainer.md §1.4, §3.11).
        _addon("TrainJobStatus", "trainer", False, "alpha", "trainerStatus and the status-server env injection"),
    )
}


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """Effective gates for one Kubernetes release: upstream defaults overlaid with explicit settings."""

    version: KubeVersion
    explicit: Mapping[str, bool] = field(default_factory=dict)
    #: Answers of :meth:`enabled` so far: the simulated controllers ask for the same gates for every pod,
    #: and the defaults' lookup hashes the version (an Enum, whose hash is Python code).
    _answers: dict[str, bool] = field(default_factory=dict, init=False, repr=False, compare=False)

    def enabled(self, name: str) -> bool:
        found = self._answers.get(name)
        if found is None:
            if name in self.explicit:
                found = self.explicit[name]
            else:
                found = GATES[name].defaults.get(self.version, False)
            self._answers[name] = found
        return found

    def __getitem__(self, name: str) -> bool:
        return self.enabled(name)

    def known(self) -> list[str]:
        return sorted(n for n, g in GATES.items() if self.version in g.defaults)

    def with_enabled(self, names: Iterable[str]) -> FeatureGates:
        """These gates turned on unless the user set them explicitly (simulate turns on what its kinds need)."""
        merged = dict(self.explicit)
        for name in names:
            if name in GATES and self.version in GATES[name].defaults:
                merged.setdefault(name, True)
        return FeatureGates(self.version, merged)

    def as_dict(self) -> dict[str, bool]:
        return {name: self.enabled(name) for name in self.known()}


def parse_feature_gates(spec: str | Mapping[str, object] | None, version: KubeVersion) -> FeatureGates:
    """``"InPlaceRestart=true,RestartJob=false"`` (or a mapping) into :class:`FeatureGates`.

    An unknown gate, or one the chosen release does not have, is a usage error that lists the known ones.
    """
    if spec is None or spec == "":
        return FeatureGates(version)
    items: list[tuple[str, object]]
    if isinstance(spec, str):
        items = []
        for part in spec.split(","):
            part = part.strip()
            if not part:
                continue
            name, sep, text = part.partition("=")
            if not sep:
                raise UsageError(f"invalid feature gate {part!r}: expected Name=true|false")
            items.append((name.strip(), text.strip()))
    else:
        items = list(spec.items())
    explicit: dict[str, bool] = {}
    for name, raw in items:
        gate = GATES.get(name)
        if gate is None or version not in gate.defaults:
            known = ", ".join(n for n, g in sorted(GATES.items()) if version in g.defaults)
            where = f" (Kubernetes {version.value} has no such gate)" if gate else ""
            raise UsageError(f"unrecognized feature gate: {name}{where}; known gates: {known}")
        value = _parse_bool(name, raw)
        if gate.locked and value != gate.defaults[version]:
            raise UsageError(f"cannot set feature gate {name} to {str(value).lower()}, feature is locked")
        explicit[name] = value
    return FeatureGates(version, explicit)


def _parse_bool(name: str, raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text == "true":
        return True
    if text == "false":
        return False
    raise UsageError(f"invalid value of {name}={raw}, err: strconv.ParseBool: parsing {str(raw)!r}: invalid syntax")
