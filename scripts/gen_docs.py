"""Write the option tables of docs/<command>.md from kwire's click commands, so they cannot drift.

Each command page holds a block between two markers,

    <!-- BEGIN GENERATED options: kwire inspect (...) -->
    <!-- END GENERATED options: kwire inspect -->

and this script replaces what lies between them with the command's usage line and one table row per
option: its flags, its value, the default and range click states, and its help text (kwire/cli is the
one source; change the help there, then run this). The text outside the markers is left alone.

    python scripts/gen_docs.py           # rewrite the blocks
    python scripts/gen_docs.py --check   # exit 1, naming the stale pages, when a block differs

tests/docs/test_options.py runs the check.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
COMMANDS = ("inspect", "stats", "live", "spark")  # each has docs/<name>.md

BEGIN = "<!-- BEGIN GENERATED options: kwire {name} "
END = "<!-- END GENERATED options: kwire {name} -->"


def command(name: str) -> click.Command:
    """The click command `kwire NAME`, loaded as the CLI loads it."""
    from kwire.cli.main import cli

    ctx = click.Context(cli, info_name="kwire")
    found = cli.get_command(ctx, name)
    if found is None:
        raise SystemExit(f"gen_docs: kwire has no command {name!r} here (an optional part not installed?)")
    return found


def _cell(text: str) -> str:
    """Text as one Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _value(param: click.Option, ctx: click.Context) -> str:
    if param.is_flag or param.count:
        return ""
    metavar = param.metavar or param.type.get_metavar(param=param, ctx=ctx) or param.type.name.upper()
    return f"`{metavar}`"


def _notes(param: click.Option, ctx: click.Context) -> str:
    """What click adds in brackets to --help (default, range), in the same words."""
    notes = []
    extra = param.get_help_extra(ctx)
    if "default" in extra:
        notes.append(f"default: {extra['default']}")
    if "range" in extra:
        notes.append(extra["range"])
    return f" [{'; '.join(notes)}]" if notes else ""


def option_rows(cmd: click.Command) -> list[str]:
    ctx = click.Context(cmd, info_name=cmd.name)
    rows = []
    help_option = cmd.get_help_option(ctx)
    for param in cmd.get_params(ctx):
        if not isinstance(param, click.Option) or param.hidden or param is help_option:
            continue
        opts = sorted([*param.opts, *param.secondary_opts], key=lambda opt: opt.startswith("--"))  # -j, --jobs
        flags = ", ".join(f"`{opt}`" for opt in opts)
        rows.append(f"| {flags} | {_value(param, ctx)} | {_cell((param.help or '') + _notes(param, ctx))} |")
    return rows


def block(name: str) -> str:
    """The generated text for `kwire NAME`, markers excluded."""
    cmd = command(name)
    ctx = click.Context(cmd, info_name=f"kwire {name}")
    usage = " ".join(cmd.collect_usage_pieces(ctx))
    lines = [f"`kwire {name} {usage}`", "", f"{_cell(cmd.get_short_help_str(limit=200))}", "",
             "| option | value | meaning |", "| --- | --- | --- |", *option_rows(cmd)]
    return "\n".join(lines)


def render(text: str, name: str) -> str:
    """`text` with the block of `kwire NAME` regenerated; the markers must be there."""
    pattern = re.compile(re.escape(BEGIN.format(name=name)) + r"[^\n]*-->\n(.*?)" + re.escape(END.format(name=name)),
                         re.S)
    match = pattern.search(text)
    if match is None:
        raise SystemExit(f"gen_docs: docs/{name}.md has no BEGIN/END GENERATED options markers for kwire {name}")
    return text[:match.start(1)] + block(name) + "\n" + text[match.end(1):]


KINDS_BEGIN, KINDS_END = "<!-- BEGIN GENERATED finding kinds -->\n", "<!-- END GENERATED finding kinds -->"


def render_kinds(text: str) -> str:
    """docs/findings.md with its list of finding kinds made from kwire.analytics.finding_kinds."""
    from kwire.analytics.finding_kinds import kinds_list

    start, end = text.find(KINDS_BEGIN), text.find(KINDS_END)
    if start < 0 or end < start:
        raise SystemExit("gen_docs: docs/findings.md has no BEGIN/END GENERATED finding kinds markers")
    return text[:start + len(KINDS_BEGIN)] + kinds_list() + "\n" + text[end:]


REASONS_BEGIN, REASONS_END = "<!-- BEGIN GENERATED reasons: {} -->\n", "<!-- END GENERATED reasons: {} -->"


def reason_families() -> dict:
    """docs/reasons.md's families: marker name -> its registry (kwire.reasons)."""
    from kwire.net.drops import DROPS_LIST
    from kwire.tcp.closes import CLOSES_LIST
    from kwire.tls.reasons import NOT_DECRYPTED_LIST

    return {"net drops": DROPS_LIST, "tcp closes": CLOSES_LIST, "tls not decrypted": NOT_DECRYPTED_LIST}


def render_reasons(text: str) -> str:
    """docs/reasons.md with each family's list made from its registry."""
    from kwire.reasons import reasons_list

    for family, reasons in reason_families().items():
        begin, end = REASONS_BEGIN.format(family), REASONS_END.format(family)
        start, stop = text.find(begin), text.find(end)
        if start < 0 or stop < start:
            raise SystemExit(f"gen_docs: docs/reasons.md has no BEGIN/END GENERATED reasons: {family} markers")
        text = text[:start + len(begin)] + reasons_list(reasons) + "\n" + text[stop:]
    return text


def _generate(path: Path, render_page, check: bool, stale: list) -> None:
    text = path.read_text(encoding="utf-8")
    new = render_page(text)
    if new != text:
        stale.append(str(path.relative_to(ROOT)))
        if not check:
            path.write_text(new, encoding="utf-8")


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    _generate(DOCS / "findings.md", render_kinds, check, stale)
    _generate(DOCS / "reasons.md", render_reasons, check, stale)
    for name in COMMANDS:
        path = DOCS / f"{name}.md"
        text = path.read_text(encoding="utf-8")
        new = render(text, name)
        if new != text:
            stale.append(str(path.relative_to(ROOT)))
            if not check:
                path.write_text(new, encoding="utf-8")
    if check and stale:
        print("gen_docs: option tables out of date (run python scripts/gen_docs.py): " + ", ".join(stale),
              file=sys.stderr)
        return 1
    for page in stale:
        print(f"gen_docs: wrote {page}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
