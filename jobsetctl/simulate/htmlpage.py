"""``simulate --html FILE``: one self-contained page with what the terminal shows.

One heading (the page title), a line about the run (Kubernetes version, nodes, seed, where and why it
ended) in human units (``12h``, never ``43200s``), the chart (:mod:`.picture`, without its own
heading), the summary (totals and a row per workload), the workloads that never started with their
verdicts, and the notable events (:mod:`.eventlog`). No scripts and no external resources.
"""

from __future__ import annotations

from html import escape

from jobsetctl.kube.duration import format_duration
from jobsetctl.simulate.eventlog import log_lines
from jobsetctl.simulate.picture import render_svg
from jobsetctl.simulate.runner import SimulationResult
from jobsetctl.simulate.summary import Summary
from jobsetctl.simulate.timeline import Timeline

#: Events listed on the page (the JSON report has all of them).
MAX_EVENTS_LISTED = 2000
STOP_WORDS = {"until": "until", "done": "nothing left to happen", "idle": "only retries left",
              "horizon": "default horizon reached", "limit": "event limit reached"}
STYLE = (
    "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}"
    "h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}"
    "table{border-collapse:collapse;font-size:13px}td,th{padding:2px 8px;text-align:right;vertical-align:top}"
    "table.summary td:first-child,table.summary th:first-child,table.summary td:nth-child(2),"
    "table.summary th:nth-child(2){text-align:left}"
    "table.events td,table.events th{text-align:left}table.events td:first-child{text-align:right;"
    "white-space:nowrap}"
    "tr:nth-child(even){background:#f4f4f6}svg{max-width:100%;height:auto}"
    ".bad{color:#c0392b}.waiting,.warning{color:#a07000}.good{color:#2e9e5b}.news{color:#2d6fa5}"
    ".detail{color:#555}"
)


def _text(value: str) -> str:
    return escape(value, quote=True)


def _when(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    return format_duration(seconds) if seconds else "0s"


def run_line(result: SimulationResult) -> str:
    nodes = len(result.ledger.nodes)
    return (f"Kubernetes {result.version.value} · {nodes} node{'s' * (nodes != 1)} · seed {result.seed} · "
            f"end {_when(result.end_time)} ({STOP_WORDS.get(result.stop_reason, result.stop_reason)})")


def render_html(result: SimulationResult, timeline: Timeline, summary: Summary, title: str,
                axis_end: float | None = None) -> str:
    svg = render_svg(timeline, title, axis_end, heading=False)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{_text(title)}</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{_text(title)}</h1>",
        f'<p class="run">{_text(run_line(result))}</p>',
        svg.rstrip("\n"),
        *_summary(summary),
        *_events(result),
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


def _summary(summary: Summary) -> list[str]:
    used, allocatable = float(summary.gpu_used) / 3600, float(summary.gpu_allocatable) / 3600
    makespan = _when(summary.makespan) if summary.makespan is not None else "n/a"
    totals = (f"makespan {makespan} · GPU-hours used {used:.1f} of {allocatable:.1f} · "
              f"preemptions {summary.preemptions} · restarts {summary.restarts} · rejected {summary.rejected}")
    out = ["<h2>Summary</h2>", f'<p class="totals">{_text(totals)}</p>']
    if not summary.workloads:
        return out
    headers = ["workload", "state", "submitted", "time to admission", "queueing", "finished", "preemptions",
               "restarts", "GPU-hours"]
    out.append('<table class="summary">')
    out.append("<tr>" + "".join(f"<th>{_text(h)}</th>" for h in headers) + "</tr>")
    for stats in summary.workloads:
        kind, namespace, name = stats.key
        cells = [f"{kind} {namespace}/{name}", stats.state, _when(stats.submitted), _when(stats.time_to_admission),
                 _when(stats.queueing), _when(stats.finished), str(stats.preemptions), str(stats.restarts),
                 f"{float(stats.gpu_seconds) / 3600:.1f}"]
        out.append("<tr>" + "".join(f"<td>{_text(c)}</td>" for c in cells) + "</tr>")
    out.append("</table>")
    never = [stats for stats in summary.workloads if stats.verdict is not None]
    if never:
        out.append(f"<h2>Never started ({len(never)})</h2>")
        out.append('<ul class="never-started">')
        for stats in never:
            kind, namespace, name = stats.key
            out.append(f"<li><b>{_text(f'{kind} {namespace}/{name}')}</b>: {_text(stats.verdict.reason)}</li>")
        out.append("</ul>")
    return out


def _events(result: SimulationResult) -> list[str]:
    lines = log_lines(result)
    out = ["<h2>Events</h2>"]
    if not lines and not result.rejections:
        out.append("<p>Nothing notable: no rejections, preemptions or failures.</p>")
        return out
    out.append('<table class="events">')
    out.append("<tr><th>time</th><th>object</th><th>event</th><th>detail</th></tr>")
    for line in lines[:MAX_EVENTS_LISTED]:
        where = f" on {line.node}" if line.node else ""
        out.append(f"<tr><td>{_text(_when(line.time))}</td><td>{_text(line.subject)}</td>"
                   f'<td class="{line.tone}">{_text(line.word + where)}</td>'
                   f'<td class="detail">{_text(line.detail)}</td></tr>')
    out.append("</table>")
    if len(lines) > MAX_EVENTS_LISTED:
        out.append(f"<p>… {len(lines) - MAX_EVENTS_LISTED} more (see <code>-o json</code>)</p>")
    for diagnostic in result.rejections:
        out.append(f'<p class="bad">{_text(f"{diagnostic.file}:{diagnostic.line}:{diagnostic.column}: ")}'
                   f"{_text(f'{diagnostic.message} [{diagnostic.layer}/{diagnostic.rule}]')}</p>")
    return out
