"""kwire's build: the pure-Python package, and its compiled core wherever it can be built.

`pip install .` (or `pip install -e .`) compiles the modules kwire.compiled.CORE names with Cython, as
they are (the same .py files: Cython's pure-Python mode with no annotation typing, so a compiled
module behaves as its source does; the packet path's hot classes and loops are typed by the .pxd
files beside their .py, Cython's augmenting declarations, which pure Python never reads), when a C
compiler is there. Each module is optional: one that does not build is skipped and runs from its .py,
as the whole package does when no compiler is there, or when KWIRE_BUILD=pure is set (and so does a
module whose declarations cimport one that did not build). It also compiles the decoders of the messages most
traffic is made of (kwire.codec.aot: generated here from the schemas, each checked at run time against the
source the generator makes then). The digest of every source compiled (its
.py, and its declarations with those they cimport: kwire.compiled.source_digest) goes into
kwire/compiled-sources.txt; kwire runs a compiled module only while those files are unchanged
(kwire/compiled.py). `kwire --version` says what runs compiled.

What the build says: pip shows a build backend's output only with `pip install -v` (else its spinner,
"Building wheel for kwire (pyproject.toml) ... -", for the minutes the compiler takes). So the two long
steps, Cython's translation (when the modules' C is not there yet or is older than their .py) and the C
compiler's, each say once when they start what they compile and how long that usually takes (`note`): when
stderr is not a terminal (pip holds it) but the process has one, on the terminal itself (/dev/tty), which is
what reaches someone running `pip install .`; else on stderr (`pip install -v`, a build log: CI, a container
build). Each module's progress goes to stderr only: `pip install -v .` shows it.
"""

from __future__ import annotations

import glob
import os
import runpy
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from setuptools import setup
from setuptools.command.build_ext import build_ext

_HERE = os.path.dirname(os.path.abspath(__file__))
_COMPILED = runpy.run_path(os.path.join(_HERE, "kwire", "compiled.py"), run_name="kwire_compiled_for_setup")
# -O1 after Python's own -O3 where the build is not profile-guided: half gcc's time at install for 1 % more
# instructions than -O3 (callgrind, kwire stats on 20,009 small Produce exchanges: 7.58 G against 7.49 G; pure
# Python 8.96 G). -g0 after Python's -g: no debug information, which took gcc a third of its time (parallel.c:
# 4.4 s of CPU with it, 3.1 s without) and nobody at install reads.
OPTIMIZE = ("-O1", "-g0")
# Profile-guided, for packagers (KWIRE_PGO=1, GCC 10 or later): the core is built instrumented, runs `kwire stats`
# and `kwire inspect --json` on the bundled captures, and is built again at -O2 from what that run counted. Hot
# paths laid out together, cold ones apart: on 19,217 exchanges of small Produce traffic (callgrind with its
# cache model) 9 % fewer estimated cycles than -O1, a quarter fewer instruction-cache misses (docs/speed.md).
PGO_OPTIMIZE = ("-O2", "-g0")
PGO_GENERATE = ("-fprofile-generate={}", "-fprofile-update=single")
PGO_USE = ("-fprofile-use={}", "-fprofile-partial-training", "-Wno-missing-profile")
PGO_COMMANDS = (("stats", "--json", "-j", "0"), ("inspect", "--json", "-j", "0"))
DIRECTIVES = {"language_level": 3, "annotation_typing": False, "binding": True, "embedsignature": False}
# What the two steps usually take, for the notes: `pip wheel --no-deps -v .` of a clean checkout on a 2-core VM,
# otherwise idle (2026-12-03, GCC 12, -O1, -g0): Cython translated the 49 core modules and 14 decoders in 11 s, gcc
# compiled them in 66 s (87 s in all, 157 s of CPU); pip's isolated build environment adds its downloads, and
# the profile-guided build (KWIRE_PGO=1) compiles twice and trains in between.
TRANSLATE_S = 10
COMPILE_S = 70


