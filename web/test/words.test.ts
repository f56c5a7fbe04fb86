import { describe, expect, it } from "vitest";
import { statusWords, tokens } from "../src/words.js";

describe("words", () => {
  it("reads counts with at most three significant digits", () => {
    expect([999, 1000, 1049, 12_500, 999_999, 1_250_000].map(tokens)).toEqual(["999", "1k", "1.05k", "12.5k", "1M", "1.25M"]);
  });
  it("reads statuses as words", () => {
    expect(statusWords("waiting_for_permission")).toBe("waiting for permission");
    expect(statusWords("some_new_state")).toBe("some new state");
  });
});
