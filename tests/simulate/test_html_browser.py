"""The HTML page opened in a real browser (headless Chromium): it renders, has one title, its chart's
labels and marks do not overlap as the browser lays them out (real fonts), and the events are listed.

Skips cleanly when no Chromium is installed (CI may have none; on Debian: ``apt-get install chromium``).
A probe script is added to a copy of the page (the page itself has no scripts); it measures the rendered
elements and writes the result into the DOM, which ``--dump-dom`` prints.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from jobsetctl.cli.app import run
from tests.helpers import SAMPLES
from tests.simulate.harness import write_scenario
from tests.simulate.test_truthful_outputs import NEVER_FITS

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
BROWSER = next((found for name in BROWSERS if (found := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no headless Chromium on this machine")

PROBE = """
<script>
(function () {
  function box(el) { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }
  function clashes(items) {
    const out = [];
    for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) {
      const a = items[i][1], b = items[j][1];
      // Half a pixel of tolerance: anti-aliased edges of neighbours may touch.
      if (a[0] < b[2] - 0.5 && b[0] < a[2] - 0.5 && a[1] < b[3] - 0.5 && b[1] < a[3] - 0.5)
        out.push([items[i][0], items[j][0]]);
    }
    return out;
  }
  const svg = document.querySelector("svg");
  const texts = Array.from(svg.querySelectorAll("text")).filter(t => t.textContent.trim())
    .map(t => [t.textContent, box(t)]);
  const marks = Array.from(svg.querySelectorAll("polygon, circle, rect, path"))
    .filter(e => e.querySelector("title") && / at \\d/.test(e.querySelector("title").textContent))
    .map(e => [e.querySelector("title").textContent, box(e)]);
  const picture = box(svg);
  const outside = texts.concat(marks).filter(([, b]) =>
    b[0] < picture[0] - 0.5 || b[2] > picture[2] + 0.5 || b[1] < picture[1] - 0.5 || b[3] > picture[3] + 0.5)
    .map(([what]) => what);
  document.body.setAttribute("data-probe", JSON.stringify({
    title: document.title,
    headings: Array.from(document.querySelectorAll("h1")).map(h => h.textContent),
    pictureWidth: picture[2] - picture[0],
    labels: texts.length,
    textClashes: clashes(texts),
    marks: marks.length,
    markClashes: clashes(marks),
    outside: outside,
    events: Array.from(document.querySelectorAll("table.events tr")).slice(1).map(r => r.textContent),
    neverStarted: Array.from(document.querySelectorAll("ul.never-started li")).map(li => li.textContent),
  }));
})();
</script>
"""


def _probe(page: Path, tmp_path: Path) -> dict[str, Any]:
    probe = tmp_path / f"probe-{page.name}"
    probe.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    assert BROWSER is not None
    completed = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
         "--window-size=1280,900", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )
    match = re.search(r'data-probe="([^"]*)"', completed.stdout)
    assert match, (completed.returncode, completed.stderr[-2000:])
    value: dict[str, Any] = json.loads(html.unescape(match.group(1)))
    return value


def _page(tmp_path: Path, scenario: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    page = tmp_path / f"{scenario.stem}.html"
    assert run(["simulate", str(scenario), "--html", str(page)]) == 0
    capsys.readouterr()
    return page


def test_two_teams_page_renders_cleanly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _probe(_page(tmp_path, SAMPLES / "scenarios" / "two-teams.yaml", capsys), tmp_path)
    assert result["title"] == "jobsetctl simulate: two-teams"
    assert result["headings"] == ["jobsetctl simulate: two-teams"]
    assert result["pictureWidth"] > 600 and result["labels"] > 20
    assert result["textClashes"] == [] and result["markClashes"] == [] and result["outside"] == []
    # restart x4 (the JobSet and its 3 Jobs), pod failed x2, node failed, done x7, deleted
    assert result["marks"] == 15
    assert result["events"][0] == "1hNode gpu-3FailedNodeStatusUnknown: Kubelet stopped posting node status."
    assert len(result["events"]) == 18


def test_never_started_page_renders_the_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _probe(_page(tmp_path, write_scenario(tmp_path, NEVER_FITS, "never-fits.yaml"), capsys), tmp_path)
    assert result["textClashes"] == [] and result["markClashes"] == [] and result["outside"] == []
    assert result["neverStarted"] == [
        "JobSet default/llama3-70b-lora-exp-0042-trainer: gang 2/4 placeable: 2 pods Insufficient nvidia.com/gpu "
        "in rack-0 · never fits this cluster: the largest rack holds 16 GPUs, the gang needs 32 GPUs"]