def note(text: str) -> None:
    """One line of what the build does, where it reaches someone: on the terminal itself when stderr is not one
    (pip holds a backend's output) but the process has one; else on stderr (`pip install -v`, a build log)."""
    line = f"kwire: {text}"
    if not sys.stderr.isatty():
        try:
            with open("/dev/tty", "w", encoding="utf-8") as tty:
                tty.write(f"\n{line}\n")
            return
        except OSError:  # no terminal: CI, a container build, a service
            pass
    print(line, file=sys.stderr, flush=True)


def about(seconds: float) -> str:
    """A usual duration in words: "about 10 s", "about 2 minutes"."""
    if seconds < 90:
        return f"about {max(10, round(seconds, -1)):.0f} s"
    return f"about {round(seconds / 60)} minutes"


def _stale(sources: list[str]) -> list[str]:
    """The sources whose C Cython writes again: none yet beside them, or older than the .py or its .pxd."""
    out = []
    for path in sources:
        c = os.path.splitext(path)[0] + ".c"
        inputs = [p for p in (path, os.path.splitext(path)[0] + ".pxd") if os.path.exists(p)]
        if not os.path.exists(c) or any(os.path.getmtime(p) > os.path.getmtime(c) for p in inputs):
            out.append(path)
    return out


def core_sources() -> list[str]:
    found: list[str] = []
    for pattern in _COMPILED["CORE"]:
        found += [p for p in sorted(glob.glob(pattern)) if not p.endswith("__init__.py")]
    return found


def has_c_compiler(flags: tuple[str, ...] = ()) -> bool:
    """Whether the C compiler build_ext would use (CC honoured) compiles a trivial file (with `flags`)."""
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    try:
        compiler = new_compiler()
        customize_compiler(compiler)
        with tempfile.TemporaryDirectory() as folder:
            probe = os.path.join(folder, "probe.c")
            with open(probe, "w") as f:
                f.write("int kwire_probe(void) { return 0; }\n")
            flags = [f.format(folder) for f in flags]
            compiler.compile([probe], output_dir=folder, extra_postargs=flags)
        return True
    except Exception:
        return False


def profile_guided() -> bool:
    """Whether to build the core profile-guided: asked for (KWIRE_PGO=1: it doubles the install's time, for
    about 10 % less CPU an exchange) and GCC's flags compile (clang's differ)."""
    if os.environ.get("KWIRE_PGO", "0") != "1":
        return False
    return has_c_compiler(PGO_OPTIMIZE + PGO_GENERATE) and has_c_compiler(PGO_OPTIMIZE + PGO_USE)


def core_extensions() -> list:
    if os.environ.get("KWIRE_BUILD", "") == "pure":
        return []
    if not has_c_compiler():
        print("kwire: no C compiler: no compiled core, kwire runs as pure Python")
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("kwire: Cython is not installed: no compiled core, kwire runs as pure Python")
        return []
    sources = core_sources()
    # each module's digest as Cython is about to read it: a source edited while the build runs then makes a
    # digest that the module built from the older text does not match, and that module runs from its .py
    _DIGESTS.update((_relative(path), _COMPILED["source_digest"](path)) for path in sources)
    decoders = decoder_extensions()
    stale = _stale(sources + [e.sources[0] for e in decoders])
    if stale:
        note(f"Cython translates {len(stale)} modules to C ({about(TRANSLATE_S)} on 2 cores), then the C compiler "
             f"builds them ({about(COMPILE_S)}); pip install -v . shows each step")
    return cythonize(sources + decoders, compiler_directives=DIRECTIVES,
                     nthreads=os.cpu_count() or 1, quiet=True)  # flags: OptionalBuildExt.run


_DIGESTS: dict[str, str] = {}  # core source ("kwire/native/fused.py") -> its source_digest when cythonize read it


def _relative(path: str) -> str:
    return os.path.relpath(os.path.abspath(path), _HERE).replace(os.sep, "/")


