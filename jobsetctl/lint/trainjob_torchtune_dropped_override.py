"""``trainjob-torchtune-dropped-override``: runtime settings a ``[tune, run]`` TrainJob silently loses.

trainer.md §3.8.3 and §3.16 #9: when ``trainer.command`` is exactly ``[tune, run]``, the Torch plugin
rebuilds the node command as ``tune run [--rdzv_endpoint=…] <recipe> --config <config>`` followed only
by the runtime's *immutable* overrides (``output_dir``, ``tokenizer.path``,
``checkpointer.checkpoint_dir``, ``tokenizer.merges_file``). Every other ``key=value`` item of the
runtime's command, such as the dataset settings of the shipped torchtune runtimes
(``dataset=…``, ``dataset.source=parquet``, ``dataset.data_dir=…``), is dropped: the recipe then falls
back to its config's defaults. Items the TrainJob passes again in ``trainer.args`` are not reported.
"""

from __future__ import annotations

from collections.abc import Iterator

from jobsetctl.diagnostics import Finding, Layer, Severity
from jobsetctl.jobset import api
from jobsetctl.kinds.interface import AdmissionContext, Object
from jobsetctl.kube.field import Path, path_string
from jobsetctl.lint.support import TRAINJOB, lint_doc, plan_of, runtime_label, trainer_section
from jobsetctl.loader.objects import ObjectRecord
from jobsetctl.rules.registry import define
from jobsetctl.trainer import api as trainer_api

PASSING = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tune
spec:
  runtimeRef: {name: torchtune-llama3.2-1b}
  trainer:
    command: [tune, run]
    args:                           # the runtime's dataset settings, passed again
    - dataset=torchtune.datasets.instruct_dataset
    - dataset.source=parquet
    - dataset.data_dir=/workspace/dataset/data
"""

FAILING = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tune
spec:
  runtimeRef: {name: torchtune-llama3.2-1b}
  trainer:
    command: [tune, run]            # the runtime's dataset=... items are dropped
"""

RULE = define(
    "trainjob-torchtune-dropped-override", Layer.LINT, Severity.WARNING,
    "A [tune, run] TrainJob drops the runtime's non-immutable command overrides (e.g. dataset settings).",
    spec="trainer.md §3.8.3, §3.16 #9",
    doc=lint_doc(
        "Trainer rebuilds a torchtune command and keeps only the runtime's output, tokenizer and "
        "checkpointer settings. Other key=value items of the runtime command must be passed in "
        "trainer.args, or they are lost.",
        PASSING, FAILING,
    ),
)
KINDS = frozenset({TRAINJOB})


def _key(item: str) -> str:
    return item.split("=", 1)[0]


def _runtime_overrides(runtime: Object) -> list[str]:
    """``key=value`` items of the trainer job's node command in the runtime, in order."""
    from jobsetctl.trainer.expand.model import find_container, job_ancestor, pod_spec_of, strings, template_of

    out: list[str] = []
    for job in api.replicated_jobs(template_of(runtime)):
        if job_ancestor(job) != trainer_api.ANCESTOR_TRAINER:
            continue
        container = find_container(pod_spec_of(job), trainer_api.NODE)
        if container is None:
            continue
        out += [item for item in strings(container.get("command")) or [] if "=" in item and not item.startswith("-")]
    return out


def check(record: ObjectRecord, obj: Object, ctx: AdmissionContext) -> Iterator[Finding]:
    trainer = trainer_section(obj)
    if trainer is None or trainer.get("command") != list(trainer_api.TORCHTUNE_ENTRYPOINT):
        return
    plan = plan_of(obj, ctx)
    if plan is None:
        return
    passed = {_key(arg) for arg in api.as_list(trainer.get("args")) if isinstance(arg, str)}
    dropped = [
        item for item in _runtime_overrides(plan.runtime)
        if _key(item) not in trainer_api.TORCHTUNE_IMMUTABLE_CONFIGS and _key(item) not in passed
    ]
    if not dropped:
        return
    at: Path = ("spec", "trainer", "command")
    yield RULE.finding(
        f"with command [tune, run] Trainer rebuilds the torchtune command and keeps only the runtime's "
        f"{', '.join(sorted(trainer_api.TORCHTUNE_IMMUTABLE_CONFIGS))} settings: {', '.join(dropped)} from "
        f"{runtime_label(plan)} are dropped",
        path=path_string(at), at=at,
        hint="pass the settings you need in trainer.args",
    )
