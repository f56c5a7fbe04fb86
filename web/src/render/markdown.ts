// Model text as a person reads it: markdown (markdown-it, raw HTML off: a tag in the text stays
// text), sanitized again by DOMPurify (no script, no handler, no style attribute: the CSP allows
// none), code blocks highlighted by highlight.js (a few common languages, classes only) with a Copy
// button, links opening in a new tab without the page as opener.
import DOMPurify from "dompurify";
import MarkdownIt from "markdown-it";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const LANGUAGES = { bash, c, cpp, css, diff, go, ini, java, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);
hljs.registerAliases(["sh", "zsh", "console"], { languageName: "bash" });
hljs.registerAliases(["py"], { languageName: "python" });
hljs.registerAliases(["js", "jsx", "mjs"], { languageName: "javascript" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["toml"], { languageName: "ini" });
hljs.registerAliases(["yml"], { languageName: "yaml" });
hljs.registerAliases(["rs"], { languageName: "rust" });

/** Code as highlighted HTML (escaped by highlight.js), or null for a language it does not know. */
export function highlight(code: string, lang: string): string | null {
  const name = (lang || "").trim().toLowerCase();
  if (!name || !hljs.getLanguage(name)) return null;
  try {
    return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
  } catch {
    return null;
  }
}

/** Code as a <code> element highlighted when its language is known (text nodes otherwise). */
export function codeElement(code: string, lang: string): HTMLElement {
  const el = document.createElement("code");
  const html = highlight(code, lang);
  if (html === null) el.textContent = code;
  else {
    el.className = `hljs language-${lang}`;
    el.append(sanitize(html));
  }
  return el;
}

const md: MarkdownIt = new MarkdownIt({
  html: false, // raw HTML in model text is shown as text
  linkify: true,
  typographer: false,
  highlight: (code: string, lang: string): string => {
    const html = highlight(code, lang);
    return html === null ? "" : `<pre><code class="hljs language-${md.utils.escapeHtml(lang)}">${html}</code></pre>`;
  },
});
// only http(s) and mailto links; markdown-it already refuses javascript: and data: URLs
md.validateLink = (url: string) => /^(https?:|mailto:|#)/i.test(url.trim());

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

function sanitize(html: string): DocumentFragment {
  return DOMPurify.sanitize(html, { FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe"], FORBID_ATTR: ["style"], ALLOW_DATA_ATTR: false, RETURN_DOM_FRAGMENT: true });
}

/** Markdown text as a sanitized fragment, each code block with a Copy button. */
export function renderMarkdown(text: string): DocumentFragment {
  const fragment = sanitize(md.render(text));
  // the newlines markdown-it puts between blocks: layout does not need them, textContent would carry them
  for (const node of [...fragment.childNodes]) if (node.nodeType === Node.TEXT_NODE && !node.textContent?.trim()) node.remove();
  for (const pre of fragment.querySelectorAll("pre")) {
    const code = pre.querySelector("code");
    const box = document.createElement("div");
    box.className = "code-block";
    const lang = /language-([\w+#-]+)/.exec(code?.className || "")?.[1];
    const copy = document.createElement("button");
    copy.type = "button";
    copy.className = "copy";
    copy.textContent = "Copy";
    copy.setAttribute("aria-label", lang ? `Copy the ${lang} code` : "Copy the code");
    copy.addEventListener("click", () => copyText(code ? code.textContent || "" : pre.textContent || "", copy));
    pre.replaceWith(box);
    box.append(copy, pre);
  }
  return fragment;
}

async function copyText(text: string, button: HTMLButtonElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    button.textContent = "Copy failed"; // an insecure origin (remote over http) has no clipboard API
  }
  setTimeout(() => (button.textContent = "Copy"), 1500);
}
