// A tiny element builder: h("div", {class: "x"}, child, "text"). Text is always a text node (never
// HTML), so nothing the agent or a tool says can become markup.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function formatCost(cost) {
  return cost ? `$${cost.toFixed(4)}` : "";
}

// Every input token of a Usage: fresh, read from the provider's cache and written to it (a request
// llama.cpp answered from its cache is its whole prompt in, not the few tokens it read fresh).
export function tokensIn(u) {
  return (u.input || 0) + (u.cache_read || 0) + (u.cache_write || 0);
}

const WINDOW_SOURCES = { config: "from config.toml", builtin: "from Shard's catalog", server: "from the server", default: "Shard's default" };

// "8,192 from the server": a ModelDescriptor's (or usage event's) context window and its source.
export function windowText(m) {
  if (!m || !m.context_window) return null;
  const source = WINDOW_SOURCES[m.context_window_source] || m.context_window_source || "";
  return `${m.context_window.toLocaleString("en-US")} ${source}`.trim();
}
