"""``APIServer.context``: the admission context handed out again while nothing it holds has changed.

The context is frozen; the API server keeps the last one it made and returns it while the clock's timestamp,
the operation, the Kubernetes version, the feature gates, the Kueue configuration and the default namespace
are those it holds. Each of these changing gives a new context equal to one built afresh (a cache that
ignored any of them fails here).
"""

from __future__ import annotations

from dataclasses import replace

from jobsetctl.fakecluster.apiserver import APIServer
from jobsetctl.fakecluster.clock import VirtualClock
from jobsetctl.kinds.interface import AdmissionContext, Operation
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.kueue.config import SHIPPED


def _fresh(api: APIServer, operation: Operation) -> AdmissionContext:
    return AdmissionContext(api.version, api.gates, operation, cluster=api, now=api.clock.timestamp(),
                            default_namespace=api.default_namespace, kueue=api.kueue)


def _check(api: APIServer, operation: Operation = Operation.CREATE) -> AdmissionContext:
    ctx = api.context(operation)
    expected = _fresh(api, operation)
    assert ctx == expected
    assert ctx.gates is api.gates and ctx.kueue is api.kueue and ctx.cluster is api
    return ctx


def test_the_context_is_reused_while_its_inputs_stay_and_rebuilt_when_any_changes() -> None:
    clock = VirtualClock()
    api = APIServer(clock, KubeVersion.V1_37, parse_feature_gates(None, KubeVersion.V1_37))
    first = _check(api)
    assert api.context() is first
    clock.advance_to(0.5)  # the same second: the same timestamp
    assert api.context() is first
    clock.advance_to(1.0)
    second = _check(api)
    assert second is not first and second.now != first.now
    update = _check(api, Operation.UPDATE)
    assert update.operation is Operation.UPDATE
    assert _check(api).operation is Operation.CREATE
    api.version = KubeVersion.V1_35
    assert _check(api).version == KubeVersion.V1_35
    api.gates = parse_feature_gates({}, KubeVersion.V1_35)  # an equal set of gates, another object
    assert _check(api).gates is api.gates
    api.kueue = SHIPPED
    assert _check(api).kueue is SHIPPED
    api.default_namespace = "team-a"
    assert _check(api).default_namespace == "team-a"
    assert replace(api.context(), operation=Operation.UPDATE) == _fresh(api, Operation.UPDATE)
