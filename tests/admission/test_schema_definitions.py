"""kubernetes-validate's definitions parsed one by one (:mod:`jobsetctl.admission.schema_definitions`) are exactly
the full parse: every definition of every release, the layouts that must fall back to a full parse, generated
files (hypothesis), and the compiled schema trees built from either."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobsetctl.admission.schema_definitions import Definitions
from jobsetctl.kube.versions import KubeVersion, schema_dir

REPO = Path(__file__).resolve().parents[2]
ABSENT = ("io.k8s.api.core.v1.NoSuchThing", "io.k8s.api.core.v1", "", "$schema", "$id", "$defs")


def _text(version: KubeVersion) -> str:
    return Path(schema_dir(version), "_definitions.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("version", list(KubeVersion))
def test_every_definition_of_every_release_equals_the_full_parse(version: KubeVersion) -> None:
    text = _text(version)
    full = json.loads(text)["$defs"]
    lazy = Definitions(text)
    assert lazy.lazy  # the shipped files are in the indexed layout (else the saving is gone: look at the file)
    assert lazy.names() == list(full)
    for name, value in full.items():
        got = lazy.get(name)
        assert got == value, name
        assert json.dumps(got) == json.dumps(value), name  # same key order and number types
        assert lazy.get(name) is got  # parsed once, then the same object (as a parsed dict returns)
    for name in ABSENT:
        assert lazy.get(name) is None


def _file(defs: dict[str, Any], before: dict[str, Any], after: dict[str, Any], indent: int | None) -> str:
    return json.dumps({**before, "$defs": defs, **after}, indent=indent)


_json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
#: Names and strings with the characters that could confuse a text scan: quotes, backslashes, newlines and
#: the very marker the index looks for.
_tricky_text = st.text(max_size=10) | st.sampled_from(['\n    "', '"', "\\", '": ', "$defs", "\n  }"])


@given(
    defs=st.dictionaries(_tricky_text, _json_values, max_size=6),
    before=st.dictionaries(_tricky_text.filter(lambda k: k != "$defs"), _json_values, max_size=2),
    after=st.dictionaries(_tricky_text.filter(lambda k: k != "$defs"), _json_values, max_size=2),
    indent=st.sampled_from([2, 2, 2, None, 4, 1]),
)
def test_generated_files_read_as_the_full_parse(defs: dict[str, Any], before: dict[str, Any],
                                                after: dict[str, Any], indent: int | None) -> None:
    text = _file(defs, before, after, indent)
    full = json.loads(text)["$defs"]
    lazy = Definitions(text)
    if indent != 2:
        assert not lazy.lazy  # another layout: parsed whole
    assert lazy.names() == list(full)
    for name in [*full, *ABSENT]:
        assert json.dumps(lazy.get(name)) == json.dumps(full.get(name))


def test_repeated_keys_keep_the_last_value_as_json_does() -> None:
    text = '{\n  "$defs": {\n    "a": {\n      "x": 1\n    },\n    "a": {\n      "x": 2\n    }\n  }\n}'
    lazy = Definitions(text)
    assert lazy.lazy and lazy.get("a") == json.loads(text)["$defs"]["a"] == {"x": 2}
    text = '{\n  "$defs": {\n    "a": 1\n  },\n  "$defs": {\n    "b": 2\n  }\n}'
    lazy = Definitions(text)
    assert lazy.get("a") is None and lazy.get("b") == 2 and lazy.names() == ["b"]


def test_members_of_other_top_level_objects_are_not_definitions() -> None:
    """kubernetes-validate's file has ``$schema`` and ``$id`` after ``$defs``; an object there has keys at the
    same indentation as definitions."""
    text = _file({"a": {"b": 1}}, {"first": {"c": 2}}, {"$schema": "s", "last": {"d": 3}}, indent=2)
    lazy = Definitions(text)
    assert lazy.lazy and lazy.names() == ["a"]
    assert lazy.get("c") is None and lazy.get("d") is None and lazy.get("a") == {"b": 1}


def test_a_file_without_defs_fails_as_the_full_parse_did() -> None:
    with pytest.raises(KeyError):
        Definitions('{\n  "other": {\n    "a": 1\n  }\n}')


# --- the compiled trees, from the lazy definitions and from the full parse ------------------------------

_AUTHORED = sorted(p.stem for p in (REPO / "jobsetctl" / "schemas").glob("*.json") if not p.stem.startswith("_"))
_BUILTIN = (
    "io.k8s.api.core.v1.Pod",
    "io.k8s.api.core.v1.Node",
    "io.k8s.api.core.v1.Namespace",
    "io.k8s.api.batch.v1.Job",
    "io.k8s.api.core.v1.PersistentVolumeClaim",
    "io.k8s.api.scheduling.v1.PriorityClass",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
)

#: Prints every compiled tree (all our schemas, several built-in kinds, PodSpec embedded, three releases) in a
#: canonical form: nodes numbered in walk order, every field of every node. With ``full`` the definitions come
#: from one json.load of the whole file, as before the lazy reading: the reference.
_DUMP = textwrap.dedent("""
    import json, sys
    from jobsetctl.admission import schema_compile
    from jobsetctl.admission.schema import authored_schema, builtin_schema, embedded_definition
    from jobsetctl.admission.schema_node import SchemaNode
    from jobsetctl.kube.versions import KubeVersion, schema_dir

    if sys.argv[1] == "full":
        def full(version, _cache={}):
            if version not in _cache:
                with open(f"{schema_dir(version)}/_definitions.json", encoding="utf-8") as handle:
                    _cache[version] = json.load(handle)["$defs"]
            return _cache[version]
        schema_compile.k8s_definitions = full

    def value(v, ids, queue):
        if isinstance(v, SchemaNode):
            if id(v) not in ids:
                ids[id(v)] = len(ids)
                queue.append(v)
            return f"#{ids[id(v)]}"
        if isinstance(v, dict):
            return {k: value(x, ids, queue) for k, x in v.items()}
        if isinstance(v, (tuple, list)):
            return [value(x, ids, queue) for x in v]
        if isinstance(v, frozenset):
            return sorted(repr(x) for x in v)
        if hasattr(v, "pattern") and hasattr(v, "search"):
            return ("re", v.pattern, v.flags)
        return repr(v)

    def dump(root):
        ids, queue, out = {}, [], []
        value(root, ids, queue)
        while queue:
            node = queue.pop(0)
            out.append({name: value(getattr(node, name), ids, queue) for name in SchemaNode.__slots__})
        return out

    trees = {}
    for version in KubeVersion:
        for name in json.loads(sys.argv[2]):
            trees[f"{version.value} {name}"] = dump(authored_schema(name, version).root)
        for name in json.loads(sys.argv[3]):
            trees[f"{version.value} native {name}"] = dump(builtin_schema(name, version).root)
        trees[f"{version.value} embedded PodSpec"] = dump(embedded_definition("io.k8s.api.core.v1.PodSpec", version))
    print(json.dumps(trees, sort_keys=True))
""")


def _dump(mode: str) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-c", _DUMP, mode, json.dumps(_AUTHORED), json.dumps(_BUILTIN)],
        capture_output=True, text=True, cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    trees: dict[str, Any] = json.loads(result.stdout)
    return trees


def test_compiled_trees_from_lazy_definitions_equal_those_from_the_full_parse() -> None:
    lazy, full = _dump("lazy"), _dump("full")
    assert len(_AUTHORED) >= 17 and len(lazy) == 3 * (len(_AUTHORED) + len(_BUILTIN) + 1)
    assert sorted(lazy) == sorted(full)
    for key in full:
        assert lazy[key] == full[key], key
    # The comparison covers real trees: PodSpec alone has hundreds of nodes.
    assert len(full["1.37 embedded PodSpec"]) > 300
