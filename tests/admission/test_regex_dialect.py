"""RE2 (Go ``regexp``) patterns under Python's ``re``: where the dialects differ, we answer as Go does.

The reference for each row is Go's documented semantics (``regexp/syntax``: ``$`` without the ``m`` flag
is "at end of text", ``\\z`` likewise) and, where google-re2 is installed (it ships with cel-python),
RE2 itself: every row is checked against it too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jobsetctl.admission.regex_dialect import re2_to_python
from jobsetctl.validate import ValidateOptions, run

try:
    import re2
except ImportError:  # pragma: no cover - google-re2 ships with cel-python
    re2 = None

# (pattern, text, Go matches)
ROWS = [
    (r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "q", True),
    (r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "q\n", False),  # Python's bare ``$`` would accept this
    (r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "Q", False),
    (r"^(a|b)$|^c$", "c\n", False),
    (r"^(a|b)$|^c$", "b", True),
    (r"^a\$b$", "a$b", True),        # an escaped ``$`` stays a literal dollar
    (r"^[$]x$", "$x", True),          # ``$`` inside a class is a literal
    (r"^[]$]$", "]", True),           # a leading ``]`` is a member of the class, not its end
    (r"^[^]$]$", "a", True),
    (r"^[^]$]$", "$", False),
    (r"^a\z", "a\n", False),
    (r"^a\z", "a", True),
    (r"(?m)^a$", "a\nb", True),       # with ``m`` both engines match ``$`` at a line end
    (r"^\d+(\.\d+)?$", "1.5\n", False),
]


@pytest.mark.parametrize(("pattern", "text", "go_matches"), ROWS)
def test_translated_patterns_match_as_go_does(pattern: str, text: str, go_matches: bool) -> None:
    assert (re.search(re2_to_python(pattern), text) is not None) is go_matches
    if re2 is not None:
        assert (re2.search(pattern, text) is not None) is go_matches


def test_schema_pattern_rejects_a_trailing_newline(tmp_path: Path) -> None:
    """Through the real chain: a Workload whose ``spec.queueName`` ends in a newline fails the schema's
    ``pattern`` (the API server's message), where Python's ``$`` alone would have let it pass."""
    manifest = tmp_path / "wl.yaml"
    manifest.write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: ns}\n"
        'spec:\n  queueName: "q\\n"\n  podSets:\n  - name: main\n    count: 1\n    template:\n'
        "      spec:\n        containers: [{name: c, image: i}]\n")
    report = run(ValidateOptions(paths=[str(manifest)]))
    found = [(d.line, d.message) for d in report.diagnostics if "spec.queueName" in d.message]
    assert found and found[0][0] == 5 and "should match" in found[0][1], report.diagnostics
