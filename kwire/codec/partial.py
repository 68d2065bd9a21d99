"""Bodies past the entries cap, kept in part: `decode_in_part(schema, version, body, pos)`.

A body that would make more than MAX_BODY_ENTRIES entries (kwire.codec.compiler) is not decoded whole:
that bound is what a body may hold in memory. Read in part, it is still read to its end, field by field,
as the schema says: every field that is not an array element past the bound is kept, the elements of
each array are kept while the body's entries last (counted as the decoder counts them), and the elements
past them are read (so that the fields after the array are found, and a malformation anywhere is one)
but not kept. Where an array was cut, the struct holding it gets `_not_kept`: {field name: CutElements},
a CutElements being the number of elements left out (an int: that is what every output shows) that can
also read them again, one at a time (`elements()`), each decoded as the decoder would (an element past
the bound itself comes in part). So a reader that must see every element (kwire.analytics.changes_read:
an allow-all ACL may be the last of a million bindings) sees them all in bounded memory, and every other
reader sees a body of at most the bound plus what was cut, as data.

The elements of arrays of structs are decoded by the generated decoders (an element's struct compiled as
a message of its own); the levels past the bound are read here, field by field. Errors are the
decoder's: DecodeError with the field's path and the offset (NullNotNullable for a null the schema does not
allow, as the decoder names it; a malformation past the bound makes the
body malformed), BodyTooLarge when the part past the bound is a tagged field (not read in part).
"""

from __future__ import annotations

import struct

from kwire.codec import compiler
from kwire.codec.schema import Field, MessageSchema
from kwire.codec.values import raw_records
from kwire.errors import BodyTooLarge, DecodeError, NullNotNullable
from kwire.kafka.primitives import kafka_uuid, read_uvarint

NOT_KEPT = "_not_kept"  # the key, in a struct holding a cut array, of {field name: CutElements}
_I16 = struct.Struct(">h").unpack_from
_I32 = struct.Struct(">i").unpack_from
_NUMBERS = frozenset({"int8", "int16", "uint16", "int32", "uint32", "int64", "float64"})  # 8 count 1


class CutElements(int):
    """How many elements of an array a body read in part left out (the int), and a reader of them:
    `elements()` decodes them one at a time (`inside`: what the elements read so far left out inside
    them, an element past the bound being read in part). Pickled, it is the number alone."""

    def __reduce__(self):
        return (int, (int(self),))

    def elements(self):
        """The elements left out, in order, each decoded as the decoder would (one past the bound in
        part: its own cut arrays then say what it left out)."""
        reader = self._reader
        pos = self._start
        room = compiler.MAX_BODY_ENTRIES  # each element may hold what a body may
        budget = _Budget(0)
        self.inside = 0
        for _ in range(int(self)):
            value, pos, _ = reader.element(self._buf, pos, room, budget)
            self.inside = budget.tally[0]
            yield value


def _cut(count: int, reader: _Reader, buf, start: int) -> CutElements:
    cut = CutElements(count)
    cut._reader, cut._buf, cut._start = reader, buf, start
    return cut


class _Budget:
    """The entries a body may still keep, and (`tally`, shared by a body's nested budgets) how many
    array elements it left out."""

    __slots__ = ("left", "tally")

    def __init__(self, left: int, tally: list | None = None) -> None:
        self.left = left
        self.tally = [0] if tally is None else tally


def decode_in_part(schema: MessageSchema, version: int, body, pos: int) -> tuple[dict, int, int]:
    """(the body kept in part, where it ends, how many array elements were left out)."""
    buf = body if type(body) in (bytes, memoryview) else memoryview(body)
    reader = _Reader(schema, version, "")
    budget = _Budget(compiler.MAX_BODY_ENTRIES)
    label = f"{schema.name} v{version}"
    try:
        value, end = reader.struct(schema.fields, "", buf, pos, budget)
        return value, end, budget.tally[0]
    except DecodeError as exc:
        raise type(exc)(exc.reason, exc.offset, exc.field, label) from None
    except (struct.error, IndexError, ValueError, OverflowError) as exc:
        raise DecodeError(f"malformed ({exc})", message_name=label) from None


_ELEMENT_SCHEMAS: dict[tuple, MessageSchema] = {}  # (id of the message, path) -> an element's struct as a message


def _element_decoder(schema: MessageSchema, path: str, field: Field, version: int):
    key = (id(schema), path)
    made = _ELEMENT_SCHEMAS.get(key)
    if made is None:
        made = _ELEMENT_SCHEMAS[key] = MessageSchema(schema.api_key, schema.kind, f"{schema.name}:{path}[]",
                                                     schema.valid, schema.flexible, field.fields or ())
    return compiler.decoder_for(made, version)


