"""The record budgets of a run: one kwire.native.codec_budget.RecordBudget per exchange, and what `--records`
may decompress over the whole run, with the environment variables that change them (plain numbers).

- KWIRE_MAX_DECOMPRESSED_BYTES (default 1 GiB): bytes decompressed over the whole run, a failed
  decompression counted by what it made before it failed. Once used up, compressed batches are no
  longer opened: each says so in its "error", its records field in "budget", and the closing lines
  on stderr count them. An exchange that starts under the limit may pass it by its own record data
  budget at most.
- KWIRE_MAX_RECORD_BYTES (48 MiB): record data one exchange may decode (decompressed, or as stored).
- KWIRE_MAX_RECORDS (250,000): records and record headers one exchange may make into values.
- KWIRE_MAX_BATCHES (10,000): batch entries one exchange lists; the rest are summed ("unlisted").

`RecordsRun` is kept in one process and charged in capture order: when records are decoded, the
exchanges of apis that carry records (kwire.codec.marks.carries_records) are never sent to worker
processes (kwire.native.exchange_sink.offloadable_with_records), so what the run's budget cuts, and so the
output, does not depend on `--jobs`.
"""

from __future__ import annotations

import os

from kwire.native.codec_budget import DEFAULT_BATCHES, DEFAULT_DATA, DEFAULT_ENTRIES, RecordBudget
from kwire.native.json_line import RunBudgets


def _setting(name: str, default: int) -> int:
    """A count from the environment (a plain non-negative number), else the default."""
    text = os.environ.get(name, "").strip()
    return int(text) if text.isdigit() else default


MAX_DECOMPRESSED_BYTES = _setting("KWIRE_MAX_DECOMPRESSED_BYTES", 1 << 30)
MAX_RECORD_BYTES = _setting("KWIRE_MAX_RECORD_BYTES", DEFAULT_DATA)
MAX_RECORDS = _setting("KWIRE_MAX_RECORDS", DEFAULT_ENTRIES)
MAX_BATCHES = _setting("KWIRE_MAX_BATCHES", DEFAULT_BATCHES)


class RecordsRun(RunBudgets):
    """The run's decompression budget, and the factory of each exchange's RecordBudget (`budget()`,
    `charge(budget)`: the native core's, kwire.native.json_line.RunBudgets)."""

    __slots__ = ()

    def __init__(self, limit: int = MAX_DECOMPRESSED_BYTES, *, data: int = MAX_RECORD_BYTES,
                 entries: int = MAX_RECORDS, batches: int = MAX_BATCHES):
        super().__init__(RecordBudget, limit, data, entries, batches)

    def __reduce__(self):
        return (_records_run, (self.limit, self.data, self.entries, self.batches, self.used, self.refused))

    def note(self) -> str | None:
        """The closing line when the run's budget stopped anything, else None."""
        if not self.refused:
            return None
        return (f"decompression budget of this run used up ({self.limit:,} bytes, KWIRE_MAX_DECOMPRESSED_BYTES): "
                f"compressed batches of {self.refused:,} later exchanges were not opened")


def _records_run(limit: int, data: int, entries: int, batches: int, used: int, refused: int) -> RecordsRun:
    """A RecordsRun as pickled (a worker's copy): its settings and what it had spent."""
    run = RecordsRun(limit, data=data, entries=entries, batches=batches)
    run.used, run.refused = used, refused
    return run