def decoder_extensions() -> list:
    """kwire.native._aot_*: the decoders of the hot messages, compiled ahead of time (kwire.codec.aot). Their
    source is generated here from the schemas (kwire.codec.aot_build) into build/kwire-aot, rewritten only
    when it changed (Cython and the compiler skip an unchanged module on a rebuild)."""
    from setuptools import Extension

    sys.path.insert(0, _HERE)
    try:
        from kwire.codec.aot_build import module_sources

        sources = module_sources()
    except Exception as e:  # the package itself is broken: say so, build the rest
        print(f"kwire: no compiled decoders ({type(e).__name__}: {e})")
        return []
    finally:
        sys.path.remove(_HERE)
    folder = os.path.join(_HERE, "build", "kwire-aot")
    os.makedirs(folder, exist_ok=True)
    extensions = []
    for name, text in sources.items():
        path = os.path.join(folder, name.rpartition(".")[2] + ".py")
        try:
            with open(path, encoding="utf-8") as f:
                same = f.read() == text
        except OSError:
            same = False
        if not same:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        extensions.append(Extension(name, [path]))
    return extensions


class OptionalBuildExt(build_ext):
    """build_ext where a module that does not compile is skipped, and the built ones are recorded."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1  # the modules compile independently
        self.compiler_choice = self.compiler  # build_ext.run replaces it by the compiler it made

    def run(self) -> None:
        if self.extensions and profile_guided():
            self._run_profile_guided()
        else:
            self._build(OPTIMIZE)

    def _build(self, flags: tuple[str, ...]) -> None:
        for extension in self.extensions:
            extension.extra_compile_args = list(flags)
            extension.extra_link_args = [f for f in flags if f.startswith("-fprofile-generate")]
        self.built: dict[str, str] = {}
        self._pending = {e.name for e in self._to_compile()}  # what this run compiles, for the progress lines
        self._compiled, self._since, self._lock = 0, time.monotonic(), threading.Lock()
        if self._pending:
            note(f"the C compiler builds {len(self._pending)} modules ({about(COMPILE_S)} on 2 cores); "
                 "pip install -v . shows each one")
        self.compiler = self.compiler_choice
        try:
            super().run()
        except Exception as e:  # no compiler at all (distutils' CompileError, PlatformError, OSError)
            print(f"kwire: no compiled core ({type(e).__name__}: {e}); kwire runs as pure Python")
        self._write_sources()

    def _run_profile_guided(self) -> None:
        """Built instrumented, trained on the bundled captures, built again from the counts; built plainly
        (OPTIMIZE) when the training run fails."""
        counts = os.path.abspath(os.path.join(self.build_temp, "kwire-pgo"))
        shutil.rmtree(counts, ignore_errors=True)
        self._build(PGO_OPTIMIZE + tuple(f.format(counts) for f in PGO_GENERATE))
        trained = self._train()
        self.force = True  # every module again: the same sources, other flags
        if trained and glob.glob(os.path.join(counts, "**", "*.gcda"), recursive=True):
            self._build(PGO_OPTIMIZE + tuple(f.format(counts) for f in PGO_USE))
        else:
            why = "failed" if not trained else "counted nothing"
            print(f"kwire: the profile-guided build's training run {why}; the core is built without it")
            self._build(OPTIMIZE)

    def _train(self) -> bool:
        """Runs PGO_COMMANDS on the bundled captures with the instrumented modules just built: in a copy of
        the package (its sources and the built files), so that they, not an older build, are imported."""
        captures = sorted(p for p in glob.glob(os.path.join(_HERE, "captures", "**", "*"), recursive=True)
                          if p.endswith((".pcap", ".pcapng")))
        if not captures or not self.built:
            return False
        with tempfile.TemporaryDirectory() as folder:
            shutil.copytree(os.path.join(_HERE, "kwire"), os.path.join(folder, "kwire"),
                            ignore=shutil.ignore_patterns("*.so", "*.pyd", "*.c", "__pycache__"))
            for extension in self.extensions:
                built = self.get_ext_fullpath(extension.name)
                if os.path.exists(built):
                    shutil.copy2(built, os.path.join(folder, *extension.name.split(".")[:-1]))
            shutil.copy2(self._sources_path(), os.path.join(folder, "kwire"))
            env = {k: v for k, v in os.environ.items() if k != "KWIRE_PURE"}
            # first on the path; what is there already stays (pip's isolated build environment is found through it)
            env["PYTHONPATH"] = os.pathsep.join(p for p in (folder, os.environ.get("PYTHONPATH")) if p)
            for command in PGO_COMMANDS:
                try:  # ~5 s each on a 2-core VM: ten minutes is a hang, not a slow machine
                    run = subprocess.run([sys.executable, "-m", "kwire", *command, *captures], cwd=folder, env=env,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
                    failure = run.returncode and (run.stderr.strip().splitlines() or ["?"])[-1]
                except (OSError, subprocess.SubprocessError) as e:
                    failure = f"{type(e).__name__}: {e}"
                if failure:
                    print(f"kwire: training run `kwire {' '.join(command)}` failed: {failure}")
                    return False
        return True

    def _sources_path(self) -> str:
        """kwire/compiled-sources.txt where this build puts its modules (kwire.compiled reads it)."""
        return os.path.join(os.path.dirname(self.get_ext_fullpath("kwire.compiled")), _COMPILED["SOURCES_FILE"])

    def _to_compile(self) -> list:
        """The extensions this run compiles: all when forced, else those older than a source they depend on."""
        from setuptools._distutils.dep_util import newer_group

        return [e for e in self.extensions if self.force or newer_group(
            list(e.sources) + list(e.depends or ()), self.get_ext_fullpath(e.name), "newer")]

    def _compiled_one(self, name: str) -> None:
        """Progress on stderr (pip install -v shows it): "kwire: compiled kwire.x (12 of 70, 40 s)"."""
        pending = getattr(self, "_pending", ())
        if name not in pending:
            return
        with self._lock:  # build_ext compiles in threads (parallel)
            self._compiled += 1
            took = time.monotonic() - self._since
            print(f"kwire: compiled {name} ({self._compiled} of {len(pending)}, {took:.0f} s)", file=sys.stderr,
                  flush=True)

    def build_extension(self, ext) -> None:
        try:
            super().build_extension(ext)
        except Exception as e:
            print(f"kwire: {ext.name} not compiled ({type(e).__name__}: {e}); it runs from its .py")
            return
        finally:
            self._compiled_one(ext.name)
        source = "/".join(ext.name.split(".")) + ".py"
        if source in _DIGESTS:  # not the decoders (kwire.codec.aot): each checks its own source's digest
            self.built[ext.name] = _DIGESTS[source]  # the .pxd files it depends on too

    def _write_sources(self) -> None:
        for name in sorted(self.built):  # a module that reads another's fields in C needs that one compiled
            source = os.path.join(_HERE, *name.split("."))
            if os.path.exists(source + ".pxd"):
                core = set(_COMPILED["CORE"])  # a cimported .pxd of inline C alone (kwire/native/c_reads.pxd) needs no module
                needs = [os.path.relpath(m, _HERE).replace(os.sep, ".")
                         for m in _COMPILED["_depends_on"](source + ".pxd", _HERE)
                         if os.path.relpath(m, _HERE).replace(os.sep, "/") + ".py" in core]
                if any(m not in self.built for m in needs):
                    print(f"kwire: {name} runs from its .py: a module it cimports was not compiled")
                    del self.built[name]
        path = self._sources_path()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="ascii") as f:
            f.writelines(f"{name} {digest}\n" for name, digest in sorted(self.built.items()))


setup(ext_modules=core_extensions(), cmdclass={"build_ext": OptionalBuildExt})
