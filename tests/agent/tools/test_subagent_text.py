"""What the subagent tools tell the model, from the daemon's response data (PROTOCOL §10.3, §11.2):
compact lines with ids, aliases and states, never a JSON dump."""

from __future__ import annotations

from shard.agent.tools import subagent_text as text


def test_a_steer_that_landed_and_one_that_did_not():
    """Covers: R10.3.39"""
    injected = {"status": "injected", "run_id": "run-1", "turn_id": "turn-9", "correlation_id": "c"}
    assert text.steered(injected) == "Delivered to run-1 in its running turn turn-9."
    conflict = text.steered({"status": "conflict", "run_id": "run-1", "correlation_id": "c"})
    assert conflict.startswith("Not delivered (conflict): the turn of run-1 ended before")


def test_a_timed_out_wait_says_the_runs_go_on_and_shows_errors_and_cut_final_texts():
    """Covers: R10.3.26, R10.3.30"""
    long = "x" * (text.MAX_FINAL_CHARS + 5)
    data = {
        "timed_out": True,
        "aggregate_state": "mixed",
        "runs": [
            {"job_id": "job-1", "run_id": "run-1", "index": 0, "name": "a", "alias": "a", "state": "active"},
            {
                "job_id": "job-1",
                "run_id": "run-2",
                "index": 1,
                "name": "b",
                "alias": "b-2",
                "definition_name": "reviewer",
                "state": "failed",
                "error": "the provider\nfailed",
            },
            {
                "job_id": "job-1",
                "run_id": "run-3",
                "index": 2,
                "name": "c",
                "state": "completed",
                "final_text": long,
            },
        ],
    }
    lines = text.waited(data).splitlines()
    assert lines[:4] == [
        "State: mixed (timed out waiting; the runs go on)",
        "- a (run-1): active",
        "- b-2 [reviewer] (run-2): failed — the provider failed",
        "- c (run-3): completed",
    ]
    assert lines[4] == "  final text:"
    assert lines[5] == "    " + "x" * text.MAX_FINAL_CHARS
    assert lines[6] == "    [5 more characters not shown]"


def test_stop_and_relaunch_results():
    """Covers: R10.3.60, R10.3.46"""
    stopped = {
        "cancelled": [{"run_id": "run-1", "agent_id": "agent-1", "state": "cancelled"}],
        "job_id": "job-1",
    }
    assert text.stopped(stopped) == "Stopped 1 run of job job-1:\n- run-1 (agent-1): cancelled"
    assert text.stopped({"cancelled": []}) == "Nothing to stop: no queued or active run."
    relaunched = {
        "job_id": "job-2",
        "run_id": "run-5",
        "agent_id": "agent-1",
        "alias": "scout",
        "state": "queued",
    }
    assert text.relaunched(relaunched).startswith("Relaunched scout (run-5) as job job-2: queued.")


def test_status_of_targets_lists_agents_and_without_targets_lists_jobs():
    """Covers: R10.3.48, R10.3.49"""
    run = {"job_id": "job-1", "run_id": "run-1", "index": 0, "name": "a", "alias": "a", "state": "completed"}
    agents = [
        {"agent_id": "agent-1", "alias": "a", "display_name": "reviewer · a", "run": run},
        {"agent_id": "agent-2"},
    ]
    assert text.status({"agents": agents}) == (
        "- reviewer · a (agent-1): run run-1 completed\n- agent-2: no run"
    )
    job = {
        "job_id": "job-1",
        "parent_agent_id": "agent-0",
        "strategy": "chain",
        "state": "running",
        "runs": [run],
        "chain_step": 1,
        "created_at": 1,
    }
    assert text.status({"agents": [], "jobs": [job]}) == (
        "1 job (newest first):\n- job-1 (chain, chain step 1): running\n  - a (run-1): completed"
    )
    assert text.status({"agents": [], "jobs": []}) == "No jobs."
