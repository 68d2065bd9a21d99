"""The project's one error tree.

Every failure kwire reports on purpose is a KwireError. Decode failures inside a good capture are
turned into data (a kwire.outcomes.BodyOutcome of kind `malformed` on the Exchange, built from the
error's `field`, `offset` and `reason`, never from its text); CaptureError ends reading of one file
with a one-line message naming it.
"""


class KwireError(Exception):
    """Root of every error kwire raises on purpose."""


class DecodeError(KwireError):
    """Bytes that do not decode as the schema says (truncated, absurd length, bad value).
    `offset`: where; `field`: the path of the field being read ("Topics.Partitions.Index"), when a
    schema decoder knows it; `message_name`: the message ("Fetch v16"), when known."""

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


class BodyTooLarge(DecodeError):
    """A body that would make more entries than kwire keeps of one body (KWIRE_MAX_BODY_ENTRIES): the
    bytes may be well formed; kwire chose not to hold them (a bound, not a malformation)."""


class CaptureError(KwireError):
    """A capture file that cannot be read: not a capture, truncated header, unknown link type."""
