"""results.json's schema versions: what each one added, and the step that reads a run of the version before
it as a run of this one.

record.read takes a file of any version through every step after its own, so every reader sees the current
shape and none patches an older one. A step never judges again (verdicts, reasons and arms are the file's),
and fills only what a reader keys on or the current schema requires: derived from what the file holds (the
reason cut as its headline, a host's use of servers from its recorded events), or saying that the file did
not record it (a mitigation note). A fact the older probe did not record, and that the schema lets be absent,
stays absent.

The history lives here, beside the steps, rather than in a docstring or a page of the docs: a bump adds a
version's entry and its step in one place (tests/unit/test_records.py checks that every version has an entry and
that files of the older versions read as the current one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from stdio_probe.core.model import shorten
from stdio_probe.core.outcome import Contract, Outcome


@dataclass(frozen=True)
class Version:
    """A schema version: what it added, and the step that makes a run of the version before into its shape
    (None: a run of the version before already has it, every addition being optional or new kinds of run)."""

    added: str
    step: Callable[[dict], None] | None = None


def _mitigation_unrecorded(run: dict) -> None:
    """A run of schema 1 had no mitigated arm: its mitigation says so (held null; status from schema 11's step)."""
    run.setdefault("mitigation", {"held": None, "note": "no mitigated arm: this file's probe had none (schema 1)"})


def _own_interpreter(run: dict) -> None:
    """Before 3 the probe ran the cases on its own interpreter's SDK only."""
    if "sdk" in run:
        run["sdk"].setdefault("source", "interpreter")


def _headline_from_reason(run: dict) -> None:
    """A run without a headline (before 5, and before 11 an SDK that could not be made ready) shows its reason
    cut to the summary's width, as the report always showed it."""
    run.setdefault("headline", shorten(run["reason"]))


ONLY_ERA = "only era"  # server.era.chosen_by of a file of schema 6 or 7: the probe spoke the legacy era alone


def _legacy_era(run: dict) -> None:
    """A server check of schema 6 or 7 spoke the legacy era (initialize) alone: no era was chosen or recorded."""
    if "server" in run:
        evidence = "schema 6-7: the probe's server checks spoke only the legacy era (initialize)"
        era = {"protocol": "legacy", "version": None, "chosen_by": ONLY_ERA, "evidence": evidence}
        run["server"].setdefault("era", era)


def _current_shape(run: dict) -> None:
    """Schema 11's required fields, where a run of 10 or before lacks them: the headline; the mitigation's
    status from held (a null held is not_evaluated unless the run did not apply: a not_applicable verdict, a
    server or a host check); a host's use of servers from its shared control arm's events, as the runner now
    finds it (hosts.session.server_shape)."""
    _headline_from_reason(run)
    held = run["mitigation"]
    if "status" not in held:
        if held["held"] is not None:
            held["status"] = Contract.HELD if held["held"] else Contract.NOT_HELD
        else:
            no_arm = run["verdict"] == Outcome.NOT_APPLICABLE or "server" in run or "host" in run
            held["status"] = Contract.NOT_APPLICABLE if no_arm else Contract.NOT_EVALUATED
    host = run.get("host")
    if host is not None and host.get("era") and "servers" not in host:
        from stdio_probe.host.session import server_shape  # only here: the host harness is no import of record's

        host["servers"] = server_shape(run["arms"]["control"]["events"])


VERSIONS = {
    1: Version("first contract: metadata, runs[] with case, sdk, verdict, reason, arms."),
    2: Version(
        "arms.mitigated (the bug's trigger with stdio_probe.core.host_contract applied) and runs[].mitigation "
        '{"held": bool|null, "note": str}; the verdict still comes from bug and control only.',
        _mitigation_unrecorded,
    ),
    3: Version(
        'runs across SDKs: sdk.source ("pypi", "path", "interpreter") required, sdk.env_tool and sdk.content_hash '
        "for SDK environments; an SDK that could not be made ready gives error runs whose sdk has spec and source "
        "only and whose arms are {}; an arm may carry not_applicable.",
        _own_interpreter,
    ),
    4: Version(
        'arms carry launch ("exec", or "fork_server" in the fast method) and, for a fixture exec\'d because its '
        "SDK's fork server died or stalled, fork_server_unavailable (why)."
    ),
    5: Version(
        "runs[].headline: the decisive evidence in a few words (the 80-column summary); a file merged from shards "
        "(--merge) has metadata.shards, the metadata of each shard. runs[].pairs (a case's second bug/control "
        "pair, e.g. L1 and L2 through the SDK's high-level server API: {name: {verdict, reason}}); arms carry "
        "sdk_config (what the arm set explicitly and the SDK's defaults, read from the SDK), fixture, and L1's "
        "proof_attempts.",
        _headline_from_reason,
    ),
    6: Version(
        "server checks (--server): runs whose case is S1-S6 carry server {label, command, large_call} in place of "
        "sdk (exactly one of the two), arms of the check's own names (S5: eof, sigterm), and arm facts command, "
        "stdout {bytes, lines, offending}, reaped_at_end; case ids L or S."
    ),
    7: Version(
        "sdk.exclude_newer and sdk.exclude_newer_basis (the environment's resolution cut-off: a release's upload "
        "time or a git tree's commit date), sdk.installed (what the environment was made with), sdk.commit (a git "
        "tree's HEAD); an error run without arms may carry sdk.commit; sdk.env_created_s (seconds the environment "
        "took to make; optional, added within 7)."
    ),
    8: Version(
        "server checks speak both protocol eras: server.era {protocol, version, chosen_by, evidence, probe} "
        "(legacy or 2026-07-28, found by server/discover or forced by --protocol); arms carry protocol and opening "
        "{method, answer, version}. server.env {names, inherit} (--env, --inherit-env; never the values; optional, "
        "added within 8).",
        _legacy_era,
    ),
    9: Version(
        "host checks (--host): runs whose case is H1-H10 carry host {label, command, era, env} in place of sdk or "
        "server (exactly one of the three); arms: bug, control (run once per host and shared by its checks), H4's "
        "wrapper; arm facts scenario, host (its exit facts), host_stdout, host_exited_by_itself, events (the "
        "scenario server's timeline), survivors, stuck (decided_by proof or window)."
    ),
    10: Version(
        "server checks S1-S11: S6 split into S6a (invalid JSON) and S6b (invalid UTF-8), so a server check's id "
        "may end in a letter (an S6 run of an older file stays S6: splitting its verdict would judge it again); "
        "S4's stdout.offending may carry why (the MCP schema's or the exchange's objection) and its arm schema "
        "{negotiated, judged_by}; metadata.argv keeps each argument's first ARG_CAP characters. "
        "Optional, added within 10: sdk.env_reused and sdk.env_created_at (a reused environment keeps its "
        "original build's time and seconds), runs[].mitigation.status, arms' contract_not_applicable; L11's fast "
        "arms' first_attempt {tool_s, outcome, why} (run again for the window); metadata.signals (how this kernel "
        "lets the probe signal only its own processes); server.slow_call {tool, arguments} (--slow-call, S13); "
        "H11, whose bug arm's stuck may carry idle_s (the idle window's count); host.servers (how the host used "
        "servers with the well-behaved one: one server, a server per operation, several at once) and H4's "
        "killed_t (a stuck host killed by the probe, its survivors then read)."
    ),
    11: Version(
        "required where 10 had them optional: runs[].headline (an SDK that could not be made ready now has one too), "
        "runs[].mitigation.status, and host.servers wherever host.era is set. server.era.chosen_by may be "
        '"only era" (a file of 6 or 7, read as 8 and later). A server check whose defect can hide in one run (S7, '
        "S8, S9) tries its trigger up to 21 times, until a trial shows it: its arms carry trials {run, shown} (trials "
        "run, of them showing the defect: \"k of N\"), the rest of the arm being the last trial's record (optional: "
        "a check run once has none). Every window of the server and host checks counts only time without progress "
        '(progress.Clock): a watch\'s decided_by may be "busy" (alive and still making progress at the outer bound), '
        "S1/S3/S8/S9 arms may carry busy_after_s (and again_busy_after_s), a host's stuck.decided_by \"busy\" and "
        "always idle_s, and host arms idle_stretches [[start, end], ...] (optional: older runs have none); H9's bug "
        "arm pause_stretches, the same from 0.1 s (optional: an older one is judged on its gaps between starts). A "
        "survivor "
        "(H2, H4, H10, S5, L9) may carry adopted: its parent is the probe, a child subreaper that took it in when "
        "its own parent died (optional: before, such an orphan went to init, parent 1). Optional, added within 11: "
        "trials.settled (why a trial that did not show the defect ended the trials: S8's server not killed by "
        "SIGPIPE, S9's SIGINT at its default action) and S9's sigint (caught, ignored or default, read before it); "
        "S11 and S14 repeat their arms as S9 (a crash on the way out is a race): their arms' trials, settled by the "
        "signal at its default action, or ignored and SIGKILL (S3's and S11's sigterm, read before it, as S9's "
        "sigint); "
        "S3's and S9's proven_after_s and again_proven_after_s (fast method: proven unable to exit by itself); "
        "S12's settled_by all_answered (every frame answered once the marker was); a client driver's arm that "
        "reached no checkpoint, its tree_at_error (each process of its tree, each thread's state and system call).",
        _current_shape,
    ),
}


def upgrade(document: dict) -> dict:
    """document (a results file of any version, as read) in the current version's shape, in place."""
    found = document["schema_version"]
    for version in range(found + 1, max(VERSIONS) + 1):
        step = VERSIONS[version].step
        if step is not None:
            for run in document["runs"]:
                step(run)
    document["schema_version"] = max(VERSIONS)
    return document
