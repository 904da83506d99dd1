"""Go's ``regexp`` (RE2 syntax) patterns run with Python's ``re``: the spellings that differ.

Schema ``pattern`` checks (kube-openapi's validator calls Go's ``regexp``) and CEL ``matches`` without
google-re2 compile their patterns through :func:`re2_to_python`, so both agree with the API server.
"""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1024)
def re2_to_python(pattern: str) -> str:
    r"""The Python spelling of an RE2 pattern.

    - ``\z`` (end of text) is ``\Z`` in Python.
    - A bare ``$`` outside a character class: without the ``m`` flag RE2 matches it only at the end of
      the text, while Python's ``$`` also matches before a final newline, so ``^[a-z]+$`` would accept
      ``"q\n"`` (Go rejects it). It becomes ``\Z``. A pattern that sets flags inline (``(?m)``, ...)
      is left as it is: with ``m`` both engines agree on ``$``.
    """
    if "(?" in pattern and any(flag in pattern for flag in ("(?m", "(?i", "(?s", "(?U")):
        return pattern.replace(r"\z", r"\Z")
    out: list[str] = []
    in_class = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            escaped = pattern[index + 1]
            out.append(r"\Z" if escaped == "z" and not in_class else char + escaped)
            index += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            # A ']' right after '[' or '[^' is a literal member of the class, not its end.
            lookahead = index + 1
            if lookahead < len(pattern) and pattern[lookahead] == "^":
                lookahead += 1
            if lookahead < len(pattern) and pattern[lookahead] == "]":
                out.append(pattern[index:lookahead + 1])
                index = lookahead + 1
                continue
        elif char == "$":
            out.append(r"\Z")
            index += 1
            continue
        out.append(char)
        index += 1
    return "".join(out)
