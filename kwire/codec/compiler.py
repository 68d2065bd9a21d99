"""Compile a message schema, for one version, into a fast decoder.

`decoder_for(schema, version)` generates Python source for every struct of the message as it is in
that version (fields absent from the version vanish, runs of fixed-width fields become one
struct.unpack_from, flexible versions switch to compact lengths and tagged-field sections) and
compiles it once; the result is cached per (schema, version).

A decoder is `decode(buf, pos) -> (dict, pos)`. The dict uses Kafka's field names. Values:
int, bool, float, str, None, list, dict; uuid -> Kafka's base64 text; bytes -> bytes;
records -> kwire.codec.values.RawRecords (lazy: decoded later only if asked). Tagged fields that
the schema does not know are kept as raw bytes under "_unknown_tagged_fields" {tag: hex}.

Guarantees: never reads past `buf`; every length read from the wire is checked against the bytes
left before anything is allocated (an array claiming 2**31 elements in 30 bytes fails at once);
any malformation raises DecodeError with the offset and the field's path, nothing else.

The compiled code objects are also kept on disk, one file per sha256 of (source, label, Python's
cache tag and bytecode magic), so later runs skip compile(): in $KWIRE_CACHE_DIR (empty: no disk
cache), else $XDG_CACHE_HOME/kwire/decoders, else ~/.cache/kwire/decoders; at most 2000 files.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import struct
import sys
import types
from kwire.kafka.primitives import kafka_uuid, read_uvarint
from kwire.codec.schema import Field, MessageSchema
from kwire.codec.values import RawRecords
from kwire.errors import DecodeError

try:  # the builtin sha256 (the same digests): importing hashlib loads OpenSSL, 3-5 ms at each start
    from _sha2 import sha256  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # Python 3.11
    except ImportError:
        from hashlib import sha256

_FIXED = {  # type -> (struct code, size)
    "bool": ("?", 1),
    "int8": ("b", 1),
    "int16": ("h", 2),
    "uint16": ("H", 2),
    "int32": ("i", 4),
    "uint32": ("I", 4),
    "int64": ("q", 8),
    "float64": ("d", 8),
    "uuid": ("16s", 16),
}

_I16 = struct.Struct(">h").unpack_from
_I32 = struct.Struct(">i").unpack_from


def _trunc(what: str, pos: int, need: int, have: int) -> DecodeError:
    return DecodeError(f"{what}: need {need} bytes, {max(have, 0)} left", pos)


def _uvar(buf, pos):
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    return read_uvarint(buf, pos)


def _tagged_section(buf, pos, end, out, table, what):
    """A tagged-field section with at least one field: known tags are read by their readers (each
    confined to its declared size), unknown ones kept as hex under "_unknown_tagged_fields"."""
    count, pos = _uvar(buf, pos)
    for _ in range(count):
        if pos >= end:
            raise _trunc(what, pos, 1, 0)
        tag, pos = _uvar(buf, pos)
        if pos >= end:
            raise _trunc(what, pos, 1, 0)
        size, pos = _uvar(buf, pos)
        stop = pos + size
        if stop > end:
            raise _trunc(what, pos, size, end - pos)
        handler = table.get(tag)
        if handler is None:
            out.setdefault("_unknown_tagged_fields", {})[tag] = _unknown_tag_hex(buf, pos, stop)
        else:
            out[handler[0]] = handler[1](buf, pos, stop)
        pos = stop
    return pos


def _uuid(buf, pos, end, what):
    """A uuid field (the generated code reads runs of fixed fields itself, a lone uuid here)."""
    e = pos + 16
    if e > end:
        raise _trunc(what, pos, 16, end - pos)
    return kafka_uuid(buf[pos:e]), e


def _unknown_tag_hex(buf, pos, e):
    return bytes(buf[pos:e]).hex()


_RUNTIME = {
    "_uvar": _uvar,
    "_tagged_section": _tagged_section,
    "_uuid": _uuid,
    "_kafka_uuid": kafka_uuid,
    "_trunc": _trunc,
    "DecodeError": DecodeError,
    "_unpack_from": struct.unpack_from,
    "_read_uvarint": read_uvarint,
    "_I16": _I16,
    "_I32": _I32,
    "_RawRecords": RawRecords,
}


class _Generator:
    """Emits the source of one (message, version): a function per struct, plus reader helpers."""

    def __init__(self, schema: MessageSchema, version: int):
        self.schema = schema
        self.version = version
        self.flexible = schema.is_flexible(version)
        self.namespace: dict[str, object] = dict(_RUNTIME)
        self.chunks: list[str] = []
        self.counter = 0
        self.tag_tables: list[dict] = []  # {tag: (field name, reader function name)}, resolved after exec

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"_{stem}_{self.counter}"

    def const(self, stem: str, value: object) -> str:
        name = self.fresh(stem)
        self.namespace[name] = value
        return name

    # -- sizes

    def min_size(self, field: Field) -> int:
        """The fewest bytes one value of `field` takes on the wire in this version."""
        if field.is_array:
            return 1 if self.flexible else 4
        t = field.type
        if field.is_struct:
            return self.struct_min_size(field.fields or ())
        if t in _FIXED:
            return _FIXED[t][1]
        if t == "string":
            return 1 if self.flexible else 2
        return 1 if self.flexible else 4  # bytes, records

    def struct_min_size(self, fields) -> int:
        size = 1 if self.flexible else 0
        for f in fields:
            if f.present_in(self.version) and not (self.flexible and f.tagged_in(self.version)):
                size += self.min_size(f)
        return size

    # -- code for one value

    def value_code(self, field: Field, path: str, indent: str, target: str) -> list[str]:
        """Lines that read one value of `field` at `pos` into `target`, advancing `pos`."""
        v = self.version
        compact = self.flexible
        what = repr(path)
        if field.is_array:
            elem = field.element_type
            min_size = self.elem_min_size(field)
            lines = self.length_code(indent, "_n", what, compact, 4)
            lines.append(f"{indent}if _n > 0 and _n * {min_size} > end - pos:")
            lines.append(f"{indent}    raise DecodeError(f\"{{{what}}}: {{_n}} elements cannot fit in {{end - pos}} bytes\", pos)")
            lines.append(f"{indent}if _n < 0:")
            lines.append(f"{indent}    {target} = None")
            lines.append(f"{indent}else:")
            inner = indent + "    "
            if field.is_struct:
                fn = self.struct_function(field.fields or (), path + "[]")
                lines += [
                    f"{inner}{target} = _l = []",
                    f"{inner}_ap = _l.append",
                    f"{inner}for _ in range(_n):",
                    f"{inner}    _x, pos = {fn}(buf, pos, end)",
                    f"{inner}    _ap(_x)",
                ]
            elif elem in _FIXED and elem not in ("uuid", "bool"):
                code, size = _FIXED[elem]
                lines += [
                    f"{inner}{target} = list(_unpack_from('>%d{code}' % _n, buf, pos))",
                    f"{inner}pos += _n * {size}",
                ]
            else:
                item = Field(field.name, elem, field.versions, field.nullable, None, field.tagged, None)
                lines += [f"{inner}{target} = _l = []", f"{inner}for _ in range(_n):"]
                lines += self.value_code(item, path + "[]", inner + "    ", "_x")
                lines.append(f"{inner}    _l.append(_x)")
            return lines
        if field.is_struct:
            fn = self.struct_function(field.fields or (), path)
            if field.nullable_in(v):
                # A nullable struct is preceded by an int8: -1 null, 1 present.
                return [
                    f"{indent}if pos >= end: raise _trunc({what}, pos, 1, 0)",
                    f"{indent}if buf[pos] == 0xFF:",
                    f"{indent}    {target} = None; pos += 1",
                    f"{indent}else:",
                    f"{indent}    {target}, pos = {fn}(buf, pos + 1, end)",
                ]
            return [f"{indent}{target}, pos = {fn}(buf, pos, end)"]
        t = field.type
        if t in ("string", "bytes", "records"):
            # Inlined: a length (int16 for strings, int32 otherwise; a varint of length+1 when
            # flexible), -1 for null, then that many bytes, checked against the end first.
            lines = self.length_code(indent, "_n", what, compact, 2 if t == "string" else 4)
            if t == "string":
                value = "str(buf[pos:_e], 'utf-8', 'replace')"
            elif t == "bytes":
                value = "bytes(buf[pos:_e])"
            else:
                value = "_RawRecords(buf[pos:_e])"
            lines += [
                f"{indent}if _n < 0:",
                f"{indent}    {target} = None",
                f"{indent}else:",
                f"{indent}    _e = pos + _n",
                f"{indent}    if _e > end: raise _trunc({what}, pos, _n, end - pos)",
                f"{indent}    {target} = {value}",
                f"{indent}    pos = _e",
            ]
            return lines
        if t == "uuid":
            return [f"{indent}{target}, pos = _uuid(buf, pos, end, {what})"]
        code, size = _FIXED[t]
        s = self.const("S", struct.Struct(">" + code))
        return [
            f"{indent}if pos + {size} > end: raise _trunc({what}, pos, {size}, end - pos)",
            f"{indent}{target} = {s}.unpack_from(buf, pos)[0]; pos += {size}",
        ]

    def length_code(self, indent: str, target: str, what: str, compact: bool, width: int) -> list[str]:
        """Lines reading a length into `target`: a varint of length+1 when compact, else int16/int32."""
        if compact:
            return [
                f"{indent}if pos >= end: raise _trunc({what}, pos, 1, 0)",
                f"{indent}{target} = buf[pos]",
                f"{indent}if {target} < 0x80:",
                f"{indent}    pos += 1",
                f"{indent}else:",
                f"{indent}    {target}, pos = _read_uvarint(buf, pos)",
                f"{indent}{target} -= 1",
            ]
        reader = "_I16" if width == 2 else "_I32"
        return [
            f"{indent}if pos + {width} > end: raise _trunc({what}, pos, {width}, end - pos)",
            f"{indent}{target} = {reader}(buf, pos)[0]",
            f"{indent}pos += {width}",
        ]

    def elem_min_size(self, field: Field) -> int:
        elem = field.element_type
        if field.is_struct:
            return max(self.struct_min_size(field.fields or ()), 1)
        if elem in _FIXED:
            return _FIXED[elem][1]
        return 1 if self.flexible else (2 if elem == "string" else 4)

    # -- one struct

    def struct_function(self, fields, path: str) -> str:
        v = self.version
        name = self.fresh("struct")
        regular = [f for f in fields if f.present_in(v) and not (self.flexible and f.tagged_in(v))]
        tagged = [f for f in fields if f.present_in(v) and self.flexible and f.tagged_in(v)]
        body: list[str] = []
        locals_: list[tuple[str, str]] = []
        i = 0
        while i < len(regular):
            f = regular[i]
            if not f.is_array and not f.is_struct and f.type in _FIXED:
                run = [f]
                while (i + len(run) < len(regular) and not regular[i + len(run)].is_array
                       and not regular[i + len(run)].is_struct and regular[i + len(run)].type in _FIXED):
                    run.append(regular[i + len(run)])
                fmt = ">" + "".join(_FIXED[x.type][0] for x in run)
                size = struct.calcsize(fmt)
                s = self.const("S", struct.Struct(fmt))
                names = [f"v{i + k}" for k in range(len(run))]
                what = repr(f"{path}.{run[0].name}" if path else run[0].name)
                body.append(f"    if pos + {size} > end: raise _trunc({what}, pos, {size}, end - pos)")
                body.append(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = {s}.unpack_from(buf, pos)")
                body.append(f"    pos += {size}")
                for k, x in enumerate(run):
                    if x.type == "uuid":
                        body.append(f"    {names[k]} = _kafka_uuid({names[k]})")
                    locals_.append((x.name, names[k]))
                i += len(run)
                continue
            local = f"v{i}"
            body += self.value_code(f, f"{path}.{f.name}" if path else f.name, "    ", local)
            locals_.append((f.name, local))
            i += 1
        items = ", ".join(f"{k!r}: {loc}" for k, loc in locals_)
        body.append(f"    out = {{{items}}}")
        if self.flexible:
            table = {}
            for f in tagged:
                reader = self.tagged_reader(f, f"{path}.{f.name}" if path else f.name)
                table[f.tag] = (f.name, reader)
            t = self.const("TAGS", table)
            self.tag_tables.append(table)
            what = repr(f"{path}.<tagged fields>" if path else "<tagged fields>")
            # The common case, no tagged field at all, costs one byte test; otherwise the shared
            # reader walks the section.
            body += [
                f"    if pos >= end: raise _trunc({what}, pos, 1, 0)",
                "    if buf[pos]:",
                f"        pos = _tagged_section(buf, pos, end, out, {t}, {what})",
                "    else:",
                "        pos += 1",
            ]
        body.append("    return out, pos")
        self.chunks.append(f"def {name}(buf, pos, end):\n" + "\n".join(body) + "\n")
        return name

    def tagged_reader(self, field: Field, path: str) -> str:
        """A function reading a tagged field's value confined to its declared size."""
        name = self.fresh("tag")
        lines = [f"def {name}(buf, pos, end):"]
        lines += self.value_code(field, path, "    ", "val")
        lines.append("    return val")
        self.chunks.append("\n".join(lines) + "\n")
        return name

    def build(self):
        top = self.struct_function(self.schema.fields, "")
        source = "\n".join(self.chunks)
        code = _code(source, f"<kwire {self.schema.name} v{self.version}>")
        exec(code, self.namespace)  # our own generated source; never captured data
        for table in self.tag_tables:
            for tag, (field_name, reader) in table.items():
                table[tag] = (field_name, self.namespace[reader])
        return self.namespace[top], source


