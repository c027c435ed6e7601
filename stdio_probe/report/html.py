"""--html: a results document as one self-contained page: a grid per kind of subject, every cell opening its evidence.

The page loads nothing (no script, stylesheet, font or image from anywhere): it reads the same offline, from
file://, as on a server. A cell is a link to its run's panel, shown by CSS :target alone; the panel holds what
-v prints (report.arm_lines, not a second account of the evidence), each arm's outcome and how it was decided,
the probe's own description (its module's docstring: trigger, decision, host rule) and its subject. Every
string goes through escape: a server's stderr or label can hold markup. Nothing unbounded is inlined: a text
the record keeps whole (a stderr ring, a host's stdout tail) is cut again to spawn.STDERR_LIMIT, and the
records' bulk (samples, proofs, event lists) stays in results.json.
"""

from __future__ import annotations

import re
import sys
from html import escape

from stdio_probe.core.model import Probe, printable_all
from stdio_probe.core.outcome import CONTRACT, Outcome
from stdio_probe.core.spawn import STDERR_LIMIT
from stdio_probe.host.checks import HOST_CHECKS
from stdio_probe.report import record, report
from stdio_probe.report.compare import case_order
from stdio_probe.sdk.cases import CASES
from stdio_probe.server.checks import CHECKS

# each outcome's mark (the README tables' short forms) and the words of the legend
MARK = {
    Outcome.REPRODUCED: ("R", "reproduced: the bug arm shows the defect, the control does not"),
    Outcome.NOT_REPRODUCED: ("–", "not reproduced"),
    Outcome.INCONCLUSIVE: ("?", "inconclusive: no evidence, or the control shows the defect too"),
    Outcome.ERROR: ("ERR", "error: an arm could not run"),
    Outcome.NOT_APPLICABLE: ("n/a", "not applicable: the subject lacks what the probe needs"),
}
NOT_RUN = "not_run"  # a grid's cell with no run: the probe was not selected for that subject
KINDS = {  # a grid per kind of subject, in this order: its heading and its probes
    "sdk": ("SDK releases: cases", CASES),
    "server": ("Servers: checks", CHECKS),
    "host": ("Hosts: checks", HOST_CHECKS),
}
SHOWN = {True: "shows the defect", False: "does not show it", None: "no evidence"}

STYLE = """
:root { font: 15px/1.45 system-ui, sans-serif; color: #1a1a1a; background: #fafafa; }
body { margin: 0 1.5rem 3rem; }
h1 { font-size: 1.5rem; margin: 1rem 0 .25rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 .5rem; }
code, pre { font: .85rem/1.4 ui-monospace, monospace; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f0f0f0; padding: .5rem; margin: .25rem 0; }
.facts { color: #444; margin: 0; }
.legend { display: flex; flex-wrap: wrap; gap: .4rem 1rem; padding: 0; list-style: none; }
.legend li { display: flex; align-items: center; gap: .35rem; }
.legend .swatch { display: inline-block; min-width: 2.2rem; text-align: center; padding: 0 .2rem; border-radius: 3px; }
table.grid { border-collapse: separate; border-spacing: 2px; }
.grid th { background: #fafafa; font-weight: 600; }
.grid thead th { position: sticky; top: 0; z-index: 2; padding: .3rem .2rem; border-bottom: 2px solid #999; }
.grid tbody th { position: sticky; left: 0; z-index: 1; text-align: left; padding: .1rem .6rem .1rem 0; }
.grid tbody th small { display: block; font-weight: 400; color: #555; }
.grid td { padding: 0; text-align: center; min-width: 2.6rem; border-radius: 3px; }
.grid td a { display: block; padding: .35rem .2rem; color: inherit; text-decoration: none; font-weight: 600; }
.grid td a:hover, .grid td a:focus { outline: 3px solid #0072b2; outline-offset: -1px; }
.o-reproduced { background: #d55e00; color: #fff; }
.o-not_reproduced { background: #c9ebdf; color: #0b4d3a; }
.o-inconclusive { background: #f0e442; color: #1a1a1a; }
.o-error { background: #cc79a7; color: #1a1a1a; }
.o-not_applicable { background: #e6e6e6; color: #555; }
.o-not_run { background: repeating-linear-gradient(45deg, #fff 0 4px, #e8e8e8 4px 6px); color: #888; }
.verdict { padding: .1rem .5rem; border-radius: 3px; font-weight: 600; }
.evidence { display: none; }
.evidence:target { display: block; position: fixed; z-index: 5; top: 1rem; bottom: 1rem; right: 1rem;
  width: min(62rem, calc(100vw - 2rem)); overflow: auto; background: #fff; border: 1px solid #888;
  box-shadow: 0 4px 24px rgba(0, 0, 0, .3); padding: 0 1.25rem 1rem; box-sizing: border-box; }
.evidence .close { float: right; margin-top: 1rem; }
.evidence dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem .8rem; }
.evidence dt { font-weight: 600; }
.evidence dd { margin: 0; overflow-wrap: anywhere; }
.evidence table { border-collapse: collapse; }
.evidence td, .evidence th { border: 1px solid #ccc; padding: .2rem .5rem; text-align: left; vertical-align: top; }
@media print { .evidence { display: block; position: static; box-shadow: none; } }
"""


