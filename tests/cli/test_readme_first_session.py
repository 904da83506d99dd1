"""The README's "A first session" is what a new user types first: every command there runs as shown.

Each ``sh`` block holds one command ending in ``# exit N``; the ``text`` block after it lists lines its output
(stdout and stderr together) must contain, in that order, ``...`` standing for lines left out. The commands
run from the repository root, through the installed ``jobsetctl`` script, as a user's shell would run them.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SECTION_TITLE = "## A first session"
EXIT_COMMENT = re.compile(r"^(?P<command>.+?)\s+#\s*exit\s+(?P<status>\d+)\s*$")
FENCE = re.compile(r"```(?P<lang>\w+)\n(?P<body>.*?)```", re.S)


@dataclass(frozen=True)
class ShownCommand:
    argv: list[str]
    exit_status: int
    shown_lines: list[str]


def first_session_commands() -> list[ShownCommand]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index(SECTION_TITLE)
    end = readme.index("\n## ", start + len(SECTION_TITLE))
    commands: list[ShownCommand] = []
    for fence in FENCE.finditer(readme[start:end]):
        body = fence["body"]
        if fence["lang"] == "sh":
            lines = [line for line in body.splitlines() if line.strip()]
            assert len(lines) == 1, f"one command per sh block in {SECTION_TITLE!r}: {lines}"
            match = EXIT_COMMENT.match(lines[0])
            assert match, f"the command does not say its exit status (# exit N): {lines[0]!r}"
            commands.append(ShownCommand(shlex.split(match["command"]), int(match["status"]), []))
        elif fence["lang"] == "text":
            assert commands, "a text block before any command"
            commands[-1].shown_lines.extend(body.splitlines())
    return commands


COMMANDS = first_session_commands()


def test_the_section_shows_the_main_commands() -> None:
    shown = {command.argv[1] for command in COMMANDS}
    assert {"validate", "fix", "render", "simulate"} <= shown
    assert all(command.shown_lines for command in COMMANDS), "every command shows some of its output"


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c.argv[1:3]) for c in COMMANDS])
def test_the_command_prints_what_the_readme_shows(command: ShownCommand) -> None:
    script = Path(sys.executable).parent / command.argv[0]
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("COLUMNS", None)
    completed = subprocess.run([str(script), *command.argv[1:]], cwd=REPO, capture_output=True, text=True,
                               env=env, stdin=subprocess.DEVNULL, timeout=300)
    assert completed.returncode == command.exit_status, completed.stderr
    output_lines = (completed.stdout + "\n" + completed.stderr).splitlines()
    assert "Traceback" not in completed.stderr
    position = 0
    for shown in command.shown_lines:
        if shown.strip() == "...":
            continue
        found = next((i for i in range(position, len(output_lines)) if output_lines[i].rstrip() == shown.rstrip()),
                     None)
        assert found is not None, f"{shown!r} not printed (in this order) by {shlex.join(command.argv)}"
        position = found + 1
