"""The on-disk cache of compiled decoders: written once, loaded after, never in the way."""

import builtins
import importlib.util
import marshal
import os

import pytest

from kwire.codec import code_cache, compiler
from kwire.codec.schemas import schema_for
from tests.codec.test_records_encoder import uvarint

SCHEMA = schema_for(18, "request")  # ApiVersionsRequest
VERSION = 3
# v3 (flexible): compact strings ClientSoftwareName, ClientSoftwareVersion, then no tagged fields.
BODY = uvarint(len(b"kwire") + 1) + b"kwire" + uvarint(len(b"1.2.3") + 1) + b"1.2.3" + b"\x00"
EXPECTED = ({"ClientSoftwareName": "kwire", "ClientSoftwareVersion": "1.2.3"}, len(BODY))


@pytest.fixture
def compiles(monkeypatch, tmp_path):
    """The cache in tmp_path/cache, fresh per-process state; counts the compile() calls made."""
    calls = []

    def counting_compile(*args, **kwargs):
        calls.append(args[1])
        return builtins.compile(*args, **kwargs)

    monkeypatch.setattr(code_cache, "compile", counting_compile, raising=False)
    monkeypatch.setattr(code_cache, "_CACHE_ROOM", {})
    monkeypatch.setenv("KWIRE_CACHE_DIR", str(tmp_path / "cache"))
    return calls


def build(version=VERSION):
    """A decoder built from scratch (no in-memory cache), and what it makes of BODY."""
    fn, _ = compiler._Generator(SCHEMA, version).build()
    return fn(memoryview(BODY), 0)


def files(folder):
    return sorted(folder.iterdir()) if folder.exists() else []


def test_first_build_writes_second_loads(compiles, tmp_path):
    cache = tmp_path / "cache"
    assert build() == EXPECTED
    assert len(compiles) == 1
    [written] = files(cache)
    assert oct(cache.stat().st_mode & 0o777) == oct(0o700)
    mtime = written.stat().st_mtime_ns

    assert build() == EXPECTED
    assert len(compiles) == 1  # loaded, not compiled
    assert files(cache) == [written] and written.stat().st_mtime_ns == mtime


def test_decoder_for_with_fresh_module_caches_loads_from_disk(compiles, monkeypatch, tmp_path):
    for _ in range(2):
        monkeypatch.setattr(compiler, "_COMPILED", {})
        monkeypatch.setattr(compiler, "_DECODERS", {})
        assert compiler.decoder_for(SCHEMA, VERSION)(BODY) == EXPECTED
    assert len(compiles) == 1
    assert len(files(tmp_path / "cache")) == 1


def test_one_file_per_version_and_python(compiles, monkeypatch, tmp_path):
    build(3)
    build(4)
    assert len(files(tmp_path / "cache")) == 2
    monkeypatch.setattr(importlib.util, "MAGIC_NUMBER", b"\xff\xff\r\n")  # another bytecode format
    assert build(3) == EXPECTED
    assert len(compiles) == 3
    assert len(files(tmp_path / "cache")) == 3


@pytest.mark.parametrize("damage", [
    lambda data: b"",                                       # empty
    lambda data: data[: len(data) // 2],                    # truncated
    lambda data: b"\x00" * len(data),                       # garbage
    lambda data: data[:-8] + bytes(b ^ 0x55 for b in data[-8:]),  # flipped bytes that may unmarshal
    lambda data: data[:32] + marshal.dumps(("not", "code")),  # digest no longer matches
])
def test_damaged_file_is_recompiled_and_rewritten(compiles, tmp_path, damage):
    build()
    [path] = files(tmp_path / "cache")
    path.write_bytes(damage(path.read_bytes()))
    assert build() == EXPECTED
    assert len(compiles) == 2
    assert build() == EXPECTED  # rewritten: loaded again
    assert len(compiles) == 2


def test_a_marshalled_non_code_object_is_refused(compiles, tmp_path):
    build()
    [path] = files(tmp_path / "cache")
    payload = marshal.dumps({"not": "code"})
    path.write_bytes(code_cache.sha256(payload).digest() + payload)  # a valid file of the wrong type
    assert build() == EXPECTED
    assert len(compiles) == 2


def test_a_payload_not_matching_its_digest_is_refused(compiles, tmp_path):
    build()
    [path] = files(tmp_path / "cache")
    data = path.read_bytes()
    other = marshal.dumps(compile("def decode(buf, pos=0): return 'wrong', 0", "x", "exec"))
    path.write_bytes(data[:32] + other)  # a loadable code object, but not the one digested
    assert build() == EXPECTED
    assert len(compiles) == 2


def test_empty_dir_setting_disables_the_cache(compiles, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KWIRE_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert build() == EXPECTED
    assert build() == EXPECTED
    assert len(compiles) == 2
    assert files(tmp_path) == []


def test_default_location_is_under_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.delenv("KWIRE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert code_cache._cache_dir() == os.path.join(str(tmp_path), "kwire", "decoders")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert code_cache._cache_dir() == os.path.join(str(tmp_path), ".cache", "kwire", "decoders")


def test_unusable_dir_still_decodes(compiles, monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")
    for folder in (blocker, blocker / "below"):  # neither can be a directory
        monkeypatch.setenv("KWIRE_CACHE_DIR", str(folder))
        assert build() == EXPECTED
    assert len(compiles) == 2
    assert blocker.read_bytes() == b""


def test_failed_write_leaves_nothing_behind(compiles, monkeypatch, tmp_path):
    def refuse(src, dst):
        raise PermissionError(dst)

    monkeypatch.setattr(code_cache.os, "replace", refuse)
    assert build() == EXPECTED
    assert files(tmp_path / "cache") == []  # the temporary file was removed


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_dir_still_decodes(compiles, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o500)
    try:
        assert build() == EXPECTED
        assert build() == EXPECTED
    finally:
        cache.chmod(0o700)
    assert len(compiles) == 2 and files(cache) == []


def test_full_dir_gets_no_more_files(compiles, monkeypatch, tmp_path):
    monkeypatch.setattr(code_cache, "_CACHE_MAX_FILES", 3)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "someone-else").write_bytes(b"")
    for version in range(5):
        build(version)
    assert len(files(cache)) == 3


def test_a_full_cache_keeps_its_newer_half_and_stores_again(compiles, monkeypatch, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setattr(code_cache, "_CACHE_MAX_FILES", 4)
    for i in range(4):  # older kwires' decoders, written at times 1..4
        old = cache / f"old{i}"
        old.write_bytes(b"x")
        os.utime(old, ns=(i + 1, i + 1))
    assert build() == EXPECTED
    names = [p.name for p in files(cache)]
    assert "old0" not in names and "old1" not in names and {"old2", "old3"} <= set(names)
    assert len(names) == 3  # the newer half, and this decoder
    assert build() == EXPECTED and len(compiles) == 1  # loaded from the cache
