"""From command-line values and the configuration file to the plain option values the package takes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from jobsetctl.config import load_config
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import DEFAULT_KUBE_VERSION, KubeVersion
from jobsetctl.status import UsageError
from jobsetctl.validate import ValidateOptions

if TYPE_CHECKING:
    from jobsetctl.kueue.config import KueueConfiguration


def split_csv(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def validate_options(
    paths: Sequence[str],
    kubernetes_version: str | None,
    feature_gates: str | None,
    strict: bool | None,
    ignore: str | None,
    runtimes: Sequence[str],
    crds: Sequence[str],
    old: str | None,
    config_path: str | None,
    jobs: int | None = None,
    *,
    context: Sequence[str] | None = None,
    pre_commit: bool = False,
    unseen_cluster: bool = False,
    admission_only: bool | None = None,
    kueue_config: str | None = None,
) -> ValidateOptions:
    """``context`` None: the command has no context (``fix``), and the configuration's ``context:`` does not
    apply."""
    config = load_config(config_path)
    version = KubeVersion.parse(kubernetes_version or config.kubernetes_version or DEFAULT_KUBE_VERSION.value)
    if config.feature_gates:
        # Checked alone first, so that a bad gate in the file is reported at its place in the file.
        try:
            parse_feature_gates(dict(config.feature_gates), version)
        except UsageError as exc:
            raise UsageError(f"{config.where('featureGates')}: {exc}") from None
    if config.ignore:
        try:
            _check_rule_ids(frozenset(config.ignore), "in ignore")
        except UsageError as exc:
            raise UsageError(f"{config.where('ignore')}: {exc}") from None
    gates_spec: dict[str, object] = dict(config.feature_gates)
    for part in split_csv(feature_gates):
        name, _, value = part.partition("=")
        gates_spec[name.strip()] = value.strip() if _ else part
    if feature_gates is not None and any("=" not in p for p in split_csv(feature_gates)):
        parse_feature_gates(feature_gates, version)  # raises the usage error with the standard wording
    gates = parse_feature_gates(gates_spec, version)
    ignored = frozenset(config.ignore) | frozenset(split_csv(ignore))
    _check_rule_ids(ignored)
    return ValidateOptions(
        paths=list(paths),
        version=version,
        gates=gates,
        strict=strict if strict is not None else bool(config.strict),
        ignore=ignored,
        runtimes=list(runtimes) + list(config.runtimes),
        crds=list(crds) + list(config.crds),
        old=old,
        jobs=jobs if jobs is not None else _env_jobs(),
        context=[] if context is None else list(context) + list(config.context),
        pre_commit=pre_commit,
        unseen_cluster=unseen_cluster,
        admission_only=admission_only if admission_only is not None else bool(config.admission_only),
        kueue=kueue_configuration(kueue_config),
    )


def kueue_configuration(path: str | None) -> KueueConfiguration:
    """``--kueue-config FILE``, else the configuration Kueue ships."""
    from jobsetctl.kueue.config import SHIPPED, load_kueue_config

    return load_kueue_config(path) if path is not None else SHIPPED


def _env_jobs() -> int:
    import os

    raw = os.environ.get("JOBSETCTL_JOBS", "0")
    try:
        return max(0, int(raw))
    except ValueError:
        raise UsageError(f"JOBSETCTL_JOBS must be a number, not {raw!r}") from None


def _check_rule_ids(ids: frozenset[str], where: str = "in --ignore") -> None:
    from jobsetctl.rules import all_rules

    known = {rule.id for rule in all_rules()}
    unknown = sorted(ids - known - {"all"})
    if unknown:
        raise UsageError(f"unknown rule id {unknown[0]!r} {where}; see `jobsetctl rules`")
