"""docs/configuration.md's key table is what scripts/config_reference.py makes from the
settings models, so a new or changed setting cannot leave the reference behind."""

from __future__ import annotations

import pytest

from scripts import config_reference as ref


def test_the_doc_matches_the_settings() -> None:
    text = ref.DOC.read_text(encoding="utf-8")
    assert ref.render(text) == text, "run python scripts/config_reference.py"


def test_every_setting_has_a_row_with_a_meaning() -> None:
    keys = [row.split("`")[1] for row in ref.rows(ref.Settings)]
    assert len(keys) == len(set(keys))
    assert {"agents.defaults.model", "providers.<name>.apiKey", "ui.keys"} <= set(keys)
    assert "tools.mcpServers.<name>.trust" in keys  # the entries of a map of models too
    assert all(not row.endswith("|  |") for row in ref.rows(ref.Settings)), "no docstring"


def test_render_keeps_the_prose_and_needs_the_markers() -> None:
    doc = f"# C\n\nbefore\n\n{ref.BEGIN}\n| stale |\n{ref.END}\n\nafter\n"
    out = ref.render(doc)
    assert out.startswith("# C\n\nbefore\n\n" + ref.BEGIN + "\n| key |")
    assert out.endswith(ref.END + "\n\nafter\n") and "| stale |" not in out
    with pytest.raises(ValueError, match="needs one"):
        ref.render("no markers here\n")
