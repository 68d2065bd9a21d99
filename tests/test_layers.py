"""The layers of DESIGN.md, as pyproject.toml's import-linter contracts state them: no module imports
a layer above its own, and the sans-IO core imports no terminal UI, command line, socket or clock.
A broken contract fails here with import-linter's own report of the offending import chain."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_no_module_imports_upward():
    command = shutil.which("lint-imports")
    if command is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    run = subprocess.run([command, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout
