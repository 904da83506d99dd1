"""Recognising Helm chart templates, which are Go templates that produce YAML, not YAML themselves.

Fed to a YAML parser, a template gives a syntax error (``{{- if .Values.x }}`` at the start of a line is a
flow mapping) or, worse, parses and then fails validation on ``name: "{{ .Release.Name }}"``. Neither
tells the user what to do: render the chart first.

A file is a Helm template when

* it lies in the ``templates/`` directory of a chart (a directory holding ``Chart.yaml``), or
* one of its actions names a Helm built-in object (``.Values``, ``.Release``, ``.Chart``, ...) or a
  function only Helm has (``include``, ``toYaml``, ``tpl``, ``required``, ``lookup``, ``nindent``), or
* it is no valid YAML and holds a template action ``{{ ... }}``.

Not Helm: GitHub expressions ``${{ ... }}``, and actions inside a valid manifest that name nothing of Helm's
(a container running ``kubectl get -o go-template='{{range .items}}...'``, an Argo Workflow's
``{{inputs.parameters.x}}``): those are data of the object, and the object is validated.
"""

from __future__ import annotations

import functools
import os
import re

#: The message of ``helm-template`` (issue #10's wording).
MESSAGE = "this looks like a Helm template: render it first (`helm template ... | jobsetctl validate -`)"

#: A Go template action; ``${{`` is a GitHub Actions expression. Bounded so that a stray ``{{`` cannot make
#: the search quadratic on a large file.
_ACTION = re.compile(r"(?<!\$)\{\{(.{0,2000}?)\}\}", re.DOTALL)
_HELM_ONLY = re.compile(
    r"\.(?:Values|Release|Chart|Capabilities|Files|Template)\b|\b(?:include|toYaml|tpl|required|lookup|nindent)\b"
)


def chart_template(path: str | None) -> bool:
    """Whether ``path`` lies under ``<chart>/templates/`` of a directory with a ``Chart.yaml``."""
    return path is not None and _in_chart_templates(os.path.dirname(os.path.abspath(path)))


@functools.lru_cache(maxsize=1024)
def _in_chart_templates(directory: str) -> bool:
    parent = os.path.dirname(directory)
    if parent == directory:
        return False
    if os.path.basename(directory) == "templates" and os.path.isfile(os.path.join(parent, "Chart.yaml")):
        return True
    return _in_chart_templates(parent)


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)


def helm_position(path: str | None, text: str) -> tuple[int, int] | None:
    """0-based position of the first Helm action when the file is a Helm template by its place or its
    actions alone (before parsing), else None."""
    if "{{" not in text and not chart_template(path):
        return None
    first: int | None = None
    for match in _ACTION.finditer(text):
        if first is None:
            first = match.start()
        if _HELM_ONLY.search(match.group(1)):
            return _line_column(text, match.start())
    if chart_template(path):
        return _line_column(text, first) if first is not None else (0, 0)
    return None


def template_action_position(text: str) -> tuple[int, int] | None:
    """0-based position of the first template action of any kind (for a file that is no valid YAML)."""
    match = _ACTION.search(text) if "{{" in text else None
    return _line_column(text, match.start()) if match else None
