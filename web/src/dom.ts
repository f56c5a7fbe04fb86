// A tiny element builder: h("div", {class: "x"}, child, "text"). Text is always a text node (never
// HTML), so nothing the agent or a tool says can become markup.

export type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, unknown> & { dataset?: Record<string, string> };

export function h(tag: string, attrs: Attrs = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value as EventListener);
    else if (key === "class") el.className = String(value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el: HTMLElement, children: Child[]): HTMLElement {
  for (const child of (children as unknown[]).flat(Infinity) as Child[]) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function formatCost(cost: number | undefined): string {
  return cost ? `$${cost.toFixed(4)}` : "";
}

// the store's (one definition): every input token of a Usage, and a model's context window in words
export { tokensIn, windowText } from "./store/agent";
