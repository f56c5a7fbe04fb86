"""A browser as its owner calls it, from the User-Agent its enrollment recorded (issue 26 item 10):
what a permission answered from it says ("Allowed by Chrome on Linux")."""

from __future__ import annotations

import pytest

from shard.daemon.web.browsers import browser_name

UA = {
    "chrome-linux": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36",
    "safari-mac": "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.1 Safari/605.1.15",
    "firefox-linux": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "edge-windows": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
    "chrome-ios": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) CriOS/131.0 Mobile/15E148 Safari/604.1",
    "headless": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "HeadlessChrome/131.0.0.0 Safari/537.36",
}


@pytest.mark.parametrize(
    ("ua", "name"),
    [
        (UA["chrome-linux"], "Chrome on Linux"),
        (UA["safari-mac"], "Safari on macOS"),
        (UA["firefox-linux"], "Firefox on Linux"),
        (UA["edge-windows"], "Edge on Windows"),
        (UA["chrome-ios"], "Chrome on iOS"),
        (UA["headless"], "Headless Chrome on Linux"),
        ("curl/8.5.0", "curl"),
        ("", "a browser"),
        ("unknown browser", "a browser"),
    ],
)
def test_a_user_agent_reads_as_browser_on_system(ua, name):
    assert browser_name(ua) == name
