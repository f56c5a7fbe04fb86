import { describe, expect, it } from "vitest";
import { FileTree, childPath, languageOf, parentPath, sizeText } from "../src/store/files";

const listing = (...entries: [string, "dir" | "file" | "link"][]) => ({ entries: entries.map(([name, kind]) => ({ name, kind })), hidden: 0, truncated: false });

describe("the file tree", () => {
  it("lists the root of the agent shown, once", () => {
    const t = new FileTree();
    expect(t.show("a")).toBe(true);
    expect(t.folders.get("")).toBe("loading");
    expect(t.show("a")).toBe(false);
  });
  it("shows each open folder's entries under it, at its depth", () => {
    const t = new FileTree();
    t.show("a");
    t.listed("a", "", listing(["src", "dir"], ["README.md", "file"]));
    expect(t.rows().map((r) => [r.path, r.depth, r.open])).toEqual([["src", 0, false], ["README.md", 0, false]]);
    expect(t.toggle("src")).toBe(true); // never listed: fetch it
    t.listed("a", "src", listing(["deep", "dir"], ["main.py", "file"]));
    expect(t.rows().map((r) => [r.path, r.depth])).toEqual([["src", 0], ["src/deep", 1], ["src/main.py", 1], ["README.md", 0]]);
    expect(t.toggle("src")).toBe(false); // closed
    expect(t.rows().map((r) => r.path)).toEqual(["src", "README.md"]);
    expect(t.toggle("src")).toBe(false); // open again: the listing is kept
    expect(t.rows()).toHaveLength(4);
  });
  it("asks again for a folder whose listing failed", () => {
    const t = new FileTree();
    t.show("a");
    t.listed("a", "", listing(["build", "dir"]));
    t.toggle("build");
    t.failed("a", "build", "ignored");
    t.toggle("build");
    expect(t.toggle("build")).toBe(true);
  });
  it("drops an answer for an agent no longer shown", () => {
    const t = new FileTree();
    t.show("a");
    t.show("b");
    expect(t.listed("a", "", listing(["secret-of-a", "file"]))).toBe(false);
    expect(t.rows()).toEqual([]);
    t.open("x.txt");
    expect(t.read("a", "x.txt", { text: "of a", binary: false })).toBe(false);
    expect(t.file?.state).toBe("loading");
  });
  it("keeps only the answer for the file last opened", () => {
    const t = new FileTree();
    t.show("a");
    t.open("one.txt");
    t.open("two.txt");
    expect(t.read("a", "one.txt", { text: "1", binary: false })).toBe(false);
    expect(t.read("a", "two.txt", { text: "2", binary: false, size: 1 })).toBe(true);
    expect(t.file).toMatchObject({ path: "two.txt", state: "shown", text: "2" });
    t.readFailed("a", "two.txt", "nope");
    expect(t.file).toMatchObject({ state: "failed", error: "nope" });
  });
  it("forgets everything of the previous agent", () => {
    const t = new FileTree();
    t.show("a");
    t.listed("a", "", listing(["src", "dir"]));
    t.toggle("src");
    t.open("src/x");
    t.show("b");
    expect([t.file, t.expanded.has("src"), t.folders.get("src")]).toEqual([null, false, undefined]);
  });
  it("does not open a link that leads outside", () => {
    const t = new FileTree();
    t.show("a");
    t.listed("a", "", listing(["out", "link"]));
    expect(t.rows()[0]).toMatchObject({ kind: "link", open: false });
  });
});

describe("file helpers", () => {
  it("joins paths from the root", () => {
    expect(childPath("", "a")).toBe("a");
    expect(childPath("a/b", "c")).toBe("a/b/c");
  });
  it("names a language by extension", () => {
    expect(languageOf("src/main.py")).toBe("python");
    expect(languageOf("web/x.TSX")).toBe("typescript");
    expect(languageOf("Makefile")).toBe("bash");
    expect(languageOf(".gitignore")).toBe("");
    expect(languageOf("notes")).toBe("");
  });
  it("says sizes in units", () => {
    expect([sizeText(12), sizeText(2048), sizeText(3 * 1024 * 1024), sizeText(undefined)]).toEqual(["12 B", "2.0 KB", "3.0 MB", ""]);
  });
});

