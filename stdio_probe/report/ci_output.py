"""Output for CI: a JUnit XML file, and under GitHub Actions a job summary and error annotations.

JUnit has one testcase per subject (an SDK, a server or a host) and case. What fails:
  with --expect   a mismatch (or a stale entry, as a testcase of its own) is a failure; a run
                  that could not decide (error, inconclusive) and was not expected so is an error;
  without         the defect is the failure: reproduced fails, error and inconclusive are errors,
                  not_applicable is skipped, not_reproduced passes.
A host contract that did not hold or could not be evaluated is a failed testcase of its own,
"<case> host contract", with or without --expect. outcome.py's tables say which is which.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TextIO

from stdio_probe.core.outcome import CONTRACT, MEANING, UNMET, Unmet
from stdio_probe.report.expect import Problem
from stdio_probe.report.record import subject, subject_title, write_text_atomic
from stdio_probe.sdk.cases import CASES
from stdio_probe.server.checks import CHECKS


def junit(runs: list[dict], problems: list[Problem] | None) -> str:
    """The JUnit XML document; problems is None without --expect."""
    by_run = {id(p.run): p for p in problems or () if p.run is not None}
    root = ET.Element("testsuites", name="probe-stdio-lifecycle")
    suites: dict[str, ET.Element] = {}
    for run in runs:
        name = subject(run)
        if name not in suites:
            suites[name] = ET.SubElement(root, "testsuite", name=subject_title(run))
        case = ET.SubElement(
            suites[name], "testcase", classname=subject_title(run), name=_case_name(run["case"]), time=_time(run)
        )
        _outcome(case, run, by_run.get(id(run)), problems is not None)
        ET.SubElement(case, "system-out").text = _details(run)
        _contract_failure(suites[name], run)
    stale = [p for p in problems or () if p.kind is Unmet.STALE]
    if stale:
        suite = ET.SubElement(root, "testsuite", name="expectations")
        for problem in stale:
            case = ET.SubElement(suite, "testcase", classname="expectations", name=problem.line.split(":")[0])
            ET.SubElement(case, UNMET[problem.kind].junit, message=problem.line, type=problem.kind)
    for suite in root:
        _count(suite, suite)
    _count(root, root.iter("testcase"))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _case_name(case_id: str) -> str:
    probe = CASES.get(case_id) or CHECKS.get(case_id)
    return f"{case_id} {probe.title}" if probe else case_id


def _time(run: dict) -> str:
    return f"{max((arm.get('duration_s', 0) for arm in run['arms'].values()), default=0):.3f}"


def _outcome(case: ET.Element, run: dict, problem: Problem | None, expecting: bool) -> None:
    """The testcase's element: with --expect, its problem's (if any); without, its verdict's (outcome.MEANING)."""
    verdict, reason = run["verdict"], run["reason"]
    if expecting:
        if problem is not None:
            ET.SubElement(case, UNMET[problem.kind].junit, message=problem.line, type=problem.kind).text = reason
        return
    tag = MEANING[verdict].junit
    if tag == "skipped":
        ET.SubElement(case, tag, message=reason)
    elif tag is not None:
        ET.SubElement(case, tag, message=f"{verdict}: {run['headline']}", type=verdict).text = reason


def _contract_failure(suite: ET.Element, run: dict) -> None:
    """A host contract that did not hold, or could not be evaluated where the case applies: a failed
    testcase of its own beside the verdict's, so neither hides the other."""
    status = run["mitigation"]["status"]
    if not CONTRACT[status].fails:
        return
    name = f"{run['case']} host contract"
    case = ET.SubElement(suite, "testcase", classname=subject_title(run), name=name, time=_time(run))
    message = f"host contract {CONTRACT[status].words}: {run['mitigation']['note']}"
    ET.SubElement(case, "failure", message=message, type=f"host_contract_{status}").text = run["mitigation"]["note"]


def _details(run: dict) -> str:
    held = run["mitigation"]
    status = CONTRACT[held["status"]].markdown
    return f"verdict: {run['verdict']}\nreason: {run['reason']}\nhost contract: {status}: {held['note']}"


def _count(target: ET.Element, testcases) -> None:
    cases = [c for c in testcases if c.tag == "testcase"]
    target.set("tests", str(len(cases)))
    for tag, attribute in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        target.set(attribute, str(sum(1 for c in cases if c.find(tag) is not None)))


def write_junit(path: Path, runs: list[dict], problems: list[Problem] | None) -> None:
    write_text_atomic(path, junit(runs, problems))


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub-flavoured markdown table; cells lose newlines and escape their pipes."""

    def cell(text: str) -> str:
        return " ".join(text.split()).replace("|", "\\|")

    lines = [header, ["---"] * len(header), *rows]
    return "".join("| " + " | ".join(cell(c) for c in line) + " |\n" for line in lines)


def step_summary(runs: list[dict], problems: list[Problem] | None) -> str:
    """The job summary in markdown: a row per case for one subject, a matrix for several; then the gate."""
    subjects = {subject(run): subject_title(run) for run in runs}
    if len(subjects) == 1:
        heading = f"## stdio lifecycle probe: {next(iter(subjects.values()))}\n\n"
        rows = [
            [run["case"], f"{MEANING[run['verdict']].emoji} {run['verdict']}", run["headline"], _held(run)]
            for run in runs
        ]
        text = heading + markdown_table(["case", "verdict", "decisive evidence", "host contract"], rows)
    else:
        cases = list(dict.fromkeys(run["case"] for run in runs))
        cells = {(subject(run), run["case"]): run for run in runs}
        rows = [[title, *(_word(cells.get((name, c))) for c in cases)] for name, title in subjects.items()]
        legend = ", ".join(f"{m.emoji} {m.word} = {v}" for v, m in MEANING.items())
        text = "## stdio lifecycle probe: verdicts\n\n" + markdown_table(["subject", *cases], rows) + f"\n{legend}\n"
    if problems is None:
        return text
    if not problems:
        return text + f"\nEvery run meets the expectations ({len(runs)} runs).\n"
    return text + "\n### Expectations not met\n\n" + "".join(f"- {p.kind}: {p.line}\n" for p in problems)


def _word(run: dict | None) -> str:
    if run is None:
        return ""
    shown, meaning = CONTRACT[run["mitigation"]["status"]], MEANING[run["verdict"]]
    held = f" (host contract {shown.words})" if shown.fails else ""
    return f"{meaning.emoji} {meaning.word}{held}"


def _held(run: dict) -> str:
    return CONTRACT[run["mitigation"]["status"]].markdown


def append_step_summary(path: str, markdown: str, stream: TextIO) -> None:
    """Append to the job summary; a summary that cannot be written is a warning, the results stand."""
    try:
        with open(path, "a", encoding="utf-8") as out:
            out.write(markdown)
    except OSError as exc:
        print(f"::warning title=job summary not written::{exc}", file=stream, flush=True)


def annotation(problem: Problem) -> str:
    """A GitHub workflow command that shows the problem on the run's page, at its level (outcome.UNMET)."""
    message = problem.line.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    consequence = UNMET[problem.kind]
    return f"::{consequence.annotation} title={consequence.title}::{message}"


def publish_github(runs: list[dict], problems: list[Problem] | None, stream: TextIO) -> None:
    """Under GitHub Actions (GITHUB_ACTIONS=true): append the job summary, and annotate every problem."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        append_step_summary(summary_path, step_summary(runs, problems), stream)
    for problem in problems or ():
        print(annotation(problem), file=stream, flush=True)
