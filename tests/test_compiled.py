"""The compiled core (setup.py, kwire/compiled.py): it gives the bytes the pure-Python build gives, it
runs only where it was built from today's source, and a machine with no compiler installs pure Python.

CI installs with a compiler and sets KWIRE_EXPECT_COMPILED=1, so there the tests that compare the two
builds cannot be skipped; the rest of the suite runs once, on the compiled build.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kwire import compiled

ROOT = Path(__file__).resolve().parent.parent

# One process runs every committed capture through the CLI and prints a digest per (capture, command).
_DIGESTS = r"""
import hashlib, json, sys
from pathlib import Path
from click.testing import CliRunner
from kwire.cli.main import cli
out = {}
runner = CliRunner()
for capture in sys.argv[1:]:
    keys = Path(capture + ".keys")
    tls = ["--keylog", str(keys)] if keys.exists() else []
    for name, argv in {"inspect": ["inspect", "--json", "--records", "-j", "0", "--no-summary"],
                       "stats": ["stats", "--json", "-j", "0"]}.items():
        result = runner.invoke(cli, argv + tls + [capture])
        out[f"{Path(capture).name} {name}"] = [result.exit_code, hashlib.sha256(result.stdout_bytes).hexdigest()]
print(json.dumps(out))
"""


def committed_captures() -> list[str]:
    return [str(p) for p in sorted((ROOT / "captures").rglob("*"))
            if p.suffix in (".pcap", ".pcapng", ".gz") and ".truth." not in p.name]


def built_modules() -> dict[str, str]:
    return compiled._built_from()


def run_python(code: str, *args: str, pure: bool, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop(compiled.PURE_ENV, None)
    if pure:
        env[compiled.PURE_ENV] = "1"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=900, **kw)


def test_ci_builds_the_compiled_core(needs_compiled_core):
    report = compiled.report()
    assert report.startswith("compiled core: ") and "changed since" not in report, report


def test_compiled_and_pure_give_the_same_bytes_on_every_committed_capture(needs_compiled_core):
    captures = committed_captures()
    assert len(captures) > 30
    both = [run_python(_DIGESTS, *captures, pure=pure) for pure in (False, True)]
    for done in both:
        assert done.returncode == 0, done.stderr[-3000:]
    compiled_out, pure_out = (json.loads(done.stdout) for done in both)
    assert set(compiled_out) == set(pure_out)
    differ = sorted(k for k in compiled_out if compiled_out[k] != pure_out[k])
    assert not differ, differ
    assert all(code == 0 for code, _ in compiled_out.values())


def test_modules_run_compiled_unless_kwire_pure(needs_compiled_core):
    code = "import kwire.native.net_layers as m, kwire.native.fused as f; print(m.__file__); print(f.__file__)"
    compiled_files = run_python(code, pure=False).stdout.split()
    pure_files = run_python(code, pure=True).stdout.split()
    assert all(f.endswith(".so") for f in compiled_files), compiled_files
    assert all(f.endswith(".py") for f in pure_files), pure_files


def test_a_module_whose_source_changed_runs_from_source(needs_compiled_core):
    code = ("import kwire.compiled as c; c._finder.built_from['kwire.native.net_layers'] = '0' * 64; "
            "import kwire.native.net_layers as m, kwire.native.net_tunnels as s; print(m.__file__); print(s.__file__)")
    changed, unchanged = run_python(code, pure=False).stdout.split()
    assert changed.endswith("net_layers.py") and unchanged.endswith(".so")


def test_report_counts_a_changed_source(tmp_path, monkeypatch):
    digest = compiled.source_digest(str(ROOT / "kwire" / "native" / "net_layers.py"))
    sources = {"kwire.native.net_layers": digest, "kwire.native.net_tunnels": "0" * 64}
    monkeypatch.setattr(compiled, "_built_from", lambda: sources)
    monkeypatch.setattr(compiled, "_finder", compiled.SourceWhereNewer(pure=False))
    report = compiled.report()
    assert report.startswith("compiled core: 1 of 2 modules (1 changed since the build run from source: "
                             "kwire.native.net_tunnels"), report


def test_the_digest_covers_the_declarations_and_what_they_cimport(tmp_path):
    """A module with Cython declarations (a .pxd beside it) counts as changed when its .pxd, a .pxd it
    cimports, or the .py of a module it cimports changed: its compiled form reads that module's fields in C."""
    package = tmp_path / "kwire" / "tcp"
    package.mkdir(parents=True)
    files = {"flows.py": "x = 1\n", "flows.pxd": "from kwire.tcp.halves cimport Half\ncdef class T:\n    pass\n",
             "halves.py": "y = 2\n", "halves.pxd": "cdef class Half:\n    cdef public object nxt\n",
             "plain.py": "z = 3\n", "other.py": "w = 4\n"}
    for name, text in files.items():
        (package / name).write_text(text)
    flows, plain = str(package / "flows.py"), str(package / "plain.py")
    assert compiled.source_digest(plain) == hashlib.sha256(b"z = 3\n").hexdigest()  # no .pxd: the .py alone
    before = compiled.source_digest(flows)
    assert before != hashlib.sha256(b"x = 1\n").hexdigest()
    seen = {before}
    for name, text in [("flows.pxd", files["flows.pxd"] + "# typed\n"), ("halves.pxd", "cdef class Half:\n    pass\n"),
                       ("halves.py", "y = 3\n"), ("flows.py", "x = 2\n")]:
        (package / name).write_text(text)
        digest = compiled.source_digest(flows)
        assert digest not in seen, name
        seen.add(digest)
    (package / "other.py").write_text("w = 5\n")  # not cimported: no matter
    assert compiled.source_digest(flows) == digest
    moved = tmp_path / "elsewhere"
    shutil.copytree(tmp_path / "kwire", moved / "kwire")
    assert compiled.source_digest(str(moved / "kwire" / "tcp" / "flows.py")) == digest  # the place does not count


