"""RawRecords: the bytes of a decoded body's `records` field (record batches), kept undecoded.

A Fetch response of 50 MB stays a memoryview into its frame until a renderer asks for a summary
(kwire.native.codec_records.summarize_records) or for every record (decode_records); kwire.codec.values names it for the
codec layer. Compiled, it is an extension type (raw_records.pxd beside this file), and the compiled decoders
(kwire.native._aot_*, kwire.codec.aot) make one with `raw_records`, a C call; as Python it is this slots class.
"""

from __future__ import annotations


class RawRecords:
    __slots__ = ("data",)

    def __init__(self, data: memoryview | bytes):
        self.data = data

    def __len__(self) -> int:
        return len(self.data)

    def __bytes__(self) -> bytes:
        return bytes(self.data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RawRecords):
            return bytes(self.data) == bytes(other.data)
        return NotImplemented

    def __repr__(self) -> str:
        return f"RawRecords({len(self.data)} bytes)"


def raw_records(data) -> RawRecords:
    """RawRecords(data), made without calling __init__ (a decoder's records field: a view of its frame)."""
    made = RawRecords.__new__(RawRecords)
    made.data = data
    return made
