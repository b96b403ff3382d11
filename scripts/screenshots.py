"""Regenerate the images of the real app in docs/img: `python scripts/screenshots.py`.

Each scene (tests.tui.scenes) is played into a PicobotApp running on the scripted
model with a fixed clock, exported as SVG, and converted to PNG with cairosvg (the SVG's
font-family is rewritten to DejaVu Sans Mono so the character grid holds). The session
browser is shown over a small store of made-up sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FONT = "DejaVu Sans Mono"

SHOTS = [
    # (file stem, scene, terminal size, theme)
    ("main-mid-turn", "main-streaming", (120, 36), "textual-dark"),
    ("main-running-tool", "main-running-tool", (120, 36), "textual-dark"),
    ("approval-modal", "approval", (120, 36), "textual-dark"),
    ("narrow-80x24", "main-running-tool", (80, 24), "textual-dark"),
    ("main-light", "main-streaming", (120, 36), "textual-light"),
    ("session-browser", "sessions", (120, 36), "textual-dark"),
]


def fix_fonts(svg: str) -> str:
    svg = re.sub(r"font-family:[^;\"]*", f"font-family: {FONT}", svg)
    return re.sub(r'font-family="[^"]*"', f'font-family="{FONT}"', svg)


def seed_sessions(home: Path) -> None:
    """A few stored sessions for the browser shot."""
    from datetime import UTC, datetime, timedelta

    from picobot_tui.core.sessions import SessionStore

    now = [datetime(2025, 3, 1, 9, 0, tzinfo=UTC)]

    def clock() -> datetime:
        now[0] += timedelta(minutes=13)
        return now[0]

    store = SessionStore(home / "sessions", clock=clock)
    convos = [
        ("Set up the CI pipeline for the monorepo", "Added `.github/workflows/ci.yml`."),
        ("Refactor the parser into smaller modules", "Split into lexer, grammar and io."),
        ("Why is the Docker image 2 GB?", "The build context includes `node_modules/`."),
        ("Write a changelog entry for 0.4", "Added under **Unreleased**."),
    ]
    # The folders they were started in: the browser, opened in another, lists them all.
    places = ["/home/dev/monorepo", "/home/dev/parser", "/home/dev/monorepo", "/home/dev/docs"]
    for n, ((question, answer), place) in enumerate(zip(convos, places, strict=True)):
        key = f"cli:{n + 1:08x}-20250301-09{n:02d}00"
        with store.open(key, model="openai/gpt-4o-mini", workspace=place) as session:
            session.append({"role": "user", "content": question})
            session.append({"role": "assistant", "content": answer})


async def shoot(stem: str, scene: str, size: tuple[int, int], theme: str, out: Path) -> Path:
    from picobot_tui.config.settings import Settings
    from picobot_tui.core.llm.scripted import ScriptedModel
    from picobot_tui.tui.app import PicobotApp
    from tests.tui.scenes import SCENES
    from tests.tui.settle import settle, until

    settings = Settings()
    settings.agents.defaults.model = "openai/gpt-4o-mini"
    settings.agents.defaults.workspace = str(Path(os.environ["PICOBOT_HOME"]) / "workspace")
    settings.ui.theme = theme
    app = PicobotApp(settings, model_client=ScriptedModel(), deterministic=True, clock=lambda: 0)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        if scene == "sessions":
            from picobot_tui.widgets.session_browser import SessionBrowserScreen

            await until(pilot, lambda: app.ready, "the app started")
            app.action_sessions()
            await until(pilot, lambda: isinstance(app.screen, SessionBrowserScreen), "browser")
            browser = app.screen
            assert isinstance(browser, SessionBrowserScreen)
            await until(pilot, lambda: browser.query("#session-filter"), "the browser composed")
            browser.filter_input.cursor_blink = False
            loaded = lambda: browser.table.row_count == 4 and browser.preview.loaded  # noqa: E731
            await until(pilot, loaded, "the sessions and a preview")
        else:
            await SCENES[scene](app)
        await settle(pilot)
        svg = app.export_screenshot(title="picobot")
    svg = fix_fonts(svg)
    svg_path = out / f"{stem}.svg"
    svg_path.write_text(svg, encoding="utf-8")
    import cairosvg

    png_path = out / f"{stem}.png"
    cairosvg.svg2png(bytestring=svg.encode("utf-8"), write_to=str(png_path), scale=1.0)
    return png_path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("only", nargs="*", help="file stems to regenerate (default: all)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as home:
        os.environ["PICOBOT_HOME"] = home
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        seed_sessions(Path(home))
        for stem, scene, size, theme in SHOTS:
            if args.only and stem not in args.only:
                continue
            path = asyncio.run(shoot(stem, scene, size, theme, args.out))
            print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
