// The Changes view: every file the open agent wrote or edited in its conversation, with its diffs
// (store/changes.ts), as Preact components on the store; the diffs themselves are drawn by
// render/diff.ts (text nodes only).
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { changesOf, type Edit } from "../store/changes";
import type { Store } from "../store/store";
import { renderHunks, twoSided } from "./diff";

function EditDiff({ edit }: { edit: Edit }) {
  const box = useRef<HTMLElement>(null);
  useEffect(() => {
    box.current?.replaceChildren(...renderHunks(edit.hunks));
  }, [edit]);
  return <figure class={twoSided(edit.hunks) ? "render render-diff diff two-sided" : "render render-diff diff"} ref={box} data-tool-call-id={edit.toolCallId} />;
}

export function ChangesView({ store }: { store: Store }) {
  const [, redraw] = useState(0);
  useEffect(() => store.subscribe(() => redraw((n) => n + 1)), [store]);
  const agent = store.agent(store.state.selected);
  if (!agent) return null;
  const files = changesOf(agent);
  if (!files.length) return <p class="changes-empty">No file written or edited in this conversation yet.</p>;
  return (
    <ul class="changes-list" aria-label="Files changed">
      {files.map((file) => (
        <li key={file.path} class="change" data-path={file.path}>
          <details>
            <summary>
              <code class="change-path">{file.path}</code> <span class="diff-stat">{`+${file.added} \u2212${file.removed}`}</span>{" "}
              <span class="change-edits">{file.edits.length === 1 ? "1 edit" : `${file.edits.length} edits`}</span>
            </summary>
            {file.edits.map((edit) => (
              <EditDiff key={edit.toolCallId} edit={edit} />
            ))}
          </details>
        </li>
      ))}
    </ul>
  );
}

export function mountChanges(el: HTMLElement, store: Store): void {
  render(<ChangesView store={store} />, el);
}
