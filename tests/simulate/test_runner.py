"""The run loop's stop rule: retries alone do not keep a run going; running pods and pending actions do."""

from __future__ import annotations

import pytest

from jobsetctl.fakecluster.cluster import ClusterOptions, FakeCluster
from jobsetctl.kube.featuregates import parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.simulate.ledger import Ledger
from jobsetctl.simulate.runner import QUIET_WINDOW, Idle, IdleDetector


def _cluster() -> tuple[FakeCluster, Ledger, IdleDetector]:
    version = KubeVersion.V1_37
    cluster = FakeCluster(ClusterOptions(version, parse_feature_gates(None, version), simulate=True))
    ledger = Ledger()
    cluster.api.subscribe(ledger.on_event)
    return cluster, ledger, IdleDetector(cluster, ledger)


def _retry_every(cluster: FakeCluster, seconds: float) -> None:
    """A timer that re-arms itself and writes nothing, as a component retrying hopeless work would."""
    def again() -> None:
        cluster.clock.call_later(seconds, again)
    cluster.clock.call_later(seconds, again)


def test_retries_alone_stop_after_the_quiet_window() -> None:
    cluster, _, detector = _cluster()
    _retry_every(cluster, 10.0)
    with pytest.raises(Idle):
        cluster.manager.run(30 * 86400.0, on_step=detector.step)
    assert cluster.clock.now == QUIET_WINDOW


def test_a_running_pod_keeps_the_run_going() -> None:
    cluster, _, detector = _cluster()
    cluster.api.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                        "status": {"allocatable": {"cpu": "1"}, "conditions": [{"type": "Ready", "status": "True"}]}},
                       skip_admission=True)
    cluster.api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                        "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "x"}]}})
    _retry_every(cluster, 10.0)
    horizon = 3 * QUIET_WINDOW
    cluster.manager.run(horizon, on_step=detector.step)  # no Idle: the pod runs (forever, no duration)
    assert cluster.clock.now == horizon


def test_a_pending_action_keeps_the_run_going() -> None:
    cluster, _, detector = _cluster()
    _retry_every(cluster, 10.0)
    detector.pending_user_timers = 1
    fired: list[float] = []

    def action() -> None:
        detector.user_timer_fired()
        fired.append(cluster.clock.now)
    cluster.clock.call_at(5 * QUIET_WINDOW, action)
    with pytest.raises(Idle):
        cluster.manager.run(30 * 86400.0, on_step=detector.step)
    assert fired == [5 * QUIET_WINDOW]
    assert cluster.clock.now == 6 * QUIET_WINDOW  # the quiet window counts from the last change or action