def page(document: dict) -> str:
    """The page of a results document (as record.read gives it): the run's facts, the legend, a grid per kind
    of subject it holds, and a panel per run."""
    document = printable_all(document)
    meta, runs = document["metadata"], document["runs"]
    ids = {id(run): f"run-{n}" for n, run in enumerate(runs)}  # unique by construction: a run's place
    grids = [_grid(kind, held, ids, meta) for kind in KINDS if (held := [run for run in runs if kind in run])]
    panels = [_panel(run, ids[id(run)], meta) for run in runs]
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<title>stdio lifecycle probe: results</title>\n"
        f"<style>{STYLE}</style>\n</head>\n<body id=\"top\">\n"
        f"<h1>stdio lifecycle probe: results</h1>\n{_facts(meta)}\n{_legend()}\n"
        + ("\n".join(grids) or "<p>No runs.</p>")
        + "\n"
        + "\n".join(panels)
        + "\n</body>\n</html>\n"
    )


def _facts(meta: dict) -> str:
    """The run's date, versions and machine, as the metadata holds them (a merged file: each shard's date)."""
    lines = [
        f"probe {meta.get('probe_version', '?')} · started {meta.get('started', '?')}, finished "
        f"{meta.get('finished', '?')} · method {meta.get('method', '?')}, window {meta.get('window_s', '?')} s",
        f"{meta.get('platform', '?')} ({meta.get('machine', '?')}, {meta.get('cpu_count', '?')} CPUs) · Python "
        f"{meta.get('probe_python', '?')} · pipe capacity {meta.get('pipe_capacity', '?')} bytes · processes left "
        f"over {meta.get('leftover_processes', '?')}",
    ]
    shards = meta.get("shards", [])
    if shards:
        started = sorted(shard.get("started", "?") for shard in shards)
        versions = ", ".join(sorted({str(shard.get("probe_version", "?")) for shard in shards}))
        lines.append(f"merged from {len(shards)} runs started {started[0]} to {started[-1]} (probe {versions})")
    command = " ".join(meta.get("argv", []))
    facts = "".join(f"<p class=\"facts\">{escape(line)}</p>" for line in lines)
    return facts + (f"<p class=\"facts\">command: <code>{escape(command)}</code></p>" if command else "")


def _legend() -> str:
    items = [(key, mark, words) for key, (mark, words) in MARK.items()] + [(NOT_RUN, "", "not run")]
    shown = "".join(
        f"<li><span class=\"swatch o-{key}\">{escape(mark) or '&nbsp;'}</span>{escape(words)}</li>"
        for key, mark, words in items
    )
    marks = "".join(
        f"<li><span class=\"swatch\"><b>{escape(status.mark)}</b></span>host contract {escape(status.words)}"
        " (SDK cases)</li>"
        for status in CONTRACT.values()
        if status.mark
    )
    return f"<ul class=\"legend\" aria-label=\"legend\">{shown}{marks}<li>a cell opens its evidence</li></ul>"


