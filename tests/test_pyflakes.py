"""Every module of kwire reads as plain Python to a linter: pyflakes finds no undefined name in kwire/ (a name
that exists only in a module's Cython declarations used to: 49 of them, in five modules, before their C moved to
kwire/native with Python twins: issue 44)."""

from __future__ import annotations

from pathlib import Path

import pytest

pyflakes_api = pytest.importorskip("pyflakes.api")
from pyflakes import messages  # noqa: E402
from pyflakes.reporter import Reporter  # noqa: E402

KWIRE = Path(__file__).resolve().parents[1] / "kwire"


class _Collect(Reporter):
    def __init__(self):
        self.found: list = []

    def flake(self, message):
        self.found.append(message)

    def syntaxError(self, filename, msg, lineno, offset, text):
        self.found.append(f"{filename}:{lineno}: {msg}")

    def unexpectedError(self, filename, msg):
        self.found.append(f"{filename}: {msg}")


def test_no_module_uses_a_name_it_does_not_define():
    sources = sorted(KWIRE.rglob("*.py"))
    assert len(sources) > 100
    reporter = _Collect()
    for path in sources:
        pyflakes_api.checkPath(str(path), reporter)
    undefined = [str(m) for m in reporter.found
                 if not isinstance(m, messages.Message) or isinstance(m, (messages.UndefinedName,
                                                                          messages.UndefinedLocal,
                                                                          messages.UndefinedExport))]
    assert undefined == []
