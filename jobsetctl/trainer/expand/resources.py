"""Resource arithmetic of the expansion: GPU/CPU counts (trainer.md §3.6) and pod requests (§3.7).

``pod_requests`` is Kubernetes ``PodRequests`` (k8s.io/component-helpers/resource) on an undefaulted
pod spec. jobsetctl/kube/podspec.py (another engineer's module, not present when this was written)
is meant to hold the shared implementation; until it lands, this is the only copy in the trainer
package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from jobsetctl.kube.quantity import QuantityError, ceil_value, format_quantity, is_binary_text, parse_quantity
from jobsetctl.trainer.expand.model import as_dict, dicts


@dataclass(slots=True)
class ResourceList:
    """Exact quantities by resource name, remembering whether each was written in binary (Ki/Mi/Gi)
    so the rendered sum keeps the user's style, as Go's ``Quantity.Add`` keeps the first format."""

    amounts: dict[str, Fraction] = field(default_factory=dict)
    binary: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def parse(cls, value: Any) -> ResourceList:
        out = cls()
        for name, raw in as_dict(value).items():
            try:
                amount = parse_quantity(raw)
            except QuantityError:
                continue  # the schema layer reports malformed quantities
            out.amounts[name] = amount
            out.binary[name] = is_binary_text(raw)
        return out

    def add(self, other: ResourceList, times: int = 1) -> None:
        for name, amount in other.amounts.items():
            if name not in self.amounts:
                self.amounts[name] = Fraction(0)
                self.binary[name] = other.binary.get(name, False)
            self.amounts[name] += amount * times

    def max_with(self, other: ResourceList) -> None:
        """Kubernetes ``maxResourceList``: per resource, the larger of the two."""
        for name, amount in other.amounts.items():
            if name not in self.amounts or amount > self.amounts[name]:
                self.amounts[name] = amount
                self.binary[name] = other.binary.get(name, False)

    def copy(self) -> ResourceList:
        return ResourceList(dict(self.amounts), dict(self.binary))

    def render(self) -> dict[str, str]:
        """Canonical quantity strings, keys sorted (Go serialises maps sorted)."""
        return {
            name: format_quantity(self.amounts[name], binary=self.binary.get(name, False))
            for name in sorted(self.amounts)
        }


def canonical_quantities(value: Any) -> dict[str, Any]:
    """A ResourceList map re-serialised the way Go's ``resource.Quantity`` marshals it (``0.5`` →
    ``500m``); values that do not parse are kept as written."""
    out: dict[str, Any] = {}
    for name, raw in as_dict(value).items():
        try:
            out[name] = format_quantity(parse_quantity(raw), binary=is_binary_text(raw))
        except QuantityError:
            out[name] = raw
    return out


def pod_requests(pod_spec: dict[str, Any]) -> ResourceList:
    """Kubernetes ``PodRequests`` with default options (trainer.md §3.7 ``SinglePodRequests``).

    Sum of app-container requests, then max'ed with each init container's requests (restartable
    sidecars, ``restartPolicy: Always``, are added to the sum and to the running sidecar total), then
    pod-level requests for the resources that support them, then ``overhead``. Limits are ignored: the
    runtime template is not apiserver-defaulted, so a limits-only container requests nothing.
    """
    total = ResourceList()
    for container in dicts(pod_spec.get("containers")):
        total.add(ResourceList.parse(as_dict(container.get("resources")).get("requests")))
    sidecars = ResourceList()
    init_max = ResourceList()
    for container in dicts(pod_spec.get("initContainers")):
        requests = ResourceList.parse(as_dict(container.get("resources")).get("requests"))
        if container.get("restartPolicy") == "Always":
            total.add(requests)
            sidecars.add(requests)
            effective = sidecars.copy()
        else:
            effective = requests.copy()
            effective.add(sidecars)
        init_max.max_with(effective)
    total.max_with(init_max)
    pod_level = ResourceList.parse(as_dict(pod_spec.get("resources")).get("requests"))
    for name, amount in pod_level.amounts.items():
        # Pod-level resources support cpu and memory (and hugepages in recent releases; the exact set
        # per release is not pinned by the spec).
        if name in ("cpu", "memory") or name.startswith("hugepages-"):
            total.amounts[name] = amount
            total.binary[name] = pod_level.binary.get(name, False)
    total.add(ResourceList.parse(pod_spec.get("overhead")))
    return total


def gpu_count(resources: dict[str, Any] | None) -> int:
    """Trainer ``GetNumGPUPerNode``: the first resource whose name contains ``gpu`` (any case) in
    ``requests``; when that is 0, the same from ``limits``. Values are rounded up (``Value()``).

    Go iterates a map here, so with two GPU resource names the pick is random upstream; we take the
    first in sorted order to stay deterministic.
    """
    if resources is None:
        return 0
    count = _first_gpu(resources.get("requests"))
    limit = _first_gpu(resources.get("limits"))
    if count == 0 and limit > 0:
        count = limit
    return count


def _first_gpu(values: Any) -> int:
    for name in sorted(as_dict(values)):
        if "gpu" in name.lower():
            try:
                return ceil_value(parse_quantity(as_dict(values)[name]))
            except QuantityError:
                return 0
    return 0


def cpu_count(resources: dict[str, Any] | None) -> int:
    """Trainer ``getNumCPUPerNode``: ``requests.cpu`` if set and non-zero, else ``limits.cpu``, else 0;
    rounded up (``2500m`` → 3)."""
    if resources is None:
        return 0
    request = _quantity(as_dict(resources.get("requests")).get("cpu"))
    if request:
        return ceil_value(request)
    limit = _quantity(as_dict(resources.get("limits")).get("cpu"))
    return ceil_value(limit) if limit else 0


def _quantity(value: Any) -> Fraction:
    if value is None:
        return Fraction(0)
    try:
        return parse_quantity(value)
    except QuantityError:
        return Fraction(0)
