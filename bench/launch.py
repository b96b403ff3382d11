"""Run `picobot` (or a bare Textual app) and record when its first frame is painted.

    python -m bench.launch OUT.json [--when any|history] [--settle] [--ready] [--profile F] -- args...
    python -m bench.launch OUT.json --bare

It is the console script plus one post-import hook: when `textual.app` is first imported
(wherever the program imports it, so the import order is unchanged), `App._display` is
wrapped. The first call that writes a frame to the terminal driver appends a JSON line to
OUT.json with `time.monotonic()` (CLOCK_MONOTONIC, comparable with the parent's spawn time),
the RSS and the process's CPU time so far (all threads; steadier than wall time under
load). `--when history` waits for the first frame that shows a resumed transcript.
`--settle` also records the RSS once LiteLLM has been imported and warmed in the background. `--ready`
also records the first frame painted once the app has loaded its settings, runtime and
session (`PicobotApp.ready`): the first frame comes before them.
Nothing here changes what the app does; the parent kills the process when it has its data.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import sys
import threading
import time
from typing import Any


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class _Recorder:
    def __init__(
        self, out: str, when: str, settle: bool, profile: str | None = None, ready: bool = False
    ) -> None:
        self.out = out
        self.profile = profile
        self.profiler: Any = None
        self.when = when
        self.settle = settle
        self.want_ready = ready
        self.app: Any = None
        self.done = False
        self.lock = threading.Lock()

    def write(self, **record: Any) -> None:
        with self.lock, open(self.out, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def ready(self, app: Any) -> bool:
        if self.when == "any":
            return True
        # "history": the resumed transcript is mounted and this frame shows it.
        sessions = getattr(app, "sessions", None)
        if sessions is None or getattr(sessions, "session", None) is None:
            return False
        try:
            return len(app.conversation.transcript.children) > 0
        except Exception:
            return False

    def frame(self, app: Any) -> None:
        if self.done:
            if self.want_ready and getattr(app, "ready", False):
                self.want_ready = False
                self.write(
                    event="ready", t=time.monotonic(), rss_mb=_rss_mb(), cpu=time.process_time()
                )
            return
        if not self.ready(app):
            return
        self.done = True
        self.app = app
        t = time.monotonic()
        if self.profiler is not None:
            if str(self.profile).endswith(".prof"):
                self.profiler.disable()
                self.profiler.dump_stats(self.profile)
            else:
                self.profiler.stop()
                with open(self.profile, "w", encoding="utf-8") as f:
                    f.write(self.profiler.output_text(color=False, show_all=True))
        self.write(event="first_frame", t=t, rss_mb=_rss_mb(), cpu=time.process_time())
        if self.settle:
            threading.Thread(target=self._settle, daemon=True).start()

    def _settle(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            llm = sys.modules.get("picobot_tui.core.llm.client")
            if llm is not None and getattr(llm, "_LITELLM", None) is not None:
                break
            time.sleep(0.05)
        # ...and until the warm-up (a mock completion after the import) has finished.
        while time.monotonic() < deadline and any(
            w.group == "warm" and not w.is_finished for w in list(self.app.workers)
        ):
            time.sleep(0.05)
        time.sleep(0.3)
        self.write(event="settled", t=time.monotonic(), rss_mb=_rss_mb())


def _patch(module: Any, recorder: _Recorder) -> None:
    app_cls = module.App
    original = app_cls._display

    def _display(self: Any, screen: Any, renderable: Any) -> None:
        original(self, screen, renderable)
        if (
            (not recorder.done or recorder.want_ready)
            and renderable is not None
            and not self._batch_count
            and self._driver is not None
            and not self.is_headless
        ):
            recorder.frame(self)

    app_cls._display = _display


class _PostImport(importlib.abc.MetaPathFinder):
    """Patches `textual.app` right after it is first executed."""

    def __init__(self, recorder: _Recorder) -> None:
        self.recorder = recorder

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "textual.app":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module
        recorder = self.recorder

        def exec_and_patch(module: Any) -> None:
            exec_module(module)
            _patch(module, recorder)

        loader.exec_module = exec_and_patch  # type: ignore[method-assign]
        return spec


def _bare_app() -> int:
    from textual.app import App
    from textual.widgets import Static

    class Bare(App[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield Static("picobot-bench: a bare Textual app with one Static")

    Bare().run()
    return 0


def main(argv: list[str]) -> int:
    out = argv[0]
    rest = argv[1:]
    when, settle, bare, profile, ready = "any", False, False, None, False
    while rest and rest[0] != "--":
        opt = rest.pop(0)
        if opt == "--when":
            when = rest.pop(0)
        elif opt == "--settle":
            settle = True
        elif opt == "--ready":
            ready = True
        elif opt == "--bare":
            bare = True
        elif opt == "--profile":
            profile = rest.pop(0)
        else:
            raise SystemExit(f"unknown option {opt}")
    if rest and rest[0] == "--":
        rest.pop(0)
    recorder = _Recorder(out, when, settle, profile, ready)
    if profile and profile.endswith(".prof"):  # cProfile; anything else: pyinstrument text
        import cProfile

        recorder.profiler = cProfile.Profile()
        recorder.profiler.enable()
    elif profile:
        from pyinstrument import Profiler

        recorder.profiler = Profiler(interval=0.001)
        recorder.profiler.start()
    if "textual.app" in sys.modules:
        _patch(sys.modules["textual.app"], recorder)
    else:
        sys.meta_path.insert(0, _PostImport(recorder))
    if bare:
        return _bare_app()
    sys.argv = ["picobot", *rest]
    from picobot_tui.cli import main as picobot_main

    picobot_main()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    sys.exit(main(sys.argv[1:]))