def test_the_digest_is_the_same_however_the_path_is_spelled(monkeypatch):
    """setup.py digests the sources by the relative paths cythonize is given, kwire.compiled by absolute ones: a
    module that cimports another's declarations ordered its files by the path as given, so the two differed and
    18 freshly built modules ran from their .py."""
    monkeypatch.chdir(ROOT)
    for module in ("kwire/analytics/aggregate.py", "kwire/native/tcp_flows.py", "kwire/net/layout.py"):
        assert compiled.source_digest(module) == compiled.source_digest(str(ROOT / module)), module


def test_the_finder_reads_each_source_once_and_finds_the_same_digests(monkeypatch):
    """The finder's memo (one per process): every core module's digest with it is the digest without it, and
    no source file is opened twice, though the modules' declarations cimport the same files (analytics)."""
    fresh = {path: compiled.source_digest(str(ROOT / path)) for path in compiled.CORE}
    opened: list[str] = []
    real_open = open

    def counting_open(path, *args, **kwargs):
        opened.append(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(compiled, "open", counting_open, raising=False)
    memo: dict = {}
    memoized = {path: compiled.source_digest(str(ROOT / path), memo) for path in fresh}
    assert memoized == fresh
    sources = [path for path in opened if path.endswith(".py")]
    assert len(sources) == len(set(sources)) and len(sources) >= len(fresh)
    assert len(opened) == len(set(opened))


def test_a_module_runs_from_source_when_declarations_it_depends_on_changed(needs_compiled_core, tmp_path):
    """In a copy of the built package, an edit of kwire/native/tcp_reassembly.pxd (HalfStream's fields) makes
    reassembly and the modules whose compiled form reads those fields (flows, fused) run from their .py,
    together; the others stay compiled, and the packet path still gives the same exchanges."""
    built = built_modules()
    typed = ("kwire.native.tcp_reassembly", "kwire.native.tcp_flows", "kwire.native.fused")
    if not all(name in built for name in typed):
        pytest.skip("the typed modules were not compiled here")
    py_only = hashlib.sha256((ROOT / "kwire" / "native" / "tcp_flows.py").read_bytes()).hexdigest()
    assert built["kwire.native.tcp_flows"] == compiled.source_digest(str(ROOT / "kwire" / "native" / "tcp_flows.py")) != py_only
    copy = tmp_path / "kwire"
    shutil.copytree(ROOT / "kwire", copy, ignore=shutil.ignore_patterns("__pycache__", "*.c"))
    with open(copy / "native" / "tcp_reassembly.pxd", "a") as f:
        f.write("# edited\n")
    code = ("import kwire.native.fused as f, kwire.native.tcp_flows as t, kwire.native.tcp_reassembly as r, kwire.native.framing as k; "
            "print(f.__file__, t.__file__, r.__file__, k.__file__); "
            "from kwire.pipeline import Pipeline; print(Pipeline)")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    env.pop(compiled.PURE_ENV, None)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    fused, flows, reassembly, framing = result.stdout.split()[:4]
    assert fused.endswith("fused.py") and flows.endswith("flows.py") and reassembly.endswith("reassembly.py")
    assert framing.endswith(".so")
    capture = str(ROOT / "captures" / "bulk-fetch.pcap")
    argv = [sys.executable, "-m", "kwire", "inspect", "--json", "-j", "0", "--no-summary", capture]
    edited = subprocess.run(argv, capture_output=True, env=env, cwd=tmp_path, timeout=300)
    here = subprocess.run(argv, capture_output=True, cwd=ROOT, timeout=300)
    assert edited.returncode == 0 and edited.stdout == here.stdout


def fresh_checkout(into: Path) -> Path:
    """The project's files as a clean checkout has them: no build folder, Cython output or built module."""
    shutil.copytree(ROOT, into, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", "*.c", "*.so",
        compiled.SOURCES_FILE, "captures", "tests"))
    return into


def test_without_a_compiler_the_wheel_is_pure_python_and_runs(tmp_path):
    env = dict(os.environ, CC="/bin/false")
    tree = fresh_checkout(tmp_path / "checkout")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(tree)],
                           capture_output=True, text=True, env=env, timeout=900)
    assert built.returncode == 0, built.stderr[-3000:]
    wheel, = tmp_path.glob("kwire-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "kwire/native/fused.py" in names and "kwire/compiled.py" in names
    assert not [n for n in names if n.endswith((".so", ".pyd", ".c"))]
    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    capture = ROOT / "captures" / "bulk-fetch.pcap"
    argv = ["-m", "kwire", "inspect", "--json", "-j", "0", "--no-summary", str(capture)]
    env = dict(os.environ, PYTHONPATH=str(target))
    env.pop(compiled.PURE_ENV, None)
    version = subprocess.run([sys.executable, "-m", "kwire", "--version"], capture_output=True, text=True,
                             env=env, cwd=tmp_path)
    assert "pure Python (no compiled core" in version.stdout, version.stdout + version.stderr
    from_wheel = subprocess.run([sys.executable, *argv], capture_output=True, env=env, cwd=tmp_path)
    here = subprocess.run([sys.executable, *argv], capture_output=True, cwd=ROOT)
    assert from_wheel.returncode == 0 and from_wheel.stdout == here.stdout
    assert hashlib.sha256(from_wheel.stdout).hexdigest() and from_wheel.stdout.count(b"\n") > 5
