"""What L5 and L6 observe on the pinned SDK, beyond the verdict: the raw facts their notes are built from."""

from __future__ import annotations

from stdio_probe.sdk.cases.l5_strict_decoding import condition_facts
from stdio_probe.sdk.driver import checkpoint


def _l5(runs: dict, arm: str) -> dict:
    return condition_facts(runs["L5"]["arms"][arm])


def test_l5_bad_bytes_fail_only_when_stdout_ends(runs):
    """Pending while stdout stays open, an error once it ends. How the pending request was decided (the proof, or the
    window where load kept the proof from landing in time) is information, not asserted: the verdict is the same."""
    bug = _l5(runs, "bug")
    # pending: the driver was ended before it left the stay transport
    stuck = runs["L5"]["arms"]["bug"]["stuck"]
    assert runs["L5"]["verdict"] == "reproduced", (runs["L5"]["reason"], stuck)
    assert bug["stay"]["request"]["outcome"] == "pending" and bug["stay"]["context_exit"] is None, stuck
    for condition in ("close-stdout", "exit"):
        request = bug[condition]["request"]
        assert request["outcome"] == "error" and request["error"].startswith("MCPError")
        assert request["after_eof_s"] >= 0, "the error follows stdout EOF, not the bad bytes"
        leaves = bug[condition]["context_exit"]["leaves"]
        assert [leaf.split(":")[0] for leaf in leaves] == ["UnicodeDecodeError"]


def test_l5_control_and_mitigated_get_their_answer(runs):
    """Their answer, whenever it is read (how soon is load, not the defect), and no error leaving the transport."""
    for arm, name in (("control", "good-name"), ("mitigated", "bad-\ufffd-name")):
        for facts in _l5(runs, arm).values():
            assert facts["request"]["outcome"] == "result" and facts["request"]["tools"] == [name]
            assert facts["context_exit"]["error"] is None


def test_l6_outage_facts(runs):
    arms = runs["L6"]["arms"]
    bug, mitigated = (checkpoint(arms[a], "settled")["facts"] for a in ("bug", "mitigated"))
    assert bug["palette"] == ["keep", "old"] and bug["server_tools"] == ["keep", "new"] and bug["events"] == []
    assert mitigated["palette"] == mitigated["server_tools"] == ["keep", "new"]
    assert [f["dropped"] for f in mitigated["frames"] if f["subscription_id"] == mitigated["subscription_ids"][0]] == [
        True
    ]
    for arm in ("bug", "mitigated"):
        down = checkpoint(arms[arm], "down")
        assert not down["facts"]["server_alive"] and down["children"] == []
        assert down["facts"]["loss"]["end"].startswith("SubscriptionLost")


def test_l6_crash_loop_backoff_spawns_fewer(runs):
    record = runs["L6"]["arms"]["crash_loop"]
    naive, supervised = (checkpoint(record, f"crash_loop_{n}")["facts"] for n in ("naive", "supervisor"))
    assert not naive["connected"] and not supervised["connected"]
    assert naive["spawns"] == naive["attempts"] and supervised["spawns"] == supervised["attempts"]
    doubling, delays = [0.1, 0.2, 0.4, 0.8, 1.6], supervised["delays"]
    assert delays[:-1] == doubling[: len(delays) - 1]
    assert delays[-1] <= doubling[len(delays) - 1]  # the last one may be cut short by the interval's end
    assert supervised["spawns"] <= 5
    # a tight loop never spawns fewer; on a loaded machine each spawn of the dying server takes as long as the
    # backoff's first delays, so it may spawn as few (seen once in three CI runs)
    assert naive["spawns"] >= supervised["spawns"], "a tight loop respawns as fast as the server dies"


def test_bug_arms_record_the_sdk_defaults_they_ran_on(runs):
    """Read from the SDK inside its interpreter: L5's bug arm leaves encoding_error_handler at the default."""
    arms = runs["L5"]["arms"]
    bug, mitigated = (arms[a]["sdk_config"]["StdioServerParameters"] for a in ("bug", "mitigated"))
    assert "encoding_error_handler" not in bug["explicit"] and bug["defaults"]["encoding_error_handler"] == "'strict'"
    assert mitigated["explicit"]["encoding_error_handler"] == {
        "value": "'replace'",
        "sdk_default": "'strict'",
        "is_default": False,
    }
    client = runs["L6"]["arms"]["bug"]["sdk_config"]["Client"]
    assert "mode" not in client["explicit"] and client["defaults"]["mode"] == "'auto'"
    assert client["explicit"]["cache"]["is_default"] is False  # off on purpose: method.md, L6
