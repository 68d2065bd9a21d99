"""The project's one error tree, and the one line said of an exception kwire did not raise on purpose.

Every failure kwire reports on purpose is a KwireError. Decode failures inside a good capture are
turned into data (a kwire.outcomes.BodyOutcome of kind `malformed` on the Exchange, built from the
error's `field`, `offset` and `reason`, never from its text); CaptureError ends reading of one file
with a one-line message naming it.

Any other exception is a fault: a bug of kwire's that some input meets. Where a command can go on
without the input (`kwire stats` and `kwire spark` leave the file out: kwire.cli.faults), it names it
with `fault_line(exc)`: the exception's type and message (escaped: it may quote wire text) and the
innermost line of kwire it was raised from, so that the line is enough to report the bug.
"""

import os
import traceback

MAX_FAULT_LINE = 300


class KwireError(Exception):
    """Root of every error kwire raises on purpose."""


class DecodeError(KwireError):
    """Bytes that do not decode as the schema says (truncated, absurd length, bad value).
    `offset`: where; `field`: the path of the field being read ("Topics.Partitions.Index"), when a
    schema decoder knows it; `message_name`: the message ("Fetch v16"), when known; `fault`: the named
    fault, when the decoder names one (NullNotNullable), else None."""

    fault: str | None = None

    def __init__(self, message: str, offset: int | None = None, field: str | None = None,
                 message_name: str | None = None):
        super().__init__(message)
        self.offset = offset
        self.field = field
        self.message_name = message_name

    @property
    def reason(self) -> str:
        """What was wrong, without where."""
        return self.args[0] if self.args else ""

    def __str__(self) -> str:
        base = super().__str__()
        if self.field:
            base = f"{self.field}: {base}"
        if self.message_name:
            base = f"{self.message_name}: {base}"
        return base if self.offset is None else f"{base} (at byte {self.offset})"


NULL_NOT_NULLABLE = "null_not_nullable"


class NullNotNullable(DecodeError):
    """A null (a length of -1, a compact length of 0) in a string, bytes, records or array field Kafka's
    schema does not declare nullable in the message's version: Kafka's own readers stop there ("non-nullable
    field ... was serialized as null"), and so does kwire, naming the field."""

    fault = NULL_NOT_NULLABLE


class BodyTooLarge(DecodeError):
    """A body that would make more entries than kwire keeps of one body (KWIRE_MAX_BODY_ENTRIES): the
    bytes may be well formed; kwire chose not to hold them (a bound, not a malformation)."""


class CaptureError(KwireError):
    """A capture file that cannot be read: not a capture, truncated header, unknown link type."""


def is_fault(exc: BaseException) -> bool:
    """An exception no part of kwire raised on purpose, nor the system (a write error, a memory limit,
    an interrupt: those the command reports as they are)."""
    return isinstance(exc, Exception) and not isinstance(exc, (KwireError, OSError, MemoryError))


def fault_line(exc: BaseException) -> str:
    """`TypeError: '<' not supported ... (kwire/analytics/groups.py:329)`; a message past MAX_FAULT_LINE
    characters is cut there, saying how many it left out."""
    from kwire.safe_text import term_safe

    where = ""
    package = os.path.dirname(os.path.abspath(__file__))
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if os.path.abspath(frame.filename).startswith(package + os.sep):
            where = f" (kwire/{os.path.relpath(frame.filename, package)}:{frame.lineno})"
            break
    text = term_safe(f"{type(exc).__name__}: {exc}")
    if len(text) + len(where) > MAX_FAULT_LINE:
        keep = max(40, MAX_FAULT_LINE - len(where))
        text = f"{text[:keep]}… ({len(text) - keep:,} more characters)"
    return text + where