describe("refreshing the tree", () => {
  it("asks again for every open folder, root first, and forgets the closed ones", () => {
    const t = new FileTree();
    t.show("a");
    t.listed("a", "", listing(["src", "dir"], ["docs", "dir"]));
    t.toggle("src");
    t.listed("a", "src", listing(["lib", "dir"]));
    t.toggle("src/lib");
    t.listed("a", "src/lib", listing(["x.py", "file"]));
    t.toggle("docs");
    t.listed("a", "docs", listing(["a.md", "file"]));
    t.toggle("docs"); // closed again
    expect(t.refresh()).toEqual(["", "src", "src/lib"]);
    expect(t.folders.has("docs")).toBe(false);
    expect(t.rows().map((r) => r.path)).toContain("src/lib/x.py"); // shown as it was meanwhile
  });
});

describe("the tree's keys (WAI-ARIA treeview)", () => {
  const tree = () => {
    const t = new FileTree();
    t.show("a");
    t.listed("a", "", listing(["src", "dir"], ["docs", "dir"], ["out", "link"], ["README.md", "file"]));
    t.toggle("src");
    t.listed("a", "src", listing(["deep", "dir"], ["main.py", "file"]));
    return t;
  };
  it("moves up and down the shown rows, to the first and the last", () => {
    const t = tree();
    expect(t.key("src", "ArrowDown")).toEqual({ focus: "src/deep" });
    expect(t.key("src/main.py", "ArrowDown")).toEqual({ focus: "docs" });
    expect(t.key("src", "ArrowUp")).toBeNull();
    expect(t.key("README.md", "ArrowDown")).toBeNull();
    expect(t.key("docs", "Home")).toEqual({ focus: "src" });
    expect(t.key("src", "End")).toEqual({ focus: "README.md" });
  });
  it("opens a closed folder with Right, then goes to its first child; Left closes it, then goes to the parent", () => {
    const t = tree();
    expect(t.key("docs", "ArrowRight")).toEqual({ toggle: "docs" });
    expect(t.key("src", "ArrowRight")).toEqual({ focus: "src/deep" });
    expect(t.key("src/deep", "ArrowRight")).toEqual({ toggle: "src/deep" });
    expect(t.key("src/main.py", "ArrowRight")).toBeNull();
    expect(t.key("src/main.py", "ArrowLeft")).toEqual({ focus: "src" });
    expect(t.key("src", "ArrowLeft")).toEqual({ toggle: "src" });
    expect(t.key("docs", "ArrowLeft")).toBeNull(); // closed, at the top
  });
  it("opens a file with Enter or Space, toggles a folder, and opens no link", () => {
    const t = tree();
    expect(t.key("README.md", "Enter")).toEqual({ open: "README.md" });
    expect(t.key("src/main.py", " ")).toEqual({ open: "src/main.py" });
    expect(t.key("docs", "Enter")).toEqual({ toggle: "docs" });
    expect(t.key("out", "Enter")).toBeNull();
    expect(t.key("out", "x")).toBeNull();
  });
  it("goes to the next row whose name starts with a typed letter, round the end", () => {
    const t = tree();
    expect(t.key("src", "r")).toEqual({ focus: "README.md" });
    expect(t.key("README.md", "S")).toEqual({ focus: "src" });
    expect(t.key("src", "m")).toEqual({ focus: "src/main.py" });
  });
  it("keeps one tab stop: the focused row while shown, else the open file's, else the first", () => {
    const t = tree();
    expect(t.tabStop()).toBe("src");
    t.open("README.md");
    expect(t.tabStop()).toBe("README.md");
    t.focus = "src/deep";
    expect(t.tabStop()).toBe("src/deep");
    t.toggle("src"); // closed: its rows are not shown
    expect(t.tabStop()).toBe("README.md");
    expect(parentPath("src/deep/x.py")).toBe("src/deep");
    expect(parentPath("top")).toBe("");
  });
});
