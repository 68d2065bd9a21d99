"""kwire.spark.ship: the archive a cluster's executors get holds kwire as the driver runs it (built modules
included, Cython's C left out) and every package it imports, but Spark's own; it is made once and reused, and
made again when kwire changes. (tests/spark/test_cluster.py runs it on executors with nothing installed.)"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from kwire import compiled
from kwire.spark import ship


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("ship-cache")


@pytest.fixture
def shipped(cache, monkeypatch):
    monkeypatch.setenv("KWIRE_CACHE_DIR", str(cache))
    return ship.environment()


def test_dependencies_are_kwires_with_the_spark_extra_but_sparks_own():
    got = {d.metadata["Name"].lower().replace("_", "-") for d in ship.dependencies()}
    assert {"zstandard", "lz4", "cramjam", "crc32c", "cryptography", "rich", "click", "pyarrow", "pandas",
            "numpy", "markdown-it-py"} <= got  # markdown-it-py: rich's own
    assert not got & {"pyspark", "py4j", "pytest", "kio", "hypothesis"}  # Spark's; the test extra's


def test_the_archive_holds_kwire_as_it_runs_here(shipped):
    with tarfile.open(shipped.path) as tar:
        names = set(tar.getnames())
    assert {"kwire/__init__.py", "kwire/spark/ship.py", "pyspark_kwire/__init__.py", "pyarrow/__init__.py",
            "zstandard/__init__.py"} <= names
    assert not [n for n in names if n.endswith(".pyc") or n.startswith("../")]
    assert not [n for n in names if n.startswith("kwire/") and n.endswith(".c")]  # Cython's output
    built = {n for n in names if n.startswith("kwire/") and n.endswith(".so")}
    if compiled._built_from():
        assert "kwire/compiled-sources.txt" in names and built
    assert shipped.bytes == Path(shipped.path).stat().st_size
    assert f"{len(shipped.distributions)} packages" in shipped.line() and "MiB" in shipped.line()


def test_reused_until_kwire_changes(shipped, monkeypatch, tmp_path):
    again = ship.environment()
    assert (again.path, again.made) == (shipped.path, False)
    extra = tmp_path / "new.py"
    extra.write_text("")
    own = ship._own_files()
    monkeypatch.setattr(ship, "_own_files", lambda: own + [(extra, "kwire/new.py")])
    changed = ship.environment()
    assert changed.made and changed.path != shipped.path
    assert not Path(shipped.path).exists()  # the cache keeps one archive


def test_session_conf_puts_it_on_the_executors_path(shipped):
    conf = ship.session_conf(shipped)
    assert conf == {"spark.archives": f"{shipped.path}#{ship.ENV_NAME}", "spark.executorEnv.PYTHONPATH": ship.ENV_NAME}
