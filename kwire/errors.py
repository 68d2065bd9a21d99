"""The project's one error tree.

Every failure kwire reports on purpose is a KwireError. Decode failures inside a good capture are
turned into data (an error string on the Exchange); CaptureError ends reading of one file with a
one-line message naming it.
"""


class KwireError(Exception):
    """Root of every error kwire raises on purpose."""


class DecodeError(KwireError):
    """Bytes that do not decode as the schema says (truncated, absurd length, bad value)."""

    def __init__(self, message: str, offset: int | None = None):
        super().__init__(message)
        self.offset = offset

    def __str__(self) -> str:
        base = super().__str__()
        return base if self.offset is None else f"{base} (at byte {self.offset})"


class BodyTooLarge(DecodeError):
    """A body that would make more entries than kwire keeps of one body (KWIRE_MAX_BODY_ENTRIES): the
    bytes may be well formed; kwire chose not to hold them (a bound, not a malformation)."""


class CaptureError(KwireError):
    """A capture file that cannot be read: not a capture, truncated header, unknown link type."""
