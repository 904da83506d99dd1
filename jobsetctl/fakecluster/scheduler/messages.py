"""Texts the scheduler writes, worded as kube-scheduler words them.

Confirmed against kubernetes/kubernetes (file index): ``FitError.Error()`` in
``pkg/scheduler/framework/types.go`` builds ``0/<N> nodes are available: <PreFilterMsg>.`` or, when
PreFilter passed, ``0/<N> nodes are available: <count> <reason>, ....`` where each histogram entry is
``"<count> <reason>"`` and the entries are sorted as *strings* (``sort.Strings``, so "10 x" sorts
before "8 y"); the PostFilter message is appended after a single space with no extra period. The
DefaultPreemption PostFilter prefixes its own FitError text with ``preemption: ``.
"""

from __future__ import annotations

from jobsetctl.fakecluster.scheduler.interface import Diagnosis

NO_NODE_AVAILABLE = "0/{} nodes are available"

# Filter reasons (plugin source files named in each plugin module).
NODE_UNSCHEDULABLE = "node(s) were unschedulable"
#: Since kubernetes#134740 (1.35; cherry-picked to 1.34 as #135023) pod statuses no longer name the taint;
#: before, the text was ``node(s) had untolerated taint {key: value}``.
UNTOLERATED_TAINT = "node(s) had untolerated taint(s)"
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
TOO_MANY_PODS = "Too many pods"
AFFINITY = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"

# DefaultPreemption (pkg/scheduler/framework/preemption, plugins/defaultpreemption).
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
PREEMPTION_PREFIX = "preemption: "


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"


#: ``ErrNoNodesAvailable``, what a pod is told when the cluster has no node at all.
NO_NODES = "no nodes available to schedule pods"


def fit_error(diagnosis: Diagnosis) -> str:
    if diagnosis.num_nodes == 0:
        return NO_NODES  # ``ErrNoNodesAvailable``: schedulingAlgorithm stops before any FitError
    message = NO_NODE_AVAILABLE.format(diagnosis.num_nodes) + ":"
    if diagnosis.prefilter_msg:
        message += f" {diagnosis.prefilter_msg}."
    else:
        histogram = sorted(f"{count} {reason}" for reason, count in diagnosis.reasons.items())
        if histogram:
            message += " " + ", ".join(histogram) + "."
    if diagnosis.postfilter_msg:
        message += f" {diagnosis.postfilter_msg}"
    return message


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String()`` for whole and fractional seconds (``5m0s``, ``1m30.5s``, ``0s``)."""
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    if seconds < 1:
        milli = seconds * 1000
        return f"{sign}{_trim(milli)}ms"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = ""
    if hours:
        text += f"{int(hours)}h"
    if hours or minutes:
        text += f"{int(minutes)}m"
    return f"{sign}{text}{_trim(secs)}s"


def _trim(value: float) -> str:
    rounded = round(value, 9)
    if rounded == int(rounded):
        return str(int(rounded))
    return f"{rounded:.9f}".rstrip("0").rstrip(".")
