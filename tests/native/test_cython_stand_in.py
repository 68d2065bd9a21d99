"""kwire/native/cython_stand_in.py: where Cython is not installed (a pure-Python install with no compiler), the native
modules that branch on `cython.compiled` import and run their Python branch, and give the same bytes as with Cython's own
pure-Python module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = ROOT / "captures" / "produce-consume-zstd.pcap"

RUN = """
import sys
if sys.argv.pop(1) == "hide":
    sys.modules["cython"] = None  # `import cython` raises ImportError, as where Cython is not installed
import runpy
try:
    runpy.run_module("kwire", run_name="__main__")
except SystemExit as exit:
    if exit.code:
        raise
"""


def _kwire(cython: str, *argv: str) -> bytes:
    env = dict(os.environ, KWIRE_PURE="1", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", RUN, cython, *argv], capture_output=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_stand_in_is_what_a_module_reads_without_cython():
    out = subprocess.run([sys.executable, "-c", "import sys; sys.modules['cython'] = None\n"
                          "import kwire.native.record_walk as p\n"
                          "print(p.cython.compiled is False)"],
                         capture_output=True, text=True, env=dict(os.environ, KWIRE_PURE="1", PYTHONPATH=str(ROOT)))
    assert out.stdout.strip() == "True", out.stderr


@pytest.mark.parametrize("argv", [("inspect", "--json", "-j", "0"), ("stats", "--json", "-j", "0")])
def test_the_same_bytes_without_cython(argv):
    pytest.importorskip("cython")  # the other side of the comparison: Cython's own pure-Python module
    assert _kwire("hide", *argv, str(CAPTURE)) == _kwire("keep", *argv, str(CAPTURE))
