// The Files view: the open agent's folder as a read-only tree (store/files.ts holds its state; the
// daemon decides what may be seen: fs.list / fs.read hide .git and ignored files and never leave
// the folder), and the file clicked, highlighted (highlight.js, by its extension) with line numbers.
// A symlink that leads outside the folder is listed, marked, and not opened. Everything from the
// wire is text: names and file contents never become markup (highlight.js escapes what it colours).
import { render } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { FileTree, languageOf, sizeText, type Listing, type Row } from "../store/files";
import type { Store } from "../store/store";
import { codeElement } from "./markdown";

/** Files larger than this are shown as plain text: highlighting a megabyte stalls the page. */
export const MAX_HIGHLIGHTED = 200 * 1024;

type Request = (message: Record<string, unknown>) => Promise<{ success: boolean; data?: any; error?: { message: string } }>; // eslint-disable-line @typescript-eslint/no-explicit-any

export class FilesPanel {
  tree = new FileTree();

  constructor(
    private el: HTMLElement,
    private store: Store,
    private request: Request,
  ) {}

  /** The panel shows the open agent's folder; called when it is shown or the agent changes. */
  follow(): void {
    const agentId = this.store.state.selected;
    if (this.tree.show(agentId) && agentId) this.list(agentId, "");
    this.draw();
  }

  draw(): void {
    render(<FilesView panel={this} version={this.tree.version} />, this.el);
  }

  private redraw(): void {
    this.draw();
  }

  async list(agentId: string, path: string): Promise<void> {
    try {
      const reply = await this.request({ type: "fs.list", agent_id: agentId, path });
      if (reply.success) this.tree.listed(agentId, path, reply.data as Listing);
      else this.tree.failed(agentId, path, reply.error?.message || "could not list");
    } catch (err) {
      this.tree.failed(agentId, path, (err as Error).message);
    }
    this.redraw();
  }

  /** The folder again (the agent may have written since): open folders re-listed, the file re-read. */
  refresh(): void {
    const agentId = this.tree.agentId;
    if (!agentId) return;
    for (const path of this.tree.refresh()) this.list(agentId, path);
    if (this.tree.file) this.open(this.tree.file.path);
    this.draw();
  }

  toggle(path: string): void {
    if (this.tree.toggle(path) && this.tree.agentId) this.list(this.tree.agentId, path);
    this.redraw();
  }

  async open(path: string): Promise<void> {
    const agentId = this.tree.agentId;
    if (!agentId) return;
    this.tree.open(path);
    this.redraw();
    try {
      const reply = await this.request({ type: "fs.read", agent_id: agentId, path });
      if (reply.success) this.tree.read(agentId, path, reply.data);
      else this.tree.readFailed(agentId, path, reply.error?.message || "could not read");
    } catch (err) {
      this.tree.readFailed(agentId, path, (err as Error).message);
    }
    this.redraw();
  }

  /** A key on the tree's focused row (the WAI-ARIA treeview pattern: store/files.ts decides). */
  key(path: string, event: KeyboardEvent): void {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const action = this.tree.key(path, event.key);
    if (!action) return;
    event.preventDefault();
    if ("toggle" in action) {
      this.tree.focus = action.toggle;
      this.toggle(action.toggle);
    } else if ("open" in action) {
      this.tree.focus = action.open;
      void this.open(action.open);
    } else this.focusRow(action.focus);
  }

  /** Moves the tab stop, and the focus, to a row. */
  focusRow(path: string): void {
    this.tree.focus = path;
    this.tree.version += 1;
    this.draw();
    (this.el.querySelector(`.tree-row[data-path="${CSS.escape(path)}"]`) as HTMLElement | null)?.focus();
  }

  /** A row clicked: it takes the tab stop, and a folder opens or closes, a file opens. */
  clicked(row: Row): void {
    this.tree.focus = row.path;
    if (row.kind === "dir") this.toggle(row.path);
    else if (row.kind === "file") void this.open(row.path);
    else this.draw();
  }
}

// `version` changes with every change of the tree, so a new render redraws what changed
function FilesView({ panel }: { panel: FilesPanel; version: number }) {
  const tree = panel.tree;
  const root = tree.folders.get("");
  const stop = tree.tabStop();
  return (
    <div class="files-body">
      <nav class="file-tree" aria-label="Files of the agent's folder">
        <button type="button" class="files-refresh" onClick={() => panel.refresh()} title="List the folder again: the agent may have changed it">
          Refresh
        </button>
        {root === "loading" ? <p class="files-note">Loading…</p> : null}
        {root && typeof root === "object" && "error" in root ? <p class="files-note error">{root.error}</p> : null}
        <ul class="tree-rows" role="tree" aria-label="Files of the agent's folder">
          {tree.children("", 0).map((row) => (
            <TreeRow key={row.path} row={row} panel={panel} stop={stop} />
          ))}
        </ul>
        <FolderNote listing={root} />
      </nav>
      <FileViewer panel={panel} />
    </div>
  );
}

