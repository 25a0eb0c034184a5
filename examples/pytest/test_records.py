"""The product note's scenario in Python: the agent's records client is replaced by the world's
record-store/records.save operation, and the drill's verdict is the test's assertion."""

from __future__ import annotations

from pathlib import Path

import pytest

import agent
from dryfire_sdk import DrillContext, run_drills
from dryfire_sdk.testing import mock_tool
from records_client import StoreBusy

SUITE = Path(__file__).resolve().parent / "records.dryfire.yaml"
SAVE = {"packageId": "record-store", "operationId": "records.save"}


def save_record_mock(binding):
    """save_record(id, text) as the world's records.save, with the client's own BUSY exception."""
    return mock_tool(
        binding,
        mode="sync",
        operation=SAVE,
        input=lambda id, text: {"id": id, "text": text},
        idempotency_key=lambda id, text: f"save-{id}",
        error=lambda envelope: StoreBusy(envelope["message"]),
    )


def test_the_agent_saves_the_intended_record(monkeypatch: pytest.MonkeyPatch) -> None:
    def the_agent(d: DrillContext) -> str:
        monkeypatch.setattr(agent, "save_record", save_record_mock(d.binding))
        return agent.run_agent(d.task.instruction)

    result = run_drills(drill="save-record", suite=SUITE, agent=the_agent)
    assert result.verdict == "passed"
    assert result.output == "Saved record-1 (version 1)."


BUSY_ONCE = {
    "id": "busy-once",
    "operation": SAVE,
    "when": {"arguments": {"id": "record-1"}},
    "times": 1,
    "outcome": {"kind": "error", "code": "BUSY", "message": "Try again", "retryable": True},
}


@pytest.mark.dryfire_drill("save-record", suite=SUITE, setup={"scenario": {"toolOverrides": [BUSY_ONCE]}})
def test_a_busy_store_is_retried_with_the_same_key(dryfire_drill, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent, "save_record", save_record_mock(dryfire_drill.binding))
    result = dryfire_drill.end(agent.run_agent(dryfire_drill.task.instruction))
    assert result.verdict == "passed"
    # The first call met the override, the retry (same idempotency key) ran the store's behavior.
    assert [(e["outcome"], e["idempotency_key"]) for e in result.evidence] == [("error", "save-record-1"), ("behavior", "save-record-1")]
    assert result.evidence[0]["override"]["id"] == "busy-once"
