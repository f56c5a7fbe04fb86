// The recorded event streams (tests/fixtures/streams, made from a real daemon by
// scripts/record_streams.py) folded by this store: at each checkpoint the agent's state must be the
// one the file expects — the same files the Python SDK's fold is held to
// (tests/client/test_stream_fixtures.py), so the two clients cannot drift.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Store } from "../src/store/store";
import { agentView } from "../src/store/view";
import type { Event } from "../src/store/wire";

const STREAMS = join(__dirname, "..", "..", "tests", "fixtures", "streams");
const FILES = readdirSync(STREAMS).filter((f) => f.endsWith(".json")).sort();

interface Stream {
  description: string;
  agent_id: string;
  events: Event[];
  checkpoints: { after: number; expected: Record<string, unknown> }[];
}

function fold(stream: Stream, count: number): Store {
  const store = new Store();
  store.upsert({ agent_id: stream.agent_id, cwd: "/project", status: "idle" });
  for (const ev of stream.events.slice(0, count)) store.receive(ev);
  return store;
}

describe("recorded streams", () => {
  it("has every tricky case", () => {
    expect(FILES).toEqual(expect.arrayContaining(["first_response_wins.json", "queued_messages.json", "reconnect_replay.json", "stale_epoch.json", "turn_with_permission.json"]));
  });
  for (const file of FILES) {
    const stream: Stream = JSON.parse(readFileSync(join(STREAMS, file), "utf-8"));
    it(`${file}: ${stream.description}`, () => {
      expect(stream.checkpoints.length).toBeGreaterThan(0);
      for (const checkpoint of stream.checkpoints) {
        const agent = fold(stream, checkpoint.after).agent(stream.agent_id)!;
        expect({ after: checkpoint.after, ...agentView(agent) }).toEqual({ after: checkpoint.after, ...checkpoint.expected });
      }
    });
  }
});
