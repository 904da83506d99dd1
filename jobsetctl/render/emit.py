"""Serialising rendered objects: a YAML stream, a ``v1`` ``List`` in JSON, or one file per object.

YAML goes through libyaml's C emitter (PyYAML ``CSafeDumper``) with the Python half tuned for our
data, which is plain JSON-shaped dicts, lists, strings, numbers, booleans and None:

* :meth:`_Dumper.represent_data` dispatches on the exact type instead of walking the MRO and keeping
  an alias table: no object appears twice in a tree we print (snapshots are copies), and anchors
  (``&id001``) in a manifest would only confuse;
* keys keep their order (the controllers write them in Go field order; no sorting);
* :meth:`_Dumper.resolve`, which libyaml calls back twice per scalar to decide whether it must be
  quoted, answers the second call at once and memoises the first: manifests repeat the same keys
  and values thousands of times;
* no line folding (``width``), so long commands stay on one line as kubectl prints them.

Output is deterministic: the same objects give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from jobsetctl.atomicio import atomic_write_text
from jobsetctl.status import UsageError

STR_TAG = "tag:yaml.org,2002:str"
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"
INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
BOOL_TAG = "tag:yaml.org,2002:bool"
NULL_TAG = "tag:yaml.org,2002:null"
#: libyaml folds plain scalars longer than the width; this effectively never happens.
NO_FOLDING = 1 << 30
#: Scalars longer than this are resolved without the cache (they rarely repeat).
CACHED_SCALAR_LENGTH = 128
#: File names stay well below the 255 bytes most file systems allow, with room for the hidden
#: temporary name (``.<name>.<8 random>.tmp``) they are written under first.
MAX_FILE_STEM = 200
_UNSAFE_IN_FILE_NAME = re.compile(r"[^A-Za-z0-9._-]")

#: What the safe resolver makes of a plain scalar (``int``, ``bool``, ``null``, ``str`` ...), by its text.
_resolved_plain: dict[str, str] = {}


class _Dumper(yaml.CSafeDumper):
    """``CSafeDumper`` with a fast representer for JSON-shaped data (see the module docstring)."""

    def represent_data(self, data: Any) -> Any:
        kind = type(data)
        if kind is str:
            return ScalarNode(STR_TAG, data)
        if kind is dict:
            return MappingNode(MAP_TAG, [(ScalarNode(STR_TAG, key) if type(key) is str else self.represent_data(key),
                                          self.represent_data(value)) for key, value in data.items()],
                               flow_style=False)
        if kind is list:
            return SequenceNode(SEQ_TAG, [self.represent_data(item) for item in data], flow_style=False)
        if kind is bool:
            return ScalarNode(BOOL_TAG, "true" if data else "false")
        if kind is int:
            return ScalarNode(INT_TAG, str(data))
        if data is None:
            return ScalarNode(NULL_TAG, "null")
        if isinstance(data, str):  # a str enum a controller wrote (StrEnum): the plain string
            return ScalarNode(STR_TAG, str(data))
        return super().represent_data(data)  # floats and anything unusual: PyYAML's own rules

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode:
            if not implicit[0]:
                # libyaml's second question ("the tag if quoted?"): always str for the safe resolver,
                # which has no path resolvers (``Resolver.resolve`` falls through to the default tag).
                return STR_TAG
            tag = _resolved_plain.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(value) <= CACHED_SCALAR_LENGTH:
                    _resolved_plain[value] = tag
            return tag
        return super().resolve(kind, value, implicit)

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_yaml(objects: Sequence[Any]) -> str:
    """A multi-document YAML stream (``---`` between documents), or "" for no objects."""
    if not objects:
        return ""
    text = yaml.dump_all(objects, Dumper=_Dumper, default_flow_style=False, sort_keys=False,
                         allow_unicode=True, width=NO_FOLDING, explicit_start=False)
    return str(text)


def dump_json(objects: Sequence[Any]) -> str:
    """A ``v1`` ``List`` (what ``kubectl get -o json`` prints for several objects)."""
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}, indent=2,
                      ensure_ascii=False) + "\n"


def dump(objects: Sequence[Any], output: str) -> str:
    return dump_json(objects) if output == "json" else dump_yaml(objects)


def file_name(index: int, width: int, obj: Any, extension: str) -> str:
    """``<index>-<kind>-<name>.<ext>``: the index keeps creation order in a directory listing and makes
    the name unique (namespaces may repeat names). A refused request has only a generateName; its file
    is ``…-<generateName>not-created``. Overlong names are cut and keep a short digest."""
    md = obj.get("metadata") if isinstance(obj, dict) else None
    md = md if isinstance(md, dict) else {}
    name = md.get("name")
    if not isinstance(name, str) or not name:
        name = f"{md.get('generateName') or 'unnamed-'}not-created"
    kind = str(obj.get("kind", "object")).lower() if isinstance(obj, dict) else "object"
    # Kinds and names of objects jobsetctl does not check can hold anything: a path separator, NUL,
    # control characters, multi-byte letters (which would make the 200 characters more than the 255
    # bytes a name may have). Only portable characters make it into the file name.
    stem = _UNSAFE_IN_FILE_NAME.sub("_", f"{index:0{width}d}-{kind}-{name}")
    if len(stem) > MAX_FILE_STEM:
        digest = hashlib.sha1(stem.encode()).hexdigest()[:10]
        stem = f"{stem[:MAX_FILE_STEM - 11]}-{digest}"
    return f"{stem}.{extension}"


def check_output_dir(path: str) -> None:
    """Usage errors before anything runs: the directory must be creatable or writable."""
    target = os.path.abspath(path)
    if os.path.exists(target):
        if not os.path.isdir(target):
            raise UsageError(f"--output-dir {path}: exists and is not a directory")
        if not os.access(target, os.W_OK):
            raise UsageError(f"--output-dir {path}: directory is not writable")
        return
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        raise UsageError(f"--output-dir {path}: parent directory {parent} does not exist")


def write_directory(path: str, objects: Sequence[Any], output: str) -> list[str]:
    """One file per object, each written atomically (a file is either complete or absent). Returns the
    paths, in creation order. Files of an earlier render with other names are left alone."""
    extension = "json" if output == "json" else "yaml"
    width = max(4, len(str(len(objects))))
    # Everything serialised first: a failure there leaves the directory as it was.
    files = [(os.path.join(path, file_name(index, width, obj, extension)),
              json.dumps(obj, indent=2, ensure_ascii=False) + "\n" if output == "json" else dump_yaml([obj]))
             for index, obj in enumerate(objects, start=1)]
    written: list[str] = []
    target = path
    try:
        os.makedirs(path, exist_ok=True)
        for target, text in files:
            atomic_write_text(target, text)
            written.append(target)
    except OSError as exc:
        # A write error has no file name of its own (a full disk, a file size limit): name the file.
        raise UsageError(f"--output-dir {path}: cannot write {exc.filename or target}: {exc.strerror or exc}; "
                         f"{len(written)} of {len(files)} files written") from None
    return written
