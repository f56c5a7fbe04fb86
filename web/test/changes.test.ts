import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { changesOf } from "../src/store/changes";
import { Store } from "../src/store/store";

describe("changes", () => {
  it("lists each file the recorded turn wrote, with its diff", () => {
    const stream = JSON.parse(readFileSync(join(__dirname, "..", "..", "tests", "fixtures", "streams", "turn_with_permission.json"), "utf-8"));
    const store = new Store();
    store.upsert({ agent_id: stream.agent_id, cwd: "/p", status: "idle" });
    for (const ev of stream.events) store.receive(ev);
    const files = changesOf(store.agent(stream.agent_id)!);
    expect(files.map((f) => [f.path, f.added, f.removed, f.edits.length, f.edits[0].tool])).toEqual([["todo.txt", 1, 0, 1, "write"]]);
    expect(files[0].edits[0].hunks[0].lines).toEqual(["+milk"]);
  });
  it("keeps a file's edits in order and counts them all", () => {
    const store = new Store();
    store.upsert({ agent_id: "a", cwd: "/p", status: "idle" });
    const diff = (lines: string[]) => ({ kind: "diff", path: "a.py", hunks: [{ old_start: 1, old_lines: 1, new_start: 1, new_lines: 1, lines }] });
    const call = (id: string, lines: string[]) => ({ type: "tool_call", id, name: "edit", args: {}, render: diff(lines) });
    store.receive({ type: "sync", agent_id: "a", status: "idle", live_window: { messages: [
      { id: "m1", role: "assistant", content: [call("t1", ["-x", "+y"]), call("t2", ["+z"]), { type: "tool_call", id: "t3", name: "bash", args: {} }] },
    ] } });
    const [file] = changesOf(store.agent("a")!);
    expect([file.path, file.added, file.removed, file.edits.map((e) => e.toolCallId)]).toEqual(["a.py", 2, 1, ["t1", "t2"]]);
  });
});