def _grid(kind: str, runs: list[dict], ids: dict[int, str], meta: dict) -> str:
    """One kind's grid: a row per subject (in the order first run), a column per probe the runs hold."""
    heading, probes = KINDS[kind]
    cases = sorted({run["case"] for run in runs}, key=case_order)
    rows: dict[str, dict[str, dict]] = {}
    for run in runs:
        rows.setdefault(record.subject(run), {}).setdefault(run["case"], run)
    head = "".join(
        f"<th scope=\"col\" title=\"{escape(probes[case].title if case in probes else case)}\">{escape(case)}</th>"
        for case in cases
    )
    body = []
    for cells in rows.values():
        first = next(iter(cells.values()))
        title = f"{escape(record.subject_title(first))}<small>{escape(_version(first, meta))}</small>"
        row = "".join(_cell(cells.get(case), ids) for case in cases)
        body.append(f"<tr><th scope=\"row\">{title}</th>{row}</tr>")
    return (
        f"<section class=\"kind-{kind}\"><h2>{escape(heading)} {escape(', '.join(cases))}</h2>\n"
        f"<table class=\"grid\"><thead><tr><th scope=\"col\">subject</th>{head}</tr></thead>\n"
        f"<tbody>\n" + "\n".join(body) + "\n</tbody></table></section>"
    )


def _cell(run: dict | None, ids: dict[int, str]) -> str:
    if run is None:
        return f"<td class=\"o-{NOT_RUN}\" title=\"not run\"></td>"
    verdict = run["verdict"]
    mark = MARK[verdict][0] + CONTRACT[run["mitigation"]["status"]].mark if "sdk" in run else MARK[verdict][0]
    tip = f"{run['case']} on {record.subject(run)}: {verdict}: {run.get('headline', '')}"
    return (
        f"<td class=\"o-{verdict}\"><a href=\"#{ids[id(run)]}\" title=\"{escape(tip)}\">{escape(mark)}</a></td>"
    )


def _version(run: dict, meta: dict) -> str:
    """What a row's subject was, in a few words: the SDK's release and interpreter, the package a server or host
    was installed from (the metadata of the README's tables holds it), else its command line."""
    if "sdk" in run:
        sdk = run["sdk"]
        named = [f"mcp {sdk['version']}"] if sdk.get("version") else []
        named += [f"commit {sdk['commit'][:12]}"] if sdk.get("commit") else []
        return ", ".join([*named, f"Python {sdk.get('python', '?')}", sdk["source"]])
    holder = "server" if "server" in run else "host"
    subject = run[holder]
    facts = meta.get(f"{holder}s", {}).get(subject["label"])
    if isinstance(facts, dict) and facts.get("package"):
        return " ".join(str(facts[key]) for key in ("package", "version") if facts.get(key))
    return subject["command"]


def _panel(run: dict, anchor: str, meta: dict) -> str:
    """A run's evidence: what -v prints, every arm's outcome and how it was decided, the probe's description."""
    probe = {**CASES, **CHECKS, **HOST_CHECKS}.get(run["case"])
    title = probe.title if probe else ""
    mark = MARK[run["verdict"]][0]
    lines = "".join(f"<dt>{escape(label)}</dt><dd>{escape(text)}</dd>" for label, text in report.arm_lines(run))
    about = _about(probe)
    rule = _host_rule(about)
    parts = [
        f"<section class=\"evidence\" id=\"{anchor}\" aria-label=\"{escape(run['case'])} evidence\">",
        "<a class=\"close\" href=\"#top\">close ×</a>",
        f"<h2>{escape(run['case'])}: {escape(title)}</h2>",
        f"<p><b>{escape(record.subject_title(run))}</b> ({escape(_version(run, meta))}): "
        f"<span class=\"verdict o-{escape(run['verdict'])}\">{escape(mark)} {escape(run['verdict'])}</span> "
        f"{escape(run.get('headline', ''))}</p>",
        f"<h3>What was observed</h3><dl>{lines}</dl>",
        f"<h3>Arms</h3>{_arms(run, probe)}",
    ]
    if rule:
        parts.append(f"<h3>Host rule</h3><p>{escape(rule)}</p>")
    if about:
        paragraphs = "".join(f"<p>{escape(paragraph)}</p>" for paragraph in about)
        parts.append(f"<details open><summary>The probe: trigger and decision</summary>{paragraphs}</details>")
    parts.append(f"<details><summary>Subject</summary>{_subject(run)}</details></section>")
    return "\n".join(parts)


