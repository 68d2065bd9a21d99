"""The build (setup.py, pyproject.toml): the profile-guided build runs kwire itself while it builds, in
pip's isolated build environment, so that environment must hold every dependency kwire imports; and it
trains on the bundled captures, so there must be some, of the kinds it looks for."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _names(requirements: list[str]) -> dict[str, str]:
    return {re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0].lower().replace("_", "-"): r for r in requirements}


def test_build_requires_every_dependency_at_the_same_bound():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    build = _names(config["build-system"]["requires"])
    for name, requirement in _names(config["project"]["dependencies"]).items():
        assert build.get(name) == requirement, f"[build-system] requires lacks {requirement!r} (the training run)"


def test_training_captures_are_bundled():
    captures = [p for p in (ROOT / "captures").rglob("*") if p.suffix in (".pcap", ".pcapng")]
    assert len(captures) >= 10
    setup = (ROOT / "setup.py").read_text(encoding="utf-8")
    assert 'p.endswith((".pcap", ".pcapng"))' in setup  # the training run's choice of files: the same kinds


def _setup_namespace(monkeypatch) -> dict:
    """setup.py's functions, without building: KWIRE_BUILD=pure (no Cython), setuptools.setup a no-op."""
    import runpy

    import setuptools

    monkeypatch.setenv("KWIRE_BUILD", "pure")
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: None)
    return runpy.run_path(str(ROOT / "setup.py"), run_name="kwire_setup_under_test")


class _Terminal:
    def __init__(self):
        self.text = ""

    def __call__(self, path, mode="r", encoding=None):
        assert path == "/dev/tty" and mode == "w"
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def write(self, text):
        self.text += text


def test_a_build_note_reaches_the_terminal_that_pip_hides_stderr_from(monkeypatch, capsys):
    """pip shows a backend's stderr only with -v: the note goes to the terminal itself when there is one."""
    namespace = _setup_namespace(monkeypatch)
    note = namespace["note"]
    terminal = _Terminal()
    monkeypatch.setitem(note.__globals__, "open", terminal)
    note("the C compiler builds 70 modules")
    assert terminal.text == "\nkwire: the C compiler builds 70 modules\n" and capsys.readouterr().err == ""

    def no_terminal(*args, **kwargs):
        raise OSError(6, "No such device or address")

    monkeypatch.setitem(note.__globals__, "open", no_terminal)  # CI, a container build: the build log has it
    note("the C compiler builds 70 modules")
    assert capsys.readouterr().err == "kwire: the C compiler builds 70 modules\n"


def test_the_translation_note_names_only_modules_cython_writes_again(monkeypatch, tmp_path):
    import os

    stale = _setup_namespace(monkeypatch)["_stale"]
    fresh, edited, new = (tmp_path / f"{name}.py" for name in ("fresh", "edited", "new"))
    for path in (fresh, edited, new):
        path.write_text("x = 1\n")
    for path in (fresh, edited):
        path.with_suffix(".c").write_text("/* C */\n")
    os.utime(edited.with_suffix(".c"), (1, 1))  # older than its .py
    assert stale([str(fresh), str(edited), str(new)]) == [str(edited), str(new)]


def test_readme_says_what_the_install_compiles_and_how_long_the_notes_say(monkeypatch):
    """The Quick start's figures are setup.py's: the modules it compiles, the minutes its notes give."""
    import runpy

    namespace = _setup_namespace(monkeypatch)
    core = [p for p in runpy.run_path(str(ROOT / "kwire" / "compiled.py"))["CORE"] if not p.endswith("__init__.py")]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    total = namespace["about"](namespace["TRANSLATE_S"] + namespace["COMPILE_S"])
    assert namespace["TRANSLATE_S"] > 0 and namespace["COMPILE_S"] > 0
    from kwire.codec.aot_build import module_sources

    assert f"{len(core)} modules and {len(module_sources())} message decoders, {total} on 2 cores" in readme
    assert "pip install -v ." in readme
