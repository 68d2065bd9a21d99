"""The example outputs README and docs/ show are what kwire prints: every fenced block made of one
`$ kwire inspect ...` or `$ kwire stats ...` command and its output is run (as `python -m kwire`, from
the repository's root, on the committed captures) and compared line by line, trailing blanks aside. A
`...` line stands for lines left out: what comes before it must open the output, what comes after it
must close it. stdout comes first, then stderr (the summary lines)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest

from tests.docs.pages import DOCS, ROOT

_BLOCK = re.compile(r"^```\n(\$ kwire (?:inspect|stats) [^\n]*)\n(.*?)^```", re.S | re.M)


def _examples():
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for match in _BLOCK.finditer(page.read_text(encoding="utf-8")):
            command, shown = match.group(1), match.group(2)
            if "\n$ " not in "\n" + shown:  # one command per block
                yield pytest.param(command[2:], shown.rstrip("\n").split("\n"),
                                   id=f"{page.name}: {command[2:60]}")


EXAMPLES = list(_examples())


def test_there_are_examples_to_check():
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("command, shown", EXAMPLES)
def test_example_output_is_real(command, shown):
    argv = shlex.split(command)
    assert argv[0] == "kwire"
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}  # tables as a pipe gets them
    run = subprocess.run([sys.executable, "-m", "kwire", *argv[1:]], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env=env)
    actual = [line.rstrip() for line in (run.stdout + run.stderr).rstrip("\n").split("\n")]
    shown = [line.rstrip() for line in shown]
    if "..." in shown:
        cut = shown.index("...")
        head, tail = shown[:cut], shown[cut + 1:]
        assert actual[:len(head)] == head, f"{command}: the output does not open as shown"
        assert not tail or actual[-len(tail):] == tail, f"{command}: the output does not close as shown"
    else:
        assert actual == shown, f"{command}: the output differs from the one shown"