function FolderNote({ listing }: { listing: unknown }) {
  if (!listing || typeof listing !== "object" || !("entries" in listing)) return null;
  const l = listing as Listing;
  const notes = [l.hidden ? `${l.hidden} hidden (.git and ignored files)` : "", l.truncated ? "the listing was cut" : ""].filter(Boolean);
  return notes.length ? <p class="files-note">{notes.join("; ")}</p> : null;
}

// One entry as a treeitem (roving tabindex: only the tab stop is in the tab order), an open folder's
// entries in its group under it. The click is the row's own line, not its group's.
function TreeRow({ row, panel, stop }: { row: Row; panel: FilesPanel; stop: string | null }) {
  const indent = { paddingLeft: `${row.depth * 1.1 + 0.3}em` };
  const selected = panel.tree.file?.path === row.path;
  const folder = row.kind === "dir";
  const link = row.kind === "link";
  const sub = folder ? panel.tree.folders.get(row.path) : undefined;
  const children = folder && row.open ? panel.tree.children(row.path, row.depth + 1) : [];
  return (
    <li
      class={`tree-row tree-${row.kind}${selected ? " selected" : ""}`}
      data-path={row.path}
      role="treeitem"
      aria-level={row.depth + 1}
      aria-expanded={folder ? row.open : undefined}
      aria-selected={selected}
      aria-disabled={link ? true : undefined}
      tabIndex={row.path === stop ? 0 : -1}
      onKeyDown={(e) => {
        if (e.currentTarget === e.target) panel.key(row.path, e);
      }}
    >
      <span
        class="tree-item"
        style={indent}
        title={link ? "A link that leads outside the agent's folder: not opened" : undefined}
        onClick={(e) => {
          e.stopPropagation();
          if (!link) panel.clicked(row);
        }}
      >
        <span class="tree-mark" aria-hidden="true">{link ? "↗" : folder ? (row.open ? "▾" : "▸") : ""}</span>
        {row.name}
        {link ? <span class="sr-only"> (link outside the folder, not opened)</span> : null}
        {row.symlink ? <span class="tree-size"> (link)</span> : null}
        {!folder && !link && row.size !== undefined ? <span class="tree-size"> {sizeText(row.size)}</span> : null}
      </span>
      {folder && row.open && sub === "loading" ? <p class="files-note" style={indent}>Loading…</p> : null}
      {folder && row.open && sub && typeof sub === "object" && "error" in sub ? <p class="files-note error" style={indent}>{sub.error}</p> : null}
      {children.length ? (
        <ul role="group" class="tree-group">
          {children.map((child) => (
            <TreeRow key={child.path} row={child} panel={panel} stop={stop} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

function FileViewer({ panel }: { panel: FilesPanel }) {
  const file = panel.tree.file;
  const box = useRef<HTMLDivElement>(null);
  const text = file?.state === "shown" ? file.text : undefined;
  useEffect(() => {
    if (!box.current) return;
    if (text === undefined || !file) {
      box.current.replaceChildren();
      return;
    }
    const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
    const gutter = document.createElement("pre");
    gutter.className = "file-gutter";
    gutter.setAttribute("aria-hidden", "true");
    gutter.textContent = lines.map((_, i) => String(i + 1)).join("\n");
    const pre = document.createElement("pre");
    pre.className = "file-code";
    const lang = text.length <= MAX_HIGHLIGHTED ? languageOf(file.path) : "";
    pre.append(codeElement(text, lang));
    box.current.replaceChildren(gutter, pre);
  }, [file?.path, text]);
  if (!file) return <p class="files-note file-empty">Pick a file to read it (read-only).</p>;
  const notes = [
    file.state === "shown" && file.size !== undefined ? sizeText(file.size) : "",
    file.truncated ? `only the first ${sizeText(file.limit)} shown` : "",
    text !== undefined && text.length > MAX_HIGHLIGHTED ? "too long to highlight" : "",
  ].filter(Boolean);
  return (
    <section class="file-view" aria-label={`File ${file.path}`}>
      <header class="file-head">
        <code class="file-path">{file.path}</code>
        <span class="files-note">{notes.join(" · ")}</span>
        <button type="button" class="file-close" aria-label="Close the file" onClick={() => (panel.tree.close(), panel.draw())}>
          ×
        </button>
      </header>
      {file.state === "loading" ? <p class="files-note">Loading…</p> : null}
      {file.state === "failed" ? <p class="files-note error">{file.error}</p> : null}
      {file.state === "shown" && file.binary ? <p class="files-note">A binary file: not shown.</p> : null}
      <div class="file-text" ref={box} tabIndex={0} aria-label={`Contents of ${file.path}`} />
    </section>
  );
}

export function mountFiles(el: HTMLElement, store: Store, request: Request): FilesPanel {
  return new FilesPanel(el, store, request);
}