# ---- the on-disk cache of compiled code. It holds only code objects compiled here from our own
# generated source, never captured data, so marshal is the right format. Every failure (no
# directory, unwritable, corrupt or foreign file) falls back to compile(); the cache never raises.

_CACHE_MAX_FILES = 2000
_CACHE_ROOM: dict[str, int] = {}  # directory -> files this process may still write there


def _cache_dir() -> str:
    """Where compiled code is kept; "" for nowhere."""
    folder = os.environ.get("KWIRE_CACHE_DIR")
    if folder is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "kwire", "decoders")
    return folder


def _code(source: str, label: str) -> types.CodeType:
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


def _cache_store(folder: str, path: str, code: types.CodeType) -> None:
    """Write `code` to `path` atomically (a temporary file in the same directory, then replace)."""
    try:
        room = _CACHE_ROOM.get(folder)
        if room is None:  # the first write of this process there: count what the directory holds
            os.makedirs(folder, 0o700, exist_ok=True)
            room = _CACHE_MAX_FILES - len(os.listdir(folder))
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


# Keyed by the schema object's identity: schemas are module constants, and hashing a whole frozen
# schema tree on every message would cost more than decoding a small one.
_COMPILED: dict[tuple[int, int], tuple[MessageSchema, object, str]] = {}
_DECODERS: dict[tuple[int, int], object] = {}


