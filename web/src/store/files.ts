// The open agent's folder as a read-only file tree (fs.list / fs.read, capability fs-read): which
// folders are open, what each listing said, the file being shown. Apart from the page and the
// socket: the view asks for what `toggle` / `open` say to fetch and hands back the answers, each
// tagged with the agent it was asked for, so an answer that arrives after another agent was opened
// is dropped rather than shown under the wrong folder.

export interface FsEntry {
  name: string;
  kind: "dir" | "file" | "link";
  size?: number;
  symlink?: boolean;
}

export interface Listing {
  entries: FsEntry[];
  hidden: number;
  truncated: boolean;
}

export interface OpenFile {
  path: string;
  state: "loading" | "shown" | "failed";
  text?: string;
  binary?: boolean;
  truncated?: boolean;
  size?: number;
  limit?: number;
  error?: string;
}

export type Folder = Listing | { error: string } | "loading";

/** One line of the tree as drawn: an entry at its depth, its folder open or not. */
export interface Row {
  path: string;
  name: string;
  kind: FsEntry["kind"];
  depth: number;
  open: boolean;
  size?: number;
  symlink?: boolean;
}

export function childPath(folder: string, name: string): string {
  return folder ? `${folder}/${name}` : name;
}

/** What a key does in the tree (the WAI-ARIA treeview pattern): move the focus to a row, open or
 * close a folder (`toggle`), or open a file; null when the key is not the tree's. */
export type KeyAction = { focus: string } | { toggle: string } | { open: string } | null;

/** The parent folder of a row's path ("" for the top level). */
export function parentPath(path: string): string {
  const cut = path.lastIndexOf("/");
  return cut < 0 ? "" : path.slice(0, cut);
}

export class FileTree {
  agentId: string | null = null;
  folders = new Map<string, Folder>();
  expanded = new Set<string>([""]);
  file: OpenFile | null = null;
  version = 0;
  /** the row that holds the tree's one tab stop (roving tabindex); null: the first row */
  focus: string | null = null;

  /** The tree of another agent (or none): everything of the previous one is forgotten. Whether the
   * root must be listed. */
  show(agentId: string | null): boolean {
    if (agentId === this.agentId) return false;
    this.agentId = agentId;
    this.folders.clear();
    this.expanded = new Set([""]);
    this.file = null;
    this.focus = null;
    this.version += 1;
    if (agentId === null) return false;
    this.folders.set("", "loading");
    return true;
  }

  /** Opens or closes a folder; true when its listing must be fetched (never fetched, or failed). */
  toggle(path: string): boolean {
    this.version += 1;
    if (this.expanded.has(path) && path !== "") {
      this.expanded.delete(path);
      return false;
    }
    this.expanded.add(path);
    const known = this.folders.get(path);
    if (known === undefined || (typeof known === "object" && "error" in known)) {
      this.folders.set(path, "loading");
      return true;
    }
    return false;
  }

  listed(agentId: string, path: string, listing: Listing): boolean {
    if (agentId !== this.agentId) return false;
    this.folders.set(path, listing);
    this.version += 1;
    return true;
  }

  failed(agentId: string, path: string, error: string): boolean {
    if (agentId !== this.agentId) return false;
    this.folders.set(path, { error });
    this.version += 1;
    return true;
  }

  /** A file is asked for: shown as loading until `read` or `readFailed`. */
  open(path: string): void {
    this.file = { path, state: "loading" };
    this.version += 1;
  }

  read(agentId: string, path: string, data: Omit<OpenFile, "path" | "state">): boolean {
    if (agentId !== this.agentId || this.file?.path !== path) return false;
    this.file = { path, state: "shown", ...data };
    this.version += 1;
    return true;
  }

  readFailed(agentId: string, path: string, error: string): boolean {
    if (agentId !== this.agentId || this.file?.path !== path) return false;
    this.file = { path, state: "failed", error };
    this.version += 1;
    return true;
  }

  close(): void {
    this.file = null;
    this.version += 1;
  }

  /** What a refresh asks again: every open folder (the root first), each shown as it was until its
   * new listing comes; a folder closed meanwhile is forgotten, so it is listed afresh when opened. */
  refresh(): string[] {
    for (const path of [...this.folders.keys()]) if (!this.expanded.has(path)) this.folders.delete(path);
    this.version += 1;
    return [...this.expanded].filter((p) => this.folders.has(p)).sort((a, b) => a.length - b.length);
  }

