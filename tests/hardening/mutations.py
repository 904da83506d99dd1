"""Hypothesis strategies that mutate real manifests, and the properties every ``validate`` run must keep.

Shared by the suite (tests/hardening/test_fuzz_validate.py, a fixed budget) and the long run
(bench/fuzz_validate.py). Seeds: every manifest under samples/ (read when the test runs: others add
samples all the time), the upstream examples in ../shared/upstream when present, and our own seeds.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from jobsetctl.diagnostics import Diagnostic
from jobsetctl.kube.featuregates import GATES, FeatureGates, parse_feature_gates
from jobsetctl.kube.versions import KubeVersion
from jobsetctl.rules import all_rules
from jobsetctl.validate import ValidateOptions, check
from tests.helpers import SAMPLES, UPSTREAM

SEEDS = Path(__file__).resolve().parent / "seeds"

Segment = str | int
FieldPath = tuple[Segment, ...]

#: apiVersion/kind pairs jobsetctl checks, plus versions some releases do not serve, to swap between.
KNOWN_TYPES: list[tuple[str, str]] = [
    ("jobset.x-k8s.io/v1alpha2", "JobSet"),
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
    ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"),
    ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"),
    ("batch/v1", "Job"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("scheduling.k8s.io/v1alpha1", "Workload"),
    ("scheduling.k8s.io/v1alpha2", "Workload"),
    ("scheduling.k8s.io/v1alpha2", "PodGroup"),
    ("scheduling.k8s.io/v1alpha2", "CompositePodGroup"),
    ("scheduling.k8s.io/v1beta1", "PodGroup"),
    ("v1", "ConfigMap"),
]


def seed_files() -> list[Path]:
    """Every manifest to start from: samples/ (as it is now), upstream examples if present, our seeds."""
    roots = [SAMPLES, SEEDS]
    if UPSTREAM.is_dir():
        roots += [UPSTREAM / "jobset" / "examples", UPSTREAM / "trainer" / "examples", UPSTREAM / "trainer" / "runtimes"]
    files: list[Path] = []
    for root in roots:
        if root.is_dir():
            files += sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file())
    return files


def seed_documents() -> list[dict[str, Any]]:
    """The mapping documents of every seed file (files PyYAML cannot read are skipped: invalid samples)."""
    documents: list[dict[str, Any]] = []
    for path in seed_files():
        try:
            loaded = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError):  # invalid samples on purpose
            continue
        documents += [d for d in loaded if isinstance(d, dict) and d]
    return documents


def field_paths(value: Any, prefix: FieldPath = ()) -> Iterator[FieldPath]:
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from field_paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from field_paths(child, (*prefix, index))


def _parent(obj: Any, path: FieldPath) -> Any:
    for seg in path[:-1]:
        obj = obj[seg]
    return obj


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.sampled_from([2**31, 2**63, -(2**31) - 1, 10**30]),
    st.floats(allow_nan=False, allow_infinity=False, width=32), st.text(max_size=20),
    st.sampled_from(["on", "no", "y", "012", "0x1F", "1e3", "2024-01-01", "~", "", "null", "true", "-", "*",
                     "a" * 64, "A_B", "a..b", "-a", "500m", "1Gi", "1.5", "${VAR}", "{{x}}", "\u00e9\u4e2d\U0001F600"]),
)
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(min_size=1, max_size=8), children, max_size=3),
    max_leaves=6,
)
_RESIZED = st.sampled_from(["huge-string", "huge-int", "negative", "zero", "empty-list", "empty-map", "long-list", "long-string-key"])


@st.composite
def mutated(draw: st.DrawFn, documents: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """A seed document and a mutated copy of it, with the list of mutations applied (for the failure report)."""
    seed = draw(st.sampled_from(documents))
    obj = copy.deepcopy(seed)
    applied: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in field_paths(obj) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = _parent(obj, path)
        last = path[-1]
        current = parent[last]
        operation = draw(st.sampled_from(
            ["drop", "duplicate", "retype", "resize", "rename", "insert", "retarget", "replace"]
        ))
        applied.append(f"{operation} {'.'.join(map(str, path))}")
        if operation == "drop":
            del parent[last]
        elif operation == "duplicate":
            if isinstance(current, list) and current:
                current.append(copy.deepcopy(current[draw(st.integers(0, len(current) - 1))]))
            elif isinstance(parent, list):
                parent.append(copy.deepcopy(current))
        elif operation == "retype":
            parent[last] = draw(st.sampled_from(["x", 7, True, None, [current], {"v": current}, [], {}, 1.5]))
        elif operation == "resize":
            kind = draw(_RESIZED)
            parent[last] = {
                "huge-string": "x" * 100_000, "huge-int": 2**80, "negative": -1, "zero": 0, "empty-list": [],
                "empty-map": {}, "long-list": [copy.deepcopy(current) for _ in range(300)],
                "long-string-key": {"k" * 5000: current},
            }[kind]
        elif operation == "rename" and isinstance(parent, dict):
            new_key = draw(st.sampled_from([str(last).upper(), f"{last}x", "", " ", f"{last} ", "\u00e9"]))
            parent[new_key] = parent.pop(last)
        elif operation == "insert":
            target = current if isinstance(current, dict) else parent if isinstance(parent, dict) else None
            if target is not None:
                target[draw(st.text(min_size=1, max_size=10))] = draw(values)
        elif operation == "retarget":
            api_version, kind = draw(st.sampled_from(KNOWN_TYPES))
            obj["apiVersion"], obj["kind"] = api_version, kind
        else:
            parent[last] = draw(values)
    return seed, obj, applied


@dataclass(frozen=True)
class Setting:
    version: KubeVersion
    gates: FeatureGates
    spec: dict[str, bool]
    as_json: bool


@st.composite
def settings_strategy(draw: st.DrawFn) -> Setting:
    version = draw(st.sampled_from(list(KubeVersion)))
    names = sorted(n for n, g in GATES.items() if version in g.defaults and not g.locked)
    chosen = draw(st.lists(st.sampled_from(names), max_size=4, unique=True)) if names else []
    spec = {name: draw(st.booleans()) for name in chosen}
    return Setting(version, parse_feature_gates(spec, version), spec, draw(st.booleans()))


def dump(obj: Any, as_json: bool) -> str:
    if as_json:
        return json.dumps(obj, ensure_ascii=False)
    return yaml.safe_dump(obj, sort_keys=False, allow_unicode=True, width=1 << 30)


def seed_texts() -> list[str]:
    """The seed files as written (comments, anchors, flow style and all), for mutations of the text itself."""
    texts: list[str] = []
    for path in seed_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if len(text) < 200_000:
            texts.append(text)
    return texts


_TEXT_NOISE = ["\t", ":", "- ", "[", "{", "}", "]", "&a ", "*a", "<<: ", "!!str ", "!!python/none ", "'", '"', "#",
               "---\n", "...\n", "? ", "|", ">", "%YAML 1.1\n", "\x85", "\u2028", "\ufeff", "\x00", "\U0001F600"]


@st.composite
def mutated_text(draw: st.DrawFn, texts: list[str]) -> str:
    """A seed file with its text damaged: truncated, lines dropped or doubled, indentation shifted, noise
    inserted. What a bad merge or a bad editor leaves behind."""
    text = draw(st.sampled_from(texts))
    for _ in range(draw(st.integers(1, 3))):
        lines = text.splitlines(keepends=True) or [""]
        index = draw(st.integers(0, len(lines) - 1))
        operation = draw(st.sampled_from(["truncate", "drop-line", "double-line", "indent", "dedent", "noise"]))
        if operation == "truncate":
            text = text[: draw(st.integers(0, len(text)))]
        elif operation == "drop-line":
            text = "".join(lines[:index] + lines[index + 1:])
        elif operation == "double-line":
            text = "".join(lines[: index + 1] + lines[index:])
        elif operation in ("indent", "dedent"):
            line = lines[index]
            lines[index] = ("  " + line) if operation == "indent" else line[min(2, len(line) - len(line.lstrip(" "))):]
            text = "".join(lines)
        else:
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.sampled_from(_TEXT_NOISE) | st.text(max_size=3)) + text[at:]
    return text


KNOWN_RULES = frozenset(rule.id for rule in all_rules())


def checked_diagnostics(paths: list[str], setting: Setting, old: str | None = None) -> list[Diagnostic]:
    """Run validate (the package function) and check the properties every outcome must have."""
    options = ValidateOptions(paths=paths, version=setting.version, gates=setting.gates, old=old, jobs=1)
    diagnostics = check(options).report.diagnostics
    for d in diagnostics:
        assert d.line >= 1 and d.column >= 1, d
        assert d.rule in KNOWN_RULES, d
        assert not d.rule.startswith("internal"), d
        assert d.message.strip(), d
    return diagnostics


def write_case(directory: str, name: str, text: str) -> str:
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path