def _compiled(schema: MessageSchema, version: int):
    key = (id(schema), version)
    hit = _COMPILED.get(key)
    if hit is None:
        fn, source = _Generator(schema, version).build()
        hit = _COMPILED[key] = (schema, fn, source)
    return hit[1], hit[2]


def decoder_for(schema: MessageSchema, version: int):
    """The decoder of `schema` at `version`: decode(buf, pos=0) -> (dict, end_pos). Cached."""
    key = (id(schema), version)
    cached = _DECODERS.get(key)
    if cached is not None:
        return cached
    if version not in schema.valid:
        raise DecodeError(f"{schema.name} has no version {version}")
    fn, _ = _compiled(schema, version)
    label = f"{schema.name} v{version}"

    def decode(buf, pos: int = 0):
        mv = buf if isinstance(buf, memoryview) else memoryview(buf)
        try:
            return fn(mv, pos, len(mv))
        except DecodeError as exc:
            raise DecodeError(f"{label}: {exc.args[0]}", exc.offset) from None
        except (struct.error, IndexError, ValueError, OverflowError, MemoryError) as exc:
            raise DecodeError(f"{label}: malformed ({exc})") from None

    _DECODERS[key] = decode
    return decode


def decoder_source(schema: MessageSchema, version: int) -> str:
    """The generated source, for debugging and tests."""
    return _compiled(schema, version)[1]
