"""kwire.live.channel: values in order through the pipe, a sender that never blocks and refuses
past its backlog, the end seen by the receiver."""

from __future__ import annotations

import os

import pytest

from kwire.live.channel import channel


def test_values_arrive_in_order_whatever_their_size():
    receiver, sender = channel()
    values = [("batch", [(1, "a", b"x" * n)], {"packets": n}) for n in (0, 1, 1000, 3 << 20)]
    got = []
    for value in values:
        assert sender.send(value)
        while sender.pending:  # a value larger than the pipe waits for the reader
            got.append(receiver.receive(1.0))
            sender.flush()
    sender.close()
    while True:
        try:
            value = receiver.receive(1.0)
        except EOFError:
            break
        got.append(value)
    assert [v for v in got if v is not None] == values


def test_nothing_to_read_is_none_and_the_end_is_eof():
    receiver, sender = channel()
    assert receiver.receive(0.01) is None
    sender.close()
    with pytest.raises(EOFError):
        receiver.receive(0.01)


def test_a_sender_past_its_backlog_refuses_instead_of_blocking():
    receiver, sender = channel(backlog=1 << 20)
    refused = sent = 0
    for _ in range(200):  # 200 x 100 KB: more than the pipe and the backlog hold, nobody reading
        if sender.send(b"y" * 100_000):
            sent += 1
        else:
            refused += 1
    assert refused and sent
    assert sender.pending_bytes <= 1 << 20
    assert sender.send({"small": True}, force=True)  # what must arrive is queued anyway
    for _ in range(sent):
        assert receiver.receive(5.0) == b"y" * 100_000
        sender.flush()
    assert receiver.receive(5.0) == {"small": True}
    sender.close()
    receiver.close()


def test_a_receiver_gone_is_a_broken_pipe():
    receiver, sender = channel()
    receiver.close()
    with pytest.raises(BrokenPipeError):
        sender.send("anyone?")
    os.close(sender.fd)