class _Reader:
    """Reads the fields of one message at one version, as the generated decoder does."""

    __slots__ = ("schema", "version", "flexible", "sizes", "path", "field", "decode", "flat")

    def __init__(self, schema: MessageSchema, version: int, path: str, field: Field | None = None) -> None:
        self.schema = schema
        self.version = version
        self.flexible = schema.is_flexible(version)
        self.sizes = compiler._Generator(schema, version)  # the decoder's smallest sizes, for length checks
        self.path = path  # for an array's reader (element()): the array's path
        self.field = field
        structs = field is not None and field.is_struct
        self.decode = _element_decoder(schema, path, field, version) if structs else None
        self.flat = structs and not _has_arrays(field.fields, version)  # an element is one entry

    # -- structs and arrays

    def struct(self, fields, path: str, buf, pos: int, budget: _Budget) -> tuple[dict, int]:
        v, flexible = self.version, self.flexible
        out: dict = {}
        tagged = []
        for f in fields:
            if not f.present_in(v):
                continue
            if flexible and f.tagged_in(v):
                tagged.append(f)
                continue
            where = f"{path}.{f.name}" if path else f.name
            if f.is_array:
                out[f.name], pos, cut = self.array(f, where, buf, pos, budget)
                if cut is not None:
                    out.setdefault(NOT_KEPT, {})[f.name] = cut
            elif f.is_struct:
                out[f.name], pos = self.nested(f, where, buf, pos, budget)
            else:
                out[f.name], pos = self.scalar(f.type, where, buf, pos, f.nullable_in(v))
        if flexible:
            pos = self.tagged(tagged, path, buf, pos, out)
        if NOT_KEPT in out:  # after the fields, as the tagged fields are
            out[NOT_KEPT] = out.pop(NOT_KEPT)
        return out, pos

    def nested(self, f: Field, path: str, buf, pos: int, budget: _Budget):
        if f.nullable_in(self.version):
            if pos >= len(buf):
                raise compiler._trunc(path, pos, 1, 0)
            pos += 1
            if buf[pos - 1] == 0xFF:
                return None, pos
        return self.struct(f.fields or (), path, buf, pos, budget)

    def array(self, f: Field, path: str, buf, pos: int, budget: _Budget):
        """(the kept elements, pos after the array, a CutElements of the rest or None)."""
        n, pos = self.length(path, buf, pos, 4)
        if n < 0:
            if not f.nullable_in(self.version):
                raise self.null(path, pos, n, 4)
            return None, pos, None
        if n and n * self.sizes.elem_min_size(f) > len(buf) - pos:
            raise compiler._cannot_fit(n, len(buf) - pos, pos, path)
        element = _Reader(self.schema, self.version, path, f)
        kept: list = []
        numbers = f.element_type in _NUMBERS or f.element_type == "bool"
        for i in range(n):
            if budget.left <= 0:
                start = pos
                skipped = _Budget(0)  # what the elements read past leave out is theirs to say
                for _ in range(n - i):
                    _, pos, _ = element.element(buf, pos, 0, skipped)
                budget.tally[0] += n - i
                return kept, pos, _cut(n - i, element, buf, start)
            value, pos, cost = element.element(buf, pos, budget.left, budget)
            budget.left -= cost if not numbers else (1 if i % 8 == 7 else 0)
            kept.append(value)
        return kept, pos, None

    def element(self, buf, pos: int, room: int, budget: _Budget) -> tuple[object, int, int]:
        """One element of this reader's array at `pos`: (value, pos after it, the entries it made). `room`:
        the entries the body may still keep; an element that makes more comes in part, what it leaves out
        counted in `budget`'s tally (room 0: the element is only being read past, and what comes back is not
        kept)."""
        f, path = self.field, self.path
        if self.decode is None:
            value, pos = self.scalar(f.element_type, f"{path}[]", buf, pos, False)  # elements: never null
            return value, pos, 1
        try:
            value, end = self.decode(buf, pos)
        except BodyTooLarge:
            pass
        except DecodeError as exc:
            raise type(exc)(exc.reason, exc.offset, f"{path}[].{exc.field}" if exc.field else f"{path}[]") \
                from None
        else:
            if room <= 0:
                return value, end, 0
            cost = 1 if self.flat else 1 + _entries(value)
            if cost <= room:
                return value, end, cost
        mine = _Budget(max(room - 1, 0), budget.tally)
        value, end = self.struct(f.fields or (), f"{path}[]", buf, pos, mine)
        return value, end, 1 + max(room - 1, 0) - mine.left

    # -- values

    def length(self, path: str, buf, pos: int, width: int) -> tuple[int, int]:
        if self.flexible:
            if pos >= len(buf):
                raise compiler._trunc(path, pos, 1, 0)
            n, pos = read_uvarint(buf, pos)
            return n - 1, pos
        if pos + width > len(buf):
            raise compiler._trunc(path, pos, width, len(buf) - pos)
        return (_I16 if width == 2 else _I32)(buf, pos)[0], pos + width

    def null(self, path: str, pos: int, n: int, width: int) -> NullNotNullable:
        """The decoder's NullNotNullable for a null length `n` read just before `pos`."""
        return compiler._null(path, pos - (1 if self.flexible else width), n)

    def scalar(self, t: str, path: str, buf, pos: int, nullable: bool):
        fixed = compiler._FIXED.get(t)
        if fixed is not None:
            code, size = fixed
            if pos + size > len(buf):
                raise compiler._trunc(path, pos, size, len(buf) - pos)
            value = struct.unpack_from(">" + code, buf, pos)[0]
            return (kafka_uuid(value) if t == "uuid" else value), pos + size
        width = 2 if t == "string" else 4
        n, pos = self.length(path, buf, pos, width)
        if n < 0:
            if not nullable:
                raise self.null(path, pos, n, width)
            return None, pos
        end = pos + n
        if end > len(buf):
            raise compiler._trunc(path, pos, n, len(buf) - pos)
        if t == "string":
            return str(buf[pos:end], "utf-8", "replace"), end
        if t == "bytes":
            return bytes(buf[pos:end]), end
        view = buf if type(buf) is memoryview else memoryview(buf)
        return raw_records(view[pos:end]), end

    def tagged(self, fields: list, path: str, buf, pos: int, out: dict) -> int:
        """A struct's tagged-field section: known tags decoded whole (one past the bound: BodyTooLarge), unknown
        ones kept as hex, as the decoder keeps them."""
        what = f"{path}.<tagged fields>" if path else "<tagged fields>"
        if pos >= len(buf):
            raise compiler._trunc(what, pos, 1, 0)
        count, pos = read_uvarint(buf, pos)
        by_tag = {f.tag: f for f in fields}
        for _ in range(count):
            if pos >= len(buf):
                raise compiler._trunc(what, pos, 1, 0)
            tag, pos = read_uvarint(buf, pos)
            if pos >= len(buf):
                raise compiler._trunc(what, pos, 1, 0)
            size, pos = read_uvarint(buf, pos)
            stop = pos + size
            if stop > len(buf):
                raise compiler._trunc(what, pos, size, len(buf) - pos)
            f = by_tag.get(tag)
            if f is None:
                out.setdefault("_unknown_tagged_fields", {})[tag] = bytes(buf[pos:stop]).hex()
            else:
                out[f.name] = self.tagged_value(f, f"{path}.{f.name}" if path else f.name, buf[pos:stop])
            pos = stop
        return pos

    def tagged_value(self, f: Field, path: str, raw):
        """A tagged field's value, confined to its bytes: decoded as a message of that one field (and an
        empty tagged-field section after it)."""
        key = (id(self.schema), path, "tagged")
        made = _ELEMENT_SCHEMAS.get(key)
        if made is None:
            regular = Field(f.name, f.type, f.versions, f.nullable, None, f.tagged, f.fields, f.entity, f.enum,
                            f.default, f.role)
            made = _ELEMENT_SCHEMAS[key] = MessageSchema(self.schema.api_key, self.schema.kind,
                                                         f"{self.schema.name}:{path}", self.schema.valid,
                                                         self.schema.flexible, (regular,))
        value, _ = compiler.decoder_for(made, self.version)(bytes(raw) + b"\0", 0)
        return value[f.name]


def _has_arrays(fields, version: int) -> bool:
    return any(f.present_in(version) and (f.is_array or (f.fields is not None and _has_arrays(f.fields, version)))
               for f in fields or ())


def _entries(value) -> int:
    """The entries a decoded value holds, as the decoder counts them (an element of an array of structs,
    strings, bytes or uuids 1; eight numbers 1)."""
    if type(value) is dict:
        return sum(_entries(v) for v in value.values() if type(v) in (list, dict))
    if type(value) is list:
        if value and type(value[0]) in (int, float, bool):
            return len(value) >> 3
        return len(value) + sum(_entries(v) for v in value if type(v) is dict)
    return 0


def not_kept(body) -> int:
    """How many array elements a body read in part left out, at every depth (0 for a body kept whole)."""
    if type(body) is dict:
        cut = body.get(NOT_KEPT)
        n = sum(int(c) for c in cut.values()) if type(cut) is dict else 0
        return n + sum(not_kept(v) for k, v in body.items() if k != NOT_KEPT and type(v) in (dict, list))
    if type(body) is list:
        return sum(not_kept(v) for v in body if type(v) is dict)
    return 0
