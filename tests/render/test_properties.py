"""Properties of ``render``: deterministic (same input, same bytes), idempotent (rendering a rendered JobSet
gives the same Jobs), and the tuned YAML emitter writes exactly what PyYAML's own C dumper writes."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from jobsetctl.render.emit import NO_FOLDING, dump_yaml
from tests.render.support import render_cli

NAMES = ("driver", "workers", "eval", "ps")


@st.composite
def jobsets(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(1, 3))
    staging = draw(st.sampled_from(["none", "dependsOn", "InOrder"]))
    rjobs: list[dict[str, Any]] = []
    for index, name in enumerate(NAMES[:count]):
        job_spec: dict[str, Any] = {}
        # Indexed Jobs (the JobSet default) need completions once parallelism is set (the Job API
        # rejects the child Job otherwise, which render reports as an error; tested elsewhere).
        parallelism = draw(st.none() | st.integers(1, 3))
        completions = draw(st.integers(1, 3)) if parallelism is not None else draw(st.none() | st.integers(1, 3))
        if parallelism is not None:
            job_spec["parallelism"] = parallelism
        if completions is not None:
            job_spec["completions"] = completions
        pod_spec: dict[str, Any] = {"containers": [{
            "name": "main", "image": "busybox",
            "resources": draw(st.sampled_from([{}, {"requests": {"cpu": "500m"}}, {"limits": {"nvidia.com/gpu": "4"}}])),
        }]}
        job_spec["template"] = {"spec": pod_spec}
        rjob: dict[str, Any] = {"name": name, "replicas": draw(st.integers(1, 3)), "template": {"spec": job_spec}}
        if staging == "dependsOn" and index > 0:
            rjob["dependsOn"] = [{"name": NAMES[index - 1], "status": draw(st.sampled_from(["Ready", "Complete"]))}]
        rjobs.append(rjob)
    js: dict[str, Any] = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                          "metadata": {"name": "prop"}, "spec": {"replicatedJobs": rjobs}}
    if staging == "InOrder":
        js["spec"]["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    if draw(st.booleans()):
        js["metadata"]["annotations"] = {"alpha.jobset.sigs.k8s.io/exclusive-topology": "rack"}
    if draw(st.booleans()):
        js["spec"]["suspend"] = True
    return js


def _render(objects: list[dict[str, Any]], *flags: str) -> Any:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "input.yaml"
        path.write_text(yaml.safe_dump_all(objects, sort_keys=False), encoding="utf-8")
        return render_cli(str(path), *flags)


#: Each example renders twice through the whole pipeline; fewer examples keep the suite's time bounded.
RENDER_EXAMPLES = settings(max_examples=25)


@RENDER_EXAMPLES
@given(jobsets(), st.sampled_from([(), ("--pods",), ("--all-stages",), ("--pods", "--all-stages")]))
def test_rendering_is_deterministic(js: dict[str, Any], flags: tuple[str, ...]) -> None:
    first = _render([js], *flags)
    second = _render([js], *flags)
    assert first.exit == 0, first.stderr
    assert first.stdout == second.stdout
    assert first.stderr == second.stderr


@RENDER_EXAMPLES
@given(jobsets())
def test_rendering_a_rendered_jobset_yields_the_same_jobs(js: dict[str, Any]) -> None:
    first = _render([js])
    assert first.exit == 0, first.stderr
    objects = first.objects()
    rendered_jobset = objects[0]
    assert rendered_jobset["kind"] == "JobSet"
    second = _render([rendered_jobset])
    assert second.exit == 0, second.stderr
    assert [o for o in second.objects() if o["kind"] == "Job"] == [o for o in objects if o["kind"] == "Job"]
    assert second.objects()[0] == rendered_jobset  # admission defaults are a fixed point too


# --- the emitter ---------------------------------------------------------------------------------------

#: Strings YAML would read as something else unless quoted, and other awkward ones.
AWKWARD = st.sampled_from(["yes", "No", "on", "null", "~", "1e3", "0o17", "0x1F", "1_000", "12:30", ".5", "-",
                           "- a", "a: b", "#c", "'", '"', "", " lead", "trail ", "multi\nline", "tab\tbed", "ünï",
                           "2026-01-01T00:00:00Z", "=", "!tag", "&a", "*a", "%", "@", "`", "{", "[", "?"])
SCALARS = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=12) | AWKWARD
KEYS = st.text(min_size=1, max_size=10) | AWKWARD
TREES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
                     max_leaves=25)


@given(st.lists(st.dictionaries(KEYS, TREES, max_size=5), min_size=1, max_size=3))
def test_the_tuned_dumper_writes_what_pyyamls_c_dumper_writes(documents: list[dict[str, Any]]) -> None:
    ours = dump_yaml(documents)
    stock = yaml.dump_all(documents, Dumper=yaml.CSafeDumper, default_flow_style=False, sort_keys=False,
                          allow_unicode=True, width=NO_FOLDING)
    assert ours == stock
    assert list(yaml.safe_load_all(ours)) == documents


def test_shared_subtrees_are_written_out_not_anchored() -> None:
    shared = {"a": [1, 2]}
    text = dump_yaml([{"x": shared, "y": shared}])
    assert "&" not in text and "*" not in text
    assert yaml.safe_load(text) == {"x": {"a": [1, 2]}, "y": {"a": [1, 2]}}


def test_string_enums_are_written_as_plain_strings() -> None:
    from enum import StrEnum

    class Order(StrEnum):
        ANY = "AnyOrder"

    assert dump_yaml([{"startupPolicyOrder": Order.ANY}]) == "startupPolicyOrder: AnyOrder\n"
