"""A deliberate failure: this agent saves the wrong record, and the verdict says so.
(The SDK's tests run it and check the failure text; `pytest examples/pytest` leaves this folder out.)"""

from __future__ import annotations

from pathlib import Path

import agent
from dryfire_sdk import run_drills
from dryfire_sdk.testing import mock_tool

SUITE = Path(__file__).resolve().parents[1] / "records.dryfire.yaml"


def test_the_agent_saves_the_intended_record(monkeypatch) -> None:
    def the_agent(d):
        monkeypatch.setattr(agent, "save_record", mock_tool(
            d.binding, operation={"packageId": "record-store", "operationId": "records.save"},
            input=lambda id, text: {"id": id, "text": text}))
        return agent.run_agent(d.task.instruction.replace("record-1", "record-2"))

    result = run_drills(drill="save-record", suite=SUITE, agent=the_agent)
    assert result.verdict == "passed"
