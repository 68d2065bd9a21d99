"""Value types the decoders produce beyond plain Python ones.

RawRecords holds the bytes of a `records` field (record batches) without decoding them: a Fetch response of
50 MB stays a memoryview into its frame until a renderer asks for a summary (kwire.native.codec_records.summarize_records)
or for every record (decode_records). It is native code's (kwire.native.raw_records: the compiled decoders make
one with a C call); the codec layer names it here.
"""

from __future__ import annotations

from kwire.native.raw_records import RawRecords, raw_records

__all__ = ["RawRecords", "raw_records"]
