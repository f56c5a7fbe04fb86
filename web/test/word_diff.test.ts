import { describe, expect, it } from "vitest";
import { pairedSegments, wordSegments } from "../src/render/word_diff";

const changed = (segments: { text: string; changed: boolean }[]) => segments.filter((s) => s.changed).map((s) => s.text);

describe("word-level changes", () => {
  it("marks the words a changed line changed", () => {
    const pair = wordSegments("const answer = 41;", "const answer = 42;")!;
    expect(changed(pair.del)).toEqual(["41"]);
    expect(changed(pair.add)).toEqual(["42"]);
    expect(pair.add.map((s) => s.text).join("")).toBe("const answer = 42;");
  });
  it("leaves lines that share almost nothing whole", () => {
    expect(wordSegments("alpha beta gamma", "one two three four")).toBeNull();
    expect(wordSegments("same", "same")).toBeNull();
  });
  it("pairs the k-th removed line with the k-th added one", () => {
    const marks = pairedSegments([" ctx", "-let a = 1;", "-let b = 2;", "+let a = 10;", "+let b = 2; // two", "+let c = 3;"]);
    expect([...marks.keys()].sort()).toEqual([1, 2, 3, 4]);
    expect(changed(marks.get(3)!)).toEqual(["10"]);
    expect(changed(marks.get(4)!)).toEqual([" // two"]);
  });
  it("keeps markup in a line as text", () => {
    const pair = wordSegments('<b onclick="x">old</b>', '<b onclick="x">new</b>')!;
    expect(pair.add.map((s) => s.text).join("")).toBe('<b onclick="x">new</b>');
  });
});
