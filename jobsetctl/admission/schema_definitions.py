"""kubernetes-validate's ``_definitions.json`` of a release, each definition parsed when first asked for.

The file is 1.8 MB of JSON (862 definitions in 1.37) and a run needs few of them: the five Kueue kinds of a
TAS simulation reach 114 (14 % of the text). Parsing the whole file cost ~10 ms CPU in every ``validate`` and
``simulate``, and ~10 ms more for each other release a hint looks into (``schema_hints``).

How: kubernetes-validate writes the file as ``json.dump(..., indent=2)`` of ``{"$defs": {...}, "$schema": ...,
"$id": ...}``. In that layout a line that starts with two spaces and a quote is a top-level key, and one that
starts with exactly four spaces and a quote is a key of a top-level object (deeper keys and array items are
indented further, and a JSON string cannot hold a raw newline). One scan finds where each ``$defs`` value
starts, and ``JSONDecoder.raw_decode`` parses one value from there, exactly as the full parse would have.
A file in another layout (a future kubernetes-validate) is parsed whole, as before.
tests/admission/test_schema_definitions.py compares every definition of every release with the full parse.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

#: What the file starts with in the layout we index (``json.dump(indent=2)`` of a JSON object).
_HEAD: Final = '{\n  "'
#: A key at the top level (group 1 empty) or one level below (group 1 is two more spaces), in that layout.
_KEYS: Final = re.compile(r'\n  (  )?"')

_DECODER: Final = json.JSONDecoder()


class Definitions:
    """The ``$defs`` of one release's ``_definitions.json``, read like a dict: :meth:`get` parses a definition
    on its first request and keeps it (the same object every time, as a parsed dict would return)."""

    __slots__ = ("_offsets", "_parsed", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._parsed: dict[str, Any] = {}
        #: Where each definition's value starts in the text; None when the whole file had to be parsed.
        self._offsets: dict[str, int] | None = _index(text)
        if self._offsets is None:
            self._parsed = json.loads(text)["$defs"]
            self._text = ""

    @classmethod
    def read(cls, path: str) -> Definitions:
        with open(path, encoding="utf-8") as handle:
            return cls(handle.read())

    @property
    def lazy(self) -> bool:
        """Whether definitions are parsed one by one (the file has the expected layout)."""
        return self._offsets is not None

    def get(self, name: str) -> Any:
        """The definition called ``name`` (a dict, as parsed from JSON), or None."""
        parsed = self._parsed.get(name)
        if parsed is not None or self._offsets is None:
            return parsed
        start = self._offsets.get(name)
        if start is None:
            return None
        value, _ = _DECODER.raw_decode(self._text, start)
        self._parsed[name] = value
        return value

    def names(self) -> list[str]:
        """Every definition's name, in file order (for tests and tools; a run asks by name)."""
        return list(self._offsets if self._offsets is not None else self._parsed)


def _index(text: str) -> dict[str, int] | None:
    """Where each ``$defs`` value starts, or None when the text is not in the indexed layout."""
    if not text.startswith(_HEAD):
        return None
    offsets: dict[str, int] | None = None
    in_defs = False
    raw_decode = _DECODER.raw_decode
    try:
        for match in _KEYS.finditer(text):
            name, after = raw_decode(text, match.end() - 1)
            if not isinstance(name, str) or text[after:after + 2] != ": ":
                return None
            if match.group(1) is None:
                in_defs = name == "$defs"
                if in_defs:
                    offsets = {}  # a repeated "$defs": the full parse keeps the last one
            elif in_defs and offsets is not None:
                # A repeated definition: the full parse keeps the last value, and so does this.
                offsets[name] = after + 2
    except json.JSONDecodeError:
        return None
    return offsets
