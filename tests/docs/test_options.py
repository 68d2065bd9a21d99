"""The option tables of docs/<command>.md are what scripts/gen_docs.py writes from kwire's click commands:
an option added, renamed or re-described in kwire/cli fails here until the script has been run."""

from __future__ import annotations

import pytest

from tests.docs.pages import DOCS
from tests.script_module import script_module


gen_docs = script_module("gen_docs")


def test_every_command_has_a_page():
    from kwire.cli.main import COMMANDS

    assert set(gen_docs.COMMANDS) == set(COMMANDS), "a kwire command without docs/<command>.md (or the reverse)"


@pytest.mark.parametrize("name", gen_docs.COMMANDS)
def test_option_table_is_generated(name):
    page = DOCS / f"{name}.md"
    text = page.read_text(encoding="utf-8")
    assert gen_docs.render(text, name) == text, (
        f"docs/{name}.md's option table differs from kwire {name}'s options: run python scripts/gen_docs.py")


@pytest.mark.parametrize("name", gen_docs.COMMANDS)
def test_every_option_is_in_the_table(name):
    """Independent of the generator's own rendering: every flag click knows appears in the page."""
    import click

    cmd = gen_docs.command(name)
    ctx = click.Context(cmd)
    text = (DOCS / f"{name}.md").read_text(encoding="utf-8")
    for param in cmd.get_params(ctx):
        if isinstance(param, click.Option) and param is not cmd.get_help_option(ctx):
            for opt in param.opts:
                assert f"| `{opt}`" in text or f", `{opt}`" in text, f"docs/{name}.md does not list {opt}"


def test_check_mode_finds_a_stale_page(tmp_path, monkeypatch):
    """The check can fail: a page whose table lost a row is reported, and rewritten without --check."""
    for name in (*gen_docs.COMMANDS, "findings", "reasons"):
        (tmp_path / f"{name}.md").write_text((DOCS / f"{name}.md").read_text(encoding="utf-8"), encoding="utf-8")
    page = tmp_path / "inspect.md"
    page.write_text(page.read_text(encoding="utf-8").replace("| `--show-secrets` |", "| `--shown-secrets` |"),
                    encoding="utf-8")
    monkeypatch.setattr(gen_docs, "DOCS", tmp_path)
    monkeypatch.setattr(gen_docs, "ROOT", tmp_path.parent)
    assert gen_docs.main(["--check"]) == 1
    assert gen_docs.main([]) == 0
    assert gen_docs.main(["--check"]) == 0
    assert "| `--show-secrets` |" in page.read_text(encoding="utf-8")
