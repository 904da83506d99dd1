"""``jobsetctl render``: everything the Trainer, JobSet and Job controllers (and the mutating admission
webhooks) would create for some manifests, byte for byte and deterministic.

* :mod:`.pipeline` — validate, ``--gang``, gates, the fake cluster run (:func:`render`);
* :mod:`.capture` — snapshots at creation, refused requests and the render-only annotations;
* :mod:`.stages` — ``--all-stages``: the pretend step that releases later stages;
* :mod:`.emit` — YAML stream, JSON ``List``, ``--output-dir``;
* :mod:`.summary` — the stderr summary (objects per kind, pods and requests per replicated job);
* :mod:`.command` — :func:`execute`, what the CLI calls.

The gang generator itself is :mod:`jobsetctl.gang`.
"""

from __future__ import annotations

from jobsetctl.render.command import execute
from jobsetctl.render.pipeline import Rendered, RenderOptions, RenderOutcome, render

__all__ = ["RenderOptions", "RenderOutcome", "Rendered", "execute", "render"]
