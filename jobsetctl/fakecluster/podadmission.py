"""Admission of Pods in the fake API server (STUB: to be completed).

Pods are created only by controllers, from templates that admission already checked, so instead of the
structural schema they go through the plugins and webhooks that mutate or reject pods on create.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobsetctl.diagnostics import Finding
from jobsetctl.kinds.interface import Object

if TYPE_CHECKING:
    from jobsetctl.fakecluster.apiserver import APIServer


def admit_pod(api: APIServer, pod: Object) -> list[Finding]:
    return []