  /** The row that takes the tab stop: the focused one while it is shown, else the open file's,
   * else the first. */
  tabStop(rows: Row[] = this.rows()): string | null {
    for (const want of [this.focus, this.file?.path]) if (want && rows.some((r) => r.path === want)) return want;
    return rows.length ? rows[0].path : null;
  }

  /** What `key` does with the focus on `path` (arrows, Home, End, Enter, Space, and a letter to go
   * to the next row whose name starts with it). A link out of the folder opens nothing. */
  key(path: string, key: string): KeyAction {
    const rows = this.rows();
    const at = rows.findIndex((r) => r.path === path);
    if (at < 0) return rows.length ? { focus: rows[0].path } : null;
    const row = rows[at];
    switch (key) {
      case "ArrowDown":
        return at + 1 < rows.length ? { focus: rows[at + 1].path } : null;
      case "ArrowUp":
        return at > 0 ? { focus: rows[at - 1].path } : null;
      case "Home":
        return { focus: rows[0].path };
      case "End":
        return { focus: rows[rows.length - 1].path };
      case "ArrowRight":
        if (row.kind !== "dir") return null;
        if (!row.open) return { toggle: row.path };
        return at + 1 < rows.length && rows[at + 1].depth > row.depth ? { focus: rows[at + 1].path } : null;
      case "ArrowLeft":
        if (row.kind === "dir" && row.open) return { toggle: row.path };
        return row.depth > 0 ? { focus: parentPath(row.path) } : null;
      case "Enter":
      case " ":
        if (row.kind === "dir") return { toggle: row.path };
        return row.kind === "file" ? { open: row.path } : null;
    }
    if (key.length === 1 && key.trim()) {
      const letter = key.toLowerCase();
      for (let i = 1; i <= rows.length; i++) {
        const next = rows[(at + i) % rows.length];
        if (next.name.toLowerCase().startsWith(letter)) return { focus: next.path };
      }
    }
    return null;
  }

  /** The lines of the tree in order: each open folder's entries under it. */
  rows(): Row[] {
    const out: Row[] = [];
    const walk = (folder: string, depth: number) => {
      for (const row of this.children(folder, depth)) {
        out.push(row);
        if (row.open) walk(row.path, depth + 1);
      }
    };
    walk("", 0);
    return out;
  }

  /** One folder's entries as rows at `depth` (none until it is listed). */
  children(folder: string, depth: number): Row[] {
    const listing = this.folders.get(folder);
    if (!listing || typeof listing !== "object" || !("entries" in listing)) return [];
    return listing.entries.map((entry) => {
      const path = childPath(folder, entry.name);
      const open = entry.kind === "dir" && this.expanded.has(path);
      return { path, name: entry.name, kind: entry.kind, depth, open, size: entry.size, symlink: entry.symlink };
    });
  }
}

const EXTENSIONS: Record<string, string> = {
  py: "python", pyi: "python", js: "javascript", mjs: "javascript", cjs: "javascript", jsx: "javascript",
  ts: "typescript", tsx: "typescript", json: "json", md: "markdown", markdown: "markdown",
  sh: "bash", bash: "bash", zsh: "bash", c: "c", h: "c", cc: "cpp", cpp: "cpp", hpp: "cpp",
  css: "css", go: "go", rs: "rust", java: "java", sql: "sql", html: "xml", xml: "xml", svg: "xml",
  yml: "yaml", yaml: "yaml", toml: "ini", ini: "ini", cfg: "ini", diff: "diff", patch: "diff",
};

/** The highlight.js language of a file, by its name; "" when none is known. */
export function languageOf(path: string): string {
  const name = path.split("/").pop() || "";
  if (name === "Makefile" || name === "Dockerfile") return "bash";
  const dot = name.lastIndexOf(".");
  return dot > 0 ? EXTENSIONS[name.slice(dot + 1).toLowerCase()] || "" : "";
}

/** "1.2 KB"-style size for a file row. */
export function sizeText(bytes: number | undefined): string {
  if (bytes === undefined) return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
