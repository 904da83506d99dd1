"""``jobsetctl fix``: validate the inputs, then repair what validate found with the fixes of the rules.

One code path: the findings are validate's own diagnostics (each carries the path it points at, see
:attr:`jobsetctl.diagnostics.Diagnostic.at`); a fix edits the round-trip document at that path. Nothing here
looks for problems.
"""

from __future__ import annotations

import copy
from collections import defaultdict

from jobsetctl.diagnostics import Diagnostic
from jobsetctl.fix.registry import FixTarget, Unfixable, get_fix
from jobsetctl.fix.rewrite import FileEditor, RewriteOutcome
from jobsetctl.fix.yamledit import EditError
from jobsetctl.kube.field import Path
from jobsetctl.loader.sources import STDIN_NAME, Source
from jobsetctl.validate import ValidateOptions, check


def run_fix(options: ValidateOptions, *, include_info: bool = False) -> RewriteOutcome:
    """Validate ``options.paths`` and apply the fixes of the findings; nothing is written here.

    Info-level findings (notes: a deprecated but working spelling, a hint) are fixed only with
    ``include_info``: ``fix`` must leave a valid manifest byte for byte unless the user asked for more
    (issue #15: every file "with no finding to fix" passes unchanged; a note is no problem to fix)."""
    report = check(options).report
    outcome = RewriteOutcome(looked_at=report.files)
    by_file: dict[str, list[Diagnostic]] = defaultdict(list)
    for diagnostic in report.diagnostics:
        if get_fix(diagnostic.rule) is None:
            if diagnostic.severity != "info":
                outcome.without_fix += 1
            continue
        if diagnostic.severity == "info" and not include_info:
            outcome.info_with_fix += 1
            continue
        by_file[diagnostic.file].append(diagnostic)
    for name, diagnostics in by_file.items():
        editor = FileEditor.open(Source(name, None if name == STDIN_NAME else name))
        outcome.files.append(editor)
        seen: set[tuple[int, Path, str]] = set()
        for diagnostic in diagnostics:
            index = editor.segment_index(diagnostic.line)
            key = (index, diagnostic.at, diagnostic.rule)
            if key in seen:
                continue  # one finding per place: the same cause reported for several child Jobs
            seen.add(key)
            _apply(editor, index, diagnostic)
    return outcome


def _apply(editor: FileEditor, index: int, diagnostic: Diagnostic) -> None:
    fixer = get_fix(diagnostic.rule)
    assert fixer is not None
    note = lambda message, fixed: editor.note(diagnostic.line, diagnostic.column, diagnostic.rule, message, fixed)  # noqa: E731
    try:
        document = editor.document(index)
    except Exception as exc:  # ruamel's parse errors: reported, nothing edited
        note(f"the document cannot be edited with comments kept: {str(exc).splitlines()[0]}", False)
        return
    if document is None or document.root is None:
        note("no document at this position", False)
        return
    at = diagnostic.at
    prefix: Path = ()
    if at[:1] == ("items",) and len(at) >= 2 and isinstance(at[1], int):
        prefix, at = at[:2], at[2:]
    saved = copy.deepcopy(document.root)  # a fix that gives up half-way leaves nothing behind
    target = FixTarget(document.root, prefix, at, diagnostic.message, diagnostic.rule)
    try:
        message = fixer.apply(target)
    except (Unfixable, EditError) as exc:
        document.root = saved
        note(str(exc), False)
        return
    document.changed = True
    note(message, True)
