"""What decoding the record sets of one exchange may spend: the budget `decode_records` and
`summarize_records` draw on (kwire.native.codec_records).

One RecordBudget per exchange, shared by every records field of its request and response:

- `data`: bytes of record data decoded: a compressed batch's output (what a failed decompression made
  before failing counts too: a bomb's excess, a corrupt stream's first blocks), an uncompressed
  batch's bytes. Nothing is decompressed once it is used up.
- `entries`: records and record headers made into values (a record counts 1, each header 1).
- `batches`: batch entries listed in the records fields; past it, batches are summed (kwire.native.codec_records
  "unlisted"), never kept one by one.
- `run_open`: whether the run's decompression budget (kept by the caller: kwire.render.records_run)
  still lets this exchange open compressed batches. `decompressed` counts what this exchange
  decompressed, failures included, for the caller to charge to the run; `gated` says whether a
  compressed batch asked to be opened, so a result decoded with `run_open` one way is known to be the
  same the other way when it is False.

Nothing here reads the environment or keeps state between exchanges: the defaults below are the
limits when a caller gives none.
"""

from __future__ import annotations

from kwire.native.codec_compression import DecompressedTooLarge, decompress, produced_by
from kwire.errors import DecodeError
from kwire.fields import reduce_by_fields, set_fields

# 48 MiB: a value of control characters is six times its size in JSON ("\u0001"), so one exchange's
# records with --json stay within ~350 MB (48 MiB decoded, their text, their JSON), under 500 MB a run.
DEFAULT_DATA = 48 << 20
DEFAULT_ENTRIES = 250_000
DEFAULT_BATCHES = 10_000


# Kinds of budget cuts: the keys of a records field's tally (`cuts`); RecordBudget.cut_text gives the text.
DATA_CUT = "data"
ENTRIES_CUT = "entries"
BATCHES_CUT = "batches"
RUN_CUT = "run"


class RecordBudget:
    """What the record sets of one exchange may still spend (see the module docstring)."""

    __slots__ = ("data", "entries", "batches", "run_open", "decompressed", "gated", "limits")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self, data: int = DEFAULT_DATA, entries: int = DEFAULT_ENTRIES, batches: int = DEFAULT_BATCHES,
                 run_open: bool = True):
        self.data = data
        self.entries = entries
        self.batches = batches
        self.run_open = run_open
        self.decompressed = 0
        self.gated = False
        self.limits = (data, entries, batches)

    @property
    def decoded(self) -> int:
        """Bytes of record data decoded so far (what failed decompressions made included)."""
        return self.limits[0] - self.data

    def cut_text(self, kind: str) -> str:
        """The text of a cut of kind DATA_CUT, ENTRIES_CUT, BATCHES_CUT or RUN_CUT."""
        return {DATA_CUT: self.data_cut, ENTRIES_CUT: self.entries_cut, BATCHES_CUT: self.batches_cut,
                RUN_CUT: self.run_cut}[kind]()

    def data_cut(self) -> str:
        return f"record data budget of this exchange used up ({self.limits[0]:,} bytes)"

    def entries_cut(self) -> str:
        return f"record budget of this exchange used up ({self.limits[1]:,} records and headers)"

    def batches_cut(self) -> str:
        return f"batch budget of this exchange used up ({self.limits[2]:,} batches listed)"

    @staticmethod
    def run_cut() -> str:
        return "decompression budget of this run used up: compressed batches are no longer opened"

    def take_data(self, size: int) -> bool:
        """Spend `size` bytes of uncompressed record data, if that many are left."""
        if size > self.data:
            return False
        self.data -= size
        return True

    def open(self, codec: int, payload) -> tuple[object, str | None, str | None]:
        """Decompress a batch's payload within the budget: (output or None, error or None, the kind of
        budget that stopped it or None)."""
        if self.data <= 0:
            return None, self.data_cut(), DATA_CUT
        self.gated = True
        if not self.run_open:
            return None, self.run_cut(), RUN_CUT
        try:
            out = decompress(codec, payload, self.data)
        except DecodeError as e:
            spent = produced_by(e)
            self.decompressed += spent
            self.data -= min(spent, self.data)
            if isinstance(e, DecompressedTooLarge):
                return None, f"{e} (what was left of the record data budget of this exchange, " \
                             f"{self.limits[0]:,} bytes)", DATA_CUT
            return None, str(e), None
        self.decompressed += len(out)
        self.data -= len(out)
        return out, None, None


def note_cut(entry: dict, error: str, reason: str | None, cuts: dict) -> dict:
    """Put `error` on a batch entry; when a budget stopped it (`reason`: which, a *_CUT kind), count
    the batch under that kind in `cuts`, the records field's tally of budget cuts."""
    entry["error"] = error
    if reason:
        cuts[reason] = cuts.get(reason, 0) + 1
    return entry
