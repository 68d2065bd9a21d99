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
"""

from __future__ import annotations

import glob
import os
import runpy
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

_HERE = os.path.dirname(os.path.abspath(__file__))
_COMPILED = runpy.run_path(os.path.join(_HERE, "kwire", "compiled.py"), run_name="kwire_compiled_for_setup")
# -O1 after Python's own -O3: half gcc's time at install for 1 % more instructions than -O3 (callgrind, kwire
# stats on 20,009 small Produce exchanges: 7.58 G against 7.49 G; pure Python 8.96 G)
OPTIMIZE = ("-O1",)
DIRECTIVES = {"language_level": 3, "annotation_typing": False, "binding": True, "embedsignature": False}


def core_sources() -> list[str]:
    found: list[str] = []
    for pattern in _COMPILED["CORE"]:
        found += [p for p in sorted(glob.glob(pattern)) if not p.endswith("__init__.py")]
    return found


def has_c_compiler() -> bool:
    """Whether the C compiler build_ext would use (CC honoured) compiles a trivial file."""
    import tempfile

    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    try:
        compiler = new_compiler()
        customize_compiler(compiler)
        with tempfile.TemporaryDirectory() as folder:
            probe = os.path.join(folder, "probe.c")
            with open(probe, "w") as f:
                f.write("int kwire_probe(void) { return 0; }\n")
            compiler.compile([probe], output_dir=folder)
        return True
    except Exception:
        return False


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
    extensions = cythonize(core_sources() + decoder_extensions(), compiler_directives=DIRECTIVES,
                           nthreads=os.cpu_count() or 1, quiet=True)
    for extension in extensions:
        extension.extra_compile_args = list(OPTIMIZE)
    return extensions


def decoder_extensions() -> list:
    """kwire.codec._aot_*: the decoders of the hot messages, compiled ahead of time (kwire.codec.aot). Their
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

    def run(self) -> None:
        self.built: dict[str, str] = {}
        try:
            super().run()
        except Exception as e:  # no compiler at all (distutils' CompileError, PlatformError, OSError)
            print(f"kwire: no compiled core ({type(e).__name__}: {e}); kwire runs as pure Python")
        self._write_sources()

    def build_extension(self, ext) -> None:
        try:
            super().build_extension(ext)
        except Exception as e:
            print(f"kwire: {ext.name} not compiled ({type(e).__name__}: {e}); it runs from its .py")
            return
        source = os.path.join(_HERE, *ext.name.split(".")) + ".py"
        if os.path.exists(source):  # not the decoders (kwire.codec.aot): each checks its own source's digest
            self.built[ext.name] = _COMPILED["source_digest"](source)  # the .pxd files it depends on too

    def _write_sources(self) -> None:
        for name in sorted(self.built):  # a module that reads another's fields in C needs that one compiled
            source = os.path.join(_HERE, *name.split("."))
            if os.path.exists(source + ".pxd"):
                core = set(_COMPILED["CORE"])  # a cimported .pxd of inline C alone (kwire/c_reads.pxd) needs no module
                needs = [os.path.relpath(m, _HERE).replace(os.sep, ".")
                         for m in _COMPILED["_depends_on"](source + ".pxd", _HERE)
                         if os.path.relpath(m, _HERE).replace(os.sep, "/") + ".py" in core]
                if any(m not in self.built for m in needs):
                    print(f"kwire: {name} runs from its .py: a module it cimports was not compiled")
                    del self.built[name]
        package_dir = os.path.dirname(self.get_ext_fullpath("kwire.compiled"))
        os.makedirs(package_dir, exist_ok=True)
        path = os.path.join(package_dir, _COMPILED["SOURCES_FILE"])
        with open(path, "w", encoding="ascii") as f:
            f.writelines(f"{name} {digest}\n" for name, digest in sorted(self.built.items()))


setup(ext_modules=core_extensions(), cmdclass={"build_ext": OptionalBuildExt})
