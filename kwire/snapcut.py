"""How a body cut by the snap length is marked: the one place that says so.

A frame whose length prefix was captured but whose body the snap length cut, or a gap of lost
packets took (kwire.kafka.framing follows it through the gaps by its length), reaches an Exchange with `request_error` / `response_error` set to
`cut_error(captured, size)`. Whoever must tell that apart from a body that failed to decode asks
`is_cut(error)` or `decode_failed(error)`, never the text itself. (When outcomes become kinds, this
module is where the cut kind is named.)
"""

from __future__ import annotations

CUT = "cut short in the capture"


def cut_error(captured: int, size: int) -> str:
    """The mark of a body of which `captured` of its frame's `size` bytes were captured (the snap
    length cut the rest, or packets were lost: TCP's gaps do not say which)."""
    return f"{CUT}: {captured} of {size} bytes captured (snap length, or packets lost)"


ANSWER_NOT_CAPTURED = (f"{CUT}: the answer was not captured; a later request's answer was, and a broker "
                       "answers a connection's requests in order")


def is_cut(error: str | None) -> bool:
    """Was this body cut by the snap length (rather than failing to decode)?"""
    return error is not None and error.startswith(CUT)


def decode_failed(error: str | None) -> bool:
    """Did this body fail to decode (an error that is not a snap-length cut)?"""
    return error is not None and not error.startswith(CUT)
