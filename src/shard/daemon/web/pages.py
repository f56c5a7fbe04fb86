"""The enrollment page, ``/enroll`` (posts the code from the URL fragment). Its only script is inline
and allowed by its hash, so the CSP stays ``default-src 'none'`` with ``frame-ancestors 'none'``
(R4.1.2.28). The web client itself (``/``) is static files: see ``static_files.py``."""

from __future__ import annotations

from shard.daemon.web.gate import content_security_policy

# The localStorage key of the origin proof; static/js/connection.js reads the same one.
PROOF_KEY = "shard.browserProof"

# The fragment (#code=…) is never sent to any server by the browser; the script sends it once, as
# the body of a same-origin POST, then wipes it from the address bar and history. The answer's
# origin proof goes to this origin's localStorage (isolated by scheme, host and port), where the web
# client finds it for every /bootstrap.
ENROLL_SCRIPT = f"""
const code = new URLSearchParams(location.hash.slice(1)).get("code") || "";
history.replaceState(null, "", "/enroll");
const out = document.getElementById("out");
if (!code) {{ out.textContent = "This link has no code: run  shard web enroll  for a new one."; }}
else {{
  fetch("/enroll", {{method: "POST", credentials: "same-origin",
    headers: {{"Content-Type": "application/x-www-form-urlencoded"}},
    body: "code=" + encodeURIComponent(code)}})
  .then(r => r.text().then(t => {{
    if (!r.ok) {{ out.textContent = "Enrollment refused: " + t; return; }}
    localStorage.setItem("{PROOF_KEY}", JSON.parse(t).proof);
    out.textContent = "This browser is enrolled."; location.replace("/");
  }}))
  .catch(e => {{ out.textContent = "Enrollment failed: " + e; }});
}}
"""

ENROLL_PAGE = (
    "<!doctype html><html><head><meta charset=utf-8><title>Shard: enroll this browser</title></head>"
    '<body><h1>Shard</h1><p id="out">Enrolling this browser…</p>'
    f"<script>{ENROLL_SCRIPT}</script></body></html>"
)


def page_headers(*scripts: str) -> tuple[tuple[str, str], ...]:
    """The CSP for a page running exactly ``scripts`` (every other security header is on every
    response already, see ``http.response``)."""
    return (("Content-Security-Policy", content_security_policy(scripts)),)
