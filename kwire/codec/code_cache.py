"""The on-disk cache of the decoders kwire.codec.compiler generates: compile() once per machine.

`compiled_code(source, label)` is compile(source, label, "exec"), loaded from disk when it is there:
one file per sha256 of (source, label, Python's cache tag and bytecode magic), in $KWIRE_CACHE_DIR
(empty: no disk cache), else $XDG_CACHE_HOME/kwire/decoders, else ~/.cache/kwire/decoders; at most
_CACHE_MAX_FILES files: the first write of a process to a full directory removes its older half (by time written),
so decoders of a newer kwire still get cached after many upgrades. It holds only code objects compiled here from kwire's own generated source,
never captured data, so marshal is the right format; a file's payload is checked against a digest
stored with it. Every failure (no directory, unwritable, corrupt or foreign file) falls back to
compile(): the cache never raises.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import sys
import types

try:  # the builtin sha256 (the same digests): importing hashlib loads OpenSSL, 3-5 ms at each start
    from _sha2 import sha256  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # Python 3.11
    except ImportError:
        from hashlib import sha256


_CACHE_MAX_FILES = 2000
_CACHE_ROOM: dict[str, int] = {}  # directory -> files this process may still write there


def _cache_dir() -> str:
    """Where compiled code is kept; "" for nowhere."""
    folder = os.environ.get("KWIRE_CACHE_DIR")
    if folder is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "kwire", "decoders")
    return folder


def compiled_code(source: str, label: str) -> types.CodeType:
    """compile(source, label, "exec"), loaded from the disk cache when it is there."""
    folder = _cache_dir()
    if not folder:
        return compile(source, label, "exec")
    key = sha256("\0".join((source, label, str(sys.implementation.cache_tag))).encode()
                 + importlib.util.MAGIC_NUMBER).hexdigest()
    path = os.path.join(folder, key)
    try:
        with open(path, "rb") as f:
            data = f.read()
        # A digest of the payload first: a damaged file that still unmarshals is refused too.
        if sha256(data[32:]).digest() == data[:32]:
            code = marshal.loads(data[32:])
            if isinstance(code, types.CodeType):
                return code
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = compile(source, label, "exec")
    _cache_store(folder, path, code)
    return code


def _keep_newest(folder: str, keep: int) -> int:
    """Remove all but the `keep` files of `folder` written last; how many files it holds then."""
    entries = []
    for entry in os.scandir(folder):
        try:
            entries.append((entry.stat().st_mtime_ns, entry.path))
        except OSError:
            continue
    entries.sort(reverse=True)
    for _, path in entries[keep:]:
        try:
            os.unlink(path)
        except OSError:
            pass
    return len(os.listdir(folder))


def _cache_store(folder: str, path: str, code: types.CodeType) -> None:
    """Write `code` to `path` atomically (a temporary file in the same directory, then replace)."""
    try:
        room = _CACHE_ROOM.get(folder)
        if room is None:  # the first write of this process there: count what the directory holds
            os.makedirs(folder, 0o700, exist_ok=True)
            room = _CACHE_MAX_FILES - len(os.listdir(folder))
            if room <= 0:
                room = _CACHE_MAX_FILES - _keep_newest(folder, _CACHE_MAX_FILES // 2)
        _CACHE_ROOM[folder] = room - 1
        if room <= 0:
            return
        import tempfile  # only when writing: importing it costs milliseconds at every start

        payload = marshal.dumps(code)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(sha256(payload).digest() + payload)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except (OSError, ValueError):
        pass
