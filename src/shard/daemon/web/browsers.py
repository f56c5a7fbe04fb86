"""A browser as its owner calls it — "Chrome on Linux", "Firefox on macOS" — from the User-Agent its
enrollment recorded (``browser_sessions.label``). Pure. It names who answered a request from that
browser (``permission_resolved.source_label``); it decides nothing, so a User-Agent that lies only
misnames itself."""

from __future__ import annotations

# (marker in the User-Agent, name), first match wins: Edge and Opera also say "Chrome", Chrome
# also says "Safari", every browser says "Mozilla".
_BROWSERS = (
    ("Edg/", "Edge"),
    ("EdgA/", "Edge"),
    ("OPR/", "Opera"),
    ("Firefox/", "Firefox"),
    ("FxiOS/", "Firefox"),
    ("HeadlessChrome/", "Headless Chrome"),
    ("Chromium/", "Chromium"),
    ("CriOS/", "Chrome"),
    ("Chrome/", "Chrome"),
    ("Safari/", "Safari"),
)
_SYSTEMS = (
    ("iPhone", "iOS"),
    ("iPad", "iPadOS"),
    ("Android", "Android"),
    ("CrOS", "ChromeOS"),
    ("Windows", "Windows"),
    ("Macintosh", "macOS"),
    ("Mac OS X", "macOS"),
    ("Linux", "Linux"),
    ("BSD", "BSD"),
)
_MAX = 64


def browser_name(user_agent: str) -> str:
    """The browser as "Chrome on Linux"; a program that is no browser goes by its first product
    token ("curl", "Python"); "a browser" when nothing was recorded."""
    ua = user_agent.strip()
    if not ua or ua == "unknown browser":  # what enrollment records without a User-Agent
        return "a browser"
    browser = next((name for marker, name in _BROWSERS if marker in ua), None)
    system = next((name for marker, name in _SYSTEMS if marker in ua), None)
    if browser is None:
        return ua.split("/", 1)[0].split(" ", 1)[0][:_MAX] or "a browser"
    return f"{browser} on {system}" if system else browser
