"""Value types the decoders produce beyond plain Python ones.

RawRecords holds the bytes of a `records` field (record batches) without decoding them: a Fetch
response of 50 MB stays a memoryview into its frame until a renderer asks for a summary
(kwire.codec.records.summarize_records) or for every record (decode_records). Compiled, it is an extension
type (kwire/codec/values.pxd) and the compiled decoders make one with `raw_records`, a C call.
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