def _arms(run: dict, probe: Probe | None) -> str:
    """A row per arm: its outcome, how and when it was decided, how its process ended, its time, and the tail of
    what the process wrote on stderr (and a host's on stdout) as the record keeps it, cut to STDERR_LIMIT."""
    rows = []
    for name, arm in run["arms"].items():
        ended = arm.get("host", arm)  # a host check's arm keeps the host's exit facts apart
        exit_facts = ", ".join(
            f"{key.replace('_', ' ')} {ended[key]}" for key in ("ended_by", "exit_code", "signal")
            if ended.get(key) is not None
        )
        texts = "".join(
            _text(label, text)
            for label, text in (("stderr", ended.get("stderr", "")), ("host stdout", arm.get("host_stdout", "")))
            if isinstance(text, str) and text
        )
        duration = f"{arm['duration_s']} s" if "duration_s" in arm else ""
        rows.append(
            f"<tr><th scope=\"row\">{escape(name)}</th><td>{escape(_arm_outcome(run, name, arm, probe))}</td>"
            f"<td>{escape(_decided(arm))}</td><td>{escape(exit_facts)}</td><td>{escape(duration)}</td>"
            f"<td>{texts}</td></tr>"
        )
    return (
        "<table><thead><tr><th>arm</th><th>outcome</th><th>decided by</th><th>ended</th><th>time</th>"
        "<th>output</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


def _text(label: str, text: str) -> str:
    """A process's output as the record keeps it, folded, and no longer than STDERR_LIMIT: its end, where the
    cause of an exit usually is."""
    kept = f"{len(text)} characters" + (f", the last {STDERR_LIMIT} shown" if len(text) > STDERR_LIMIT else "")
    return f"<details><summary>{escape(label)} ({kept})</summary><pre>{escape(text[-STDERR_LIMIT:])}</pre></details>"


def _arm_outcome(run: dict, name: str, arm: dict, probe: Probe | None) -> str:
    """What one arm came to: not applicable or an error (the record says why), the host contract's status on an
    SDK case's mitigated arm, else what the probe's pure assess reads in it (and a repeated arm's rate)."""
    if arm.get("not_applicable"):
        return f"not applicable: {arm['not_applicable']}"
    if arm.get("error"):
        return f"error: {arm['error']}"
    if name == "mitigated" and "sdk" in run:
        return f"host contract {CONTRACT[run['mitigation']['status']].words}"
    if probe is None:  # a probe this version does not know: its record is shown, not judged
        return ""
    try:
        shown = probe.assess(arm).shown
    except KeyError:  # a record of an older shape (schema 4, 5) that today's assess cannot read; the reason says
        return "as the reason says (a record of an older shape)"
    trials = arm.get("trials")
    rate = f" ({trials['shown']} of {trials['run']} trials)" if isinstance(trials, dict) else ""
    return SHOWN[shown] + rate


def _decided(arm: dict) -> str:
    """How the arm's record says its wait ended (decided_by: proof, window, exit...) and when, where it says."""
    stuck = arm.get("stuck") if isinstance(arm.get("stuck"), dict) else {}
    by = arm.get("decided_by") or stuck.get("decided_by")
    if not by:
        return ""
    moments = [
        f"{value} s after {match[1].replace('_', ' ')}"
        for key, value in arm.items()
        if (match := re.fullmatch(r"decided_after_(\w+)_s", key)) and value is not None
    ]
    if stuck.get("after_s") is not None:
        moments.append(f"{stuck['after_s']} s after {stuck.get('after_checkpoint') or 'the trigger'}")
    return ", ".join([str(by), *moments])


def _about(probe: Probe | None) -> list[str]:
    """The probe module's docstring in paragraphs, each on one line: its trigger, decision and host rule."""
    module = next((m for m in list(sys.modules.values()) if getattr(m, "PROBE", None) is probe), None)
    text = (module.__doc__ or "") if probe is not None and module is not None else ""
    return [" ".join(paragraph.split()) for paragraph in text.split("\n\n") if paragraph.strip()]


def _host_rule(about: list[str]) -> str:
    """The sentence of the probe's description that names the host rule answering its defect, if it has one."""
    found = re.search(r"\b[Hh]ost rule: (.+?\.)(?=\s|$)", " ".join(about))
    return found[1] if found else ""


def _subject(run: dict) -> str:
    """The subject as recorded, each fact on a line (a --large-call's arguments are already cut in the record)."""
    holder = next(key for key in record.SUBJECTS if key in run)
    facts = "".join(
        f"<dt>{escape(str(key))}</dt><dd>{escape(_flat(value))}</dd>" for key, value in run[holder].items()
    )
    return f"<dl>{facts}</dl>"


def _flat(value: object) -> str:
    """A fact on one line: a mapping as its scalar items (a package and its version), nothing nested deeper."""
    if isinstance(value, dict):
        return ", ".join(f"{key} {item}" for key, item in value.items() if not isinstance(item, dict | list))
    return str(value)
