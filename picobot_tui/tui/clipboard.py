"""Copying text: OSC 52 to the terminal (Textual's `copy_to_clipboard`) and, inside tmux, tmux's
own buffer as well. tmux's default `set-clipboard external` drops an application's OSC 52, so
a bare "Copied" was said in tmux with nothing on the clipboard."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

from textual.app import App

_TMUX_TIMEOUT = 2.0  # seconds; load-buffer answers in a few ms


def copy_text(app: App[Any], text: str) -> str:
    """Copy `text`; what to add to the "Copied …" toast about where it went ("" outside tmux)."""
    app.copy_to_clipboard(text)
    if not os.environ.get("TMUX"):
        return ""
    tmux = shutil.which("tmux")
    hint = "; tmux may have dropped it (`set -g set-clipboard on` lets it through)"
    if tmux is None:
        return hint
    # -w (tmux 3.2+) also hands it to the outer terminal's clipboard; older tmux: the buffer.
    for argv in ([tmux, "load-buffer", "-w", "-"], [tmux, "load-buffer", "-"]):
        try:
            done = subprocess.run(
                argv, input=text.encode(), capture_output=True, timeout=_TMUX_TIMEOUT, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return hint
        if done.returncode == 0:
            return ", and to tmux's buffer (paste: prefix ])"
    return hint
