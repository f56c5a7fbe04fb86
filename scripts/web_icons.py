"""Render the web app's PNG icons (192 and 512 px) from ``web/public/icon.svg`` with the system's
Chromium, into ``web/public/``: an installer (Chrome's, Android's) wants raster icons of these sizes
beside the SVG. The PNGs are committed; run this again after changing the SVG, then
``cd web && npm run build``.

    .venv/bin/python scripts/web_icons.py
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from shard.testing.chromium import launched

PUBLIC = Path(__file__).resolve().parents[1] / "web" / "public"
SIZES = (192, 512)


async def main() -> None:
    svg = (PUBLIC / "icon.svg").read_text()
    async with launched() as browser:
        for size in SIZES:
            page = await browser.new_page(viewport={"width": size, "height": size})
            image = f"<img src='data:image/svg+xml;utf8,{svg}' width={size} height={size}>"
            body = f"<body style='margin:0'>{image}"
            await page.set_content(body.replace("#", "%23"))
            await page.screenshot(path=str(PUBLIC / f"icon-{size}.png"), omit_background=True)
            await page.close()
            print(f"web/public/icon-{size}.png")


if __name__ == "__main__":
    asyncio.run(main())
