"""The always-allow answers saved for one workspace, as the approval policy reads them.

config/workspace_rules.py loads them from `<PICOBOT_HOME>/permissions.json` (keyed by the
workspace's resolved path) and saves new ones; the answers saved "everywhere" stay in
config.json (`tools.alwaysAllow`, `tools.web.allowHosts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SavedRules:
    """`tools`: tool names and exec rules (the forms of `tools.alwaysAllow`); `hosts`:
    web_fetch hosts (as `tools.web.allowHosts`). `problem` says why the file could not be read
    ("" when it could): none of its rules apply then."""

    tools: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    problem: str = ""
