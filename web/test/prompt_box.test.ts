// The prompt box's rules (src/prompt_box.ts): the slash commands hinted and run, and ArrowUp /
// ArrowDown through the agent's earlier messages.
import { describe, expect, it } from "vitest";
import { isSlashCommand, recall, slashHints } from "../src/prompt_box";

describe("slash commands", () => {
  it("hints the commands a one-line box starting with / matches", () => {
    expect(slashHints("/mo").map(([name]) => name)).toEqual(["/model", "/mode"]);
    expect(slashHints("/model openai/gpt").map(([name]) => name)).toEqual(["/model"]);
    expect(slashHints("/").length).toBe(5);
    expect(slashHints("/compact\nmore")).toEqual([]);
    expect(slashHints("hello /compact")).toEqual([]);
  });

  it("runs only a known command; other text starting with / is sent as typed", () => {
    expect(isSlashCommand("/compact")).toBe(true);
    expect(isSlashCommand("/model openai/gpt")).toBe(true);
    expect(isSlashCommand("/models")).toBe(false);
    expect(isSlashCommand("/etc/hosts is broken")).toBe(false);
  });
});

describe("history", () => {
  const mine = ["first", "second", "third"];
  const start = { back: 0, typed: "" };

  it("goes back from an empty box, newest first, and forward again to the box as it was", () => {
    const one = recall(start, 1, "", true, mine)!;
    expect(one.value).toBe("third");
    const two = recall(one.at, 1, one.value, true, mine)!;
    expect(two.value).toBe("second");
    const back = recall(two.at, -1, two.value, true, mine)!;
    expect(back.value).toBe("third");
    const home = recall(back.at, -1, back.value, true, mine)!;
    expect(home).toEqual({ at: { back: 0, typed: "" }, value: "" });
  });

  it("leaves the keys to the textarea over typed text, past the oldest, and mid-text while recalling", () => {
    expect(recall(start, 1, "typed", true, mine)).toBeNull(); // never replaces what is typed
    expect(recall(start, -1, "", true, mine)).toBeNull();
    expect(recall({ back: 3, typed: "" }, 1, "first", true, mine)).toBeNull();
    expect(recall({ back: 1, typed: "" }, 1, "third", false, mine)).toBeNull(); // the caret moves in the text
  });
});
