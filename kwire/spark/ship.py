"""What `kwire spark` ships to a cluster's executors: the driver's kwire, as it runs there (its compiled core
included), and every package it imports, packed once into one archive Spark unpacks beside each executor.

Spark's way for Python code with native parts (its "Python Package Management" guide) is an archive in
`spark.archives`, unpacked in each executor's working directory under the name after its `#`, and put on the
executors' Python path (`spark.executorEnv.PYTHONPATH`). A zip given to `addPyFile` cannot hold native code
(Python does not import an extension module from a zip), so it would run kwire as pure Python, and only where
its dependencies are installed.

`environment()` packs, from the driver's own installation:
- kwire and pyspark_kwire: their package folders, the `.py` files and the built modules (`.so`) with the
  digests that say which are current (kwire/compiled-sources.txt; Cython's `.c` output left out);
- the distributions kwire requires with its `spark` extra, and theirs, as installed (their RECORD's files
  inside site-packages), but pyspark and py4j, which Spark puts on the executors' path itself.

The archive is a tar.gz (gzip level 1: a third of the bytes for a few seconds, once) in kwire's cache folder ($KWIRE_CACHE_DIR, else ~/.cache/kwire), named by a
digest of what it holds (each distribution's name and version, each of kwire's files' path, size and mtime), so
it is made once per installation and reused; `Shipped` says what it is and how big. The executors need the
driver's Python (the same version and platform: the built modules and the packages' native parts are for it);
an executor whose Python differs fails its first task with Python's own ImportError, which `kwire spark` reports.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import sys
import sysconfig
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

ENV_NAME = "kwire_env"  # the folder the archive is unpacked to, in each executor's working directory
SPARK_OWN = frozenset({"pyspark", "py4j"})  # Spark puts these on its executors' path
OWN_PACKAGES = ("kwire", "pyspark_kwire")
_SKIP_SUFFIXES = (".c", ".pyc")


@dataclass(frozen=True)
class Shipped:
    path: str
    bytes: int
    distributions: tuple[str, ...]  # "name version", kwire's dependencies
    python: str  # the Python the archive's native parts are for (cp311-x86_64-linux-gnu)
    made: bool  # made now (else reused from the cache)

    def line(self) -> str:
        mib = self.bytes / (1 << 20)
        how = "packed" if self.made else "reused"
        return (f"shipping kwire and {len(self.distributions)} packages to the executors ({mib:,.0f} MiB, for "
                f"{self.python}; {how} {self.path})")


def _name(requirement: str) -> tuple[str, str]:
    """(distribution name, marker text) of a Requires-Dist line."""
    spec, _, marker = requirement.partition(";")
    name = spec.strip()
    for stop in "<>=!~[ (":
        name = name.split(stop, 1)[0]
    return name.strip(), marker.strip()


def _wanted(marker: str, extras: tuple[str, ...]) -> bool:
    if not marker:
        return True
    from packaging.markers import Marker

    m = Marker(marker)
    return any(m.evaluate({"extra": extra}) for extra in extras or ("",))


def _key(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def dependencies(top: str = "kwire", extras: tuple[str, ...] = ("spark",)) -> list[md.Distribution]:
    """The installed distributions `top` needs with `extras`, and theirs, by name; Spark's own left out."""
    seen: dict[str, md.Distribution] = {}
    todo = [(top, extras)]
    while todo:
        name, wanted_extras = todo.pop()
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue  # an optional dependency not installed here: the driver runs without it too
        for requirement in dist.requires or ():
            dep, marker = _name(requirement)
            if _key(dep) in seen or _key(dep) in SPARK_OWN or not _wanted(marker, wanted_extras):
                continue
            try:
                seen[_key(dep)] = md.distribution(dep)
            except md.PackageNotFoundError:
                continue
            todo.append((dep, ()))
    return sorted(seen.values(), key=lambda d: _key(d.metadata["Name"]))


def _dist_files(dist: md.Distribution) -> list[tuple[Path, str]]:
    """(file, name in the archive) of a distribution's installed files inside its site-packages."""
    out = []
    for f in dist.files or ():
        if ".." in f.parts or f.suffix == ".pyc":
            continue  # scripts in bin/, the bytecode cache
        full = Path(dist.locate_file(f))
        if full.is_file():
            out.append((full, f.as_posix()))
    return out


def _own_files() -> list[tuple[Path, str]]:
    """kwire's and pyspark_kwire's files as the driver imports them (an editable install's source tree too)."""
    import kwire
    import pyspark_kwire

    out = []
    for package, module in zip(OWN_PACKAGES, (kwire, pyspark_kwire)):
        root = Path(module.__file__).resolve().parent
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in sorted(files):
                if not name.endswith(_SKIP_SUFFIXES):
                    full = Path(folder) / name
                    out.append((full, f"{package}/{full.relative_to(root).as_posix()}"))
    return out


def _digest(dists: list[md.Distribution], own: list[tuple[Path, str]]) -> str:
    h = hashlib.sha256(sys.version.encode())
    for dist in dists:
        h.update(f"{dist.metadata['Name']} {dist.version}\n".encode())
    for full, arc in own:
        st = full.stat()
        h.update(f"{arc} {st.st_size} {st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    base = os.environ.get("KWIRE_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "kwire")
    return Path(base) / "spark"


def python_tag() -> str:
    return f"cp{sys.version_info[0]}{sys.version_info[1]}-{sysconfig.get_config_var('MULTIARCH') or sys.platform}"


def environment() -> Shipped:
    """The archive of kwire and its dependencies for this driver's installation (made once, then reused)."""
    dists = dependencies()
    own = _own_files()
    target = cache_dir() / f"kwire-env-{_digest(dists, own)}.tar.gz"
    names = tuple(f"{d.metadata['Name']} {d.version}" for d in dists)
    if target.exists():
        return Shipped(str(target), target.stat().st_size, names, python_tag(), made=False)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=target.name + ".", dir=target.parent)
    os.close(fd)
    try:
        with tarfile.open(partial, "w:gz", compresslevel=1, format=tarfile.PAX_FORMAT) as tar:
            added: set[str] = set()
            for full, arc in own + [f for d in dists for f in _dist_files(d)]:
                if arc not in added:
                    added.add(arc)
                    tar.add(full, arcname=arc, recursive=False)
        os.replace(partial, target)
        _forget_others(target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return Shipped(str(target), target.stat().st_size, names, python_tag(), made=True)


def _forget_others(kept: Path) -> None:
    """Archives of this cache made for an earlier state of the installation: one is kept, the newest."""
    for old in kept.parent.glob("kwire-env-*.tar.gz"):
        if old != kept:
            try:
                old.unlink()
            except OSError:
                pass


def executor_report(_=None) -> str:
    """What an executor runs: its Python and which of kwire's modules run compiled (kwire.compiled.report)."""
    from kwire import compiled

    return f"{python_tag()}: {compiled.report()}"


def session_conf(shipped: Shipped) -> dict[str, str]:
    """The SparkSession settings that put the archive on every executor's Python path."""
    return {"spark.archives": f"{shipped.path}#{ENV_NAME}", "spark.executorEnv.PYTHONPATH": ENV_NAME}


def main() -> int:
    """`python -m kwire.spark.ship`: pack (or find) the archive and print spark-submit's options for it."""
    shipped = environment()
    print(shipped.line(), file=sys.stderr)
    conf = session_conf(shipped)
    print(f"--archives {conf['spark.archives']} --conf spark.executorEnv.PYTHONPATH={ENV_NAME}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
