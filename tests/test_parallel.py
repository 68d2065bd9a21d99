"""kwire.parallel: decoding and rendering on worker processes gives byte-for-byte the output and the
counts of one process, on every committed capture, with batches small enough that exchanges kept
in the main process (Metadata, Fetch, ...) fall between and inside batches."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import kwire.parallel as parallel
from kwire.cli.inspect import write_json_lines
from kwire.cli.keys import Reading
from kwire.pipeline import RunSummary
from kwire.query import ExchangeFilter
from kwire.render.jsonl import JsonLines

CAPTURES = sorted(p for p in (Path(__file__).parent.parent / "captures").iterdir()
                  if p.suffix in (".pcap", ".pcapng"))


class Out:
    def __init__(self):
        self.buffer = io.BytesIO()

    def flush(self):
        pass


def run(path: Path, jobs: int, render: JsonLines) -> tuple[bytes, str]:
    out = Out()
    summary = RunSummary()
    write_json_lines(Reading([str(path)]), summary, None, render, jobs, out)
    return out.buffer.getvalue(), summary.line()


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_workers_write_what_one_process_writes(capture: Path, monkeypatch):
    monkeypatch.setattr(parallel, "BATCH", 3)
    monkeypatch.setattr(parallel, "MAX_QUEUED", 2)  # batches in progress made of texts rendered here, too
    render = JsonLines("summary", False, ExchangeFilter())
    alone, line_alone = run(capture, 0, render)
    assert alone
    together, line_together = run(capture, 2, render)
    assert together == alone
    assert line_together == line_alone


def test_filters_and_full_records_in_workers(monkeypatch):
    monkeypatch.setattr(parallel, "BATCH", 2)
    capture = next(p for p in CAPTURES if p.name == "consumer-protocol-lz4.pcap")
    for keep in (ExchangeFilter(api_keys=frozenset({0, 12})), ExchangeFilter(errors_only=True),
                 ExchangeFilter(topics=frozenset({"no-such-topic"}))):
        render = JsonLines("full", False, keep)
        assert run(capture, 2, render) == run(capture, 0, render)


def test_no_pool_for_a_capture_smaller_than_a_batch(monkeypatch):
    started = []
    monkeypatch.setattr(parallel, "_start_pool", lambda *a: started.append(a) or pytest.fail("pool started"))
    capture = next(p for p in CAPTURES if p.name == "share-consumer.pcap")
    out, _ = run(capture, 2, JsonLines())
    assert out and not started


def failures_seen(monkeypatch) -> list[int]:
    """Where Batches.close puts its worker_failures (the batches it redid for a lost worker)."""
    failures = []
    real_close = parallel.Batches.close

    def close(self):
        failures.append(self.worker_failures)
        real_close(self)

    monkeypatch.setattr(parallel.Batches, "close", close)
    return failures


def stats_of(capture: Path, jobs: int) -> tuple[str, str]:
    from kwire.analytics import summary_json
    from kwire.cli.stats import aggregate
    from kwire.cli.keys import load_keys

    keys = Path(str(capture) + ".keys")
    summary = RunSummary()
    agg = aggregate(Reading([str(capture)], keys=load_keys(str(keys)) if keys.exists() else None), summary,
                    ExchangeFilter(), jobs, None)
    agg.tls.merge(summary.tls)
    return summary_json(agg.document()), summary.line()


@pytest.mark.parametrize("hold", ["at the end", "every batch"])
@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_stats_with_workers_count_what_one_process_counts(capture: Path, hold: str, monkeypatch):
    """Each worker folds its batches into one Aggregator, handed over at the end, or after every batch
    (a hold of 1 byte): the same document and counts as one process."""
    monkeypatch.setattr(parallel, "BATCH", 3)
    if hold == "every batch":
        monkeypatch.setattr(parallel, "HOLD_BYTES", 1)
    alone = stats_of(capture, 0)
    assert stats_of(capture, 2) == alone
    assert '"exchanges": 0' not in alone[0]


EVERY_CAPTURE = sorted(p for p in (Path(__file__).parent.parent / "captures").rglob("*")
                       if p.name.endswith((".pcap", ".pcapng", ".pcap.gz")))
# (workers, exchanges a batch, bytes of frames a worker folds before it hands its state over): small batches,
# so that several workers share even a small capture, and states handed over after every batch or few.
SPLITS = ((1, 5, 1 << 30), (2, 3, 1 << 30), (3, 7, 64 << 10))


def same_document_whatever_the_workers(capture: Path, monkeypatch) -> str:
    """The stats document and closing line of `capture` with each of SPLITS, asserted the same as one
    process's; the document."""
    alone = stats_of(capture, 0)
    for jobs, batch, hold in SPLITS:
        monkeypatch.setattr(parallel, "BATCH", batch)
        monkeypatch.setattr(parallel, "HOLD_BYTES", hold)
        assert stats_of(capture, jobs) == alone, (capture.name, jobs, batch, hold)
    return alone[0]


@pytest.mark.parametrize("capture", EVERY_CAPTURE, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_every_capture_gives_one_document_whatever_the_workers(capture: Path, monkeypatch):
    """Issue 49: on every committed capture, `kwire stats` with 1, 2 or 3 workers, batches of a few exchanges
    and states handed over after a few batches gives the document of one process, byte for byte (kafka-python's
    recording of records written twice lost a duplicate_write with 2 workers: the failed send and its resend
    fell to different workers, and the resend was not read)."""
    assert '"exchanges": 0' not in same_document_whatever_the_workers(capture, monkeypatch)


class FoldDies:
    """A fold (AggregateEach) that, in a worker process, kills it (or raises) at its `at`-th batch there, once."""

    def __init__(self, fold, parent: int, marker: Path, at: int, how: str):
        self.fold, self.parent, self.marker, self.at, self.how = fold, parent, marker, at, how
        self.seen = 0

    def successor(self, state):
        return self.fold.successor(state)

    def __call__(self, exchanges, state=None):
        import os

        if os.getpid() != self.parent and not self.marker.exists():
            self.seen += 1
            if self.seen >= self.at:
                self.marker.write_text("done")
                if self.how == "dies":
                    os._exit(1)
                self.fold(exchanges[:1], state)  # the state changed, then the batch fails
                raise RuntimeError("a batch that raises in a worker")
        return self.fold(exchanges, state)


@pytest.mark.parametrize("how", ["dies", "raises"])
@pytest.mark.parametrize("hold", [1, 1 << 30])
def test_a_worker_lost_mid_fold_costs_nothing_but_time(how: str, hold: int, monkeypatch, tmp_path):
    """A worker that dies (or whose batch raises, its state half-changed) after folding some batches:
    what every worker held is redone here, and the rest too; nothing is counted twice or lost."""
    import os

    import kwire.cli.stats as stats

    monkeypatch.setattr(parallel, "BATCH", 3)
    monkeypatch.setattr(parallel, "HOLD_BYTES", hold)
    capture = next(p for p in CAPTURES if p.name == "consumer-protocol-lz4.pcap")
    alone = stats_of(capture, 0)
    real = stats.AggregateEach
    marker = tmp_path / "marker"
    parent = os.getpid()
    monkeypatch.setattr(stats, "AggregateEach",
                        lambda keep, metered=False: FoldDies(real(keep, metered), parent, marker, 3, how))
    failures = failures_seen(monkeypatch)
    assert stats_of(capture, 2) == alone
    assert marker.exists() and failures and failures[0] >= 1


@pytest.mark.parametrize("how", ["dies", "raises"])
def test_a_worker_lost_mid_fold_reads_the_resends_it_would_have(how: str, monkeypatch, tmp_path):
    """The batches a lost worker held are folded here in its order, going on from the last state it handed
    over: the Produce batches read for resends are the same, and so is the document (tests/hostile3's resend
    capture: thousands of failed sends, their resends in later batches)."""
    import os

    import kwire.cli.stats as stats
    from tests.hostile3.resends import resends

    capture = tmp_path / "resends.pcap"
    resends(capture)
    alone = stats_of(capture, 0)
    monkeypatch.setattr(parallel, "BATCH", 64)
    monkeypatch.setattr(parallel, "HOLD_BYTES", 256 << 10)
    real = stats.AggregateEach
    marker = tmp_path / "marker"
    parent = os.getpid()
    monkeypatch.setattr(stats, "AggregateEach",
                        lambda keep, metered=False: FoldDies(real(keep, metered), parent, marker, 12, how))
    failures = failures_seen(monkeypatch)
    assert stats_of(capture, 2) == alone
    assert marker.exists() and failures and failures[0] >= 1


def count_fold(exchanges, state=None) -> int:
    return (state or 0) + len(exchanges)


def test_a_worker_holds_at_most_hold_bytes_of_batches():
    """The batches the main process keeps for a worker (to redo them if it dies) stay under the hold and
    the batches in flight: the worker is asked for its state then, and what it held is let go."""
    from kwire.pipeline import analyze_files

    capture = next(p for p in CAPTURES if p.name == "multi-broker-3.pcap")
    raws = [raw for raw in analyze_files([str(capture)], offload=lambda raw: True) if raw.request is not None]
    batches = parallel.FoldedBatches(count_fold, 2, batch=1, hold_bytes=2048)
    total, most, sizes = 0, 0, []
    try:
        for _ in range(30):
            for raw in raws:
                if batches.add(raw):
                    sizes.append(batches._out[-1][1])
                    total += sum(state for state, _, _ in batches.done())
                    most = max([most] + [sum(map(len, held)) for held in batches._held.values()])
        batches.finish()
        total += sum(state for state, _, _ in batches.done(wait=True))
    finally:
        batches.close()
    assert total == 30 * len(raws) and not batches._held
    in_flight = 2 * 2 + 2 + 1  # Batches.max_inflight for 2 workers, and the one being answered
    assert 2048 < most <= 2048 + in_flight * max(sizes)


class DiesInAWorker:
    """A renderer whose first call in a worker process kills that process."""

    def __init__(self, render, parent: int, marker: Path):
        self.render, self.parent, self.marker = render, parent, marker

    def __call__(self, ex):
        import os

        if os.getpid() != self.parent and not self.marker.exists():
            self.marker.write_text("died")
            os._exit(1)
        return self.render(ex)


def test_a_dead_worker_costs_nothing_but_time(monkeypatch, tmp_path):
    import os

    monkeypatch.setattr(parallel, "BATCH", 3)
    capture = next(p for p in CAPTURES if p.name == "consumer-protocol-lz4.pcap")
    render = JsonLines()
    alone, line_alone = run(capture, 0, render)
    dying = DiesInAWorker(render, os.getpid(), tmp_path / "marker")
    failures = failures_seen(monkeypatch)
    together, line_together = run(capture, 2, dying)
    assert (tmp_path / "marker").exists() and failures and failures[0] >= 1
    assert together == alone and line_together == line_alone


def test_texts_waiting_for_a_batch_are_bounded_in_bytes(monkeypatch, tmp_path):
    """A batch in progress (one small exchange for a worker) while big exchanges are rendered here:
    their texts wait in its tag only up to MAX_QUEUED_BYTES, then the batch goes out as it is (a
    Produce of 1,000 batches is ~800 KB of JSON; 4,096 of them once waited: 856 MB)."""
    from tests.campaign.traffic import batch_flood

    path = tmp_path / "batches.pcap"
    batch_flood(path, 20 * 1000, 1000)  # a Metadata exchange (to a worker), then 20 big Produce exchanges
    monkeypatch.setattr(parallel, "MAX_QUEUED_BYTES", 1 << 20)
    waited = []
    real_flush = parallel.Batches.flush

    def flush(self):
        waited.append(sum(len(text) for _, text in self.tag or ()))
        real_flush(self)

    monkeypatch.setattr(parallel.Batches, "flush", flush)
    render = JsonLines()
    alone, _ = run(path, 0, render)
    together, _ = run(path, 2, render)
    assert together == alone and len(alone.splitlines()) == 21
    biggest = max(len(line) for line in alone.splitlines())
    assert waited and max(waited) < (1 << 20) + biggest


def test_a_big_text_is_handed_on_as_it_is_not_copied_into_a_join():
    """A --records exchange rendered here can be 300 MB of JSON: joined with the texts around it,
    it was copied (inspect --json --records peaked at 597 MB instead of 366 MB)."""
    big = b"x" * parallel.BATCH_BYTES + b"\n"
    out = list(parallel._joined([b"a\n", b"", b"b\n", big, b"c\n"]))
    assert out == [(b"a\nb\n", 2), (big, 1), (b"c\n", 1)] and out[1][0] is big  # with the lines each holds
    assert list(parallel._joined([b"a\n", b"b\n"])) == [(b"a\nb\n", 2)] and list(parallel._joined([])) == []


def test_a_batch_comes_back_in_one_piece_with_the_size_of_each_text():
    texts = {1: b"one\n", 2: None, 3: b"three\n", 4: b""}
    joined, sizes = parallel.RenderEach(texts.get)([1, 2, 3, 4])
    assert joined == b"one\nthree\n"
    assert parallel.split_texts(joined, sizes) == [b"one\n", b"", b"three\n", b""]


class Writes:
    """The pieces write_json_lines writes, one by one."""

    def __init__(self):
        self.pieces: list[bytes] = []

    def __call__(self, data) -> None:
        self.pieces.append(bytes(data))


class Closing(list):
    closed = False

    def close(self):
        self.closed = True


def test_lines_rendered_here_are_written_in_pieces(monkeypatch):
    from kwire.cli import inspect

    monkeypatch.setattr(inspect, "WRITE_BYTES", 10)
    lines = [b"aaaa\n", None, b"bbbb\n", b"cccc\n", b"B" * 30 + b"\n", b"dd\n", b"ee\n"]
    write = Writes()
    exchanges = Closing(range(len(lines)))
    assert inspect._write_here(exchanges, lines.__getitem__, write, None, False) == 6
    assert exchanges.closed
    assert write.pieces == [b"aaaa\nbbbb\n", b"cccc\n", b"B" * 30 + b"\n", b"dd\nee\n"]  # the big one alone

    write = Writes()
    assert inspect._write_here(Closing(range(len(lines))), lines.__getitem__, write, 3, False) == 3
    assert b"".join(write.pieces) == b"aaaa\nbbbb\ncccc\n"

    write = Writes()  # a capture on standard input: each line as it comes
    assert inspect._write_here(Closing(range(len(lines))), lines.__getitem__, write, None, True) == 6
    assert write.pieces == [line for line in lines if line]


def test_lines_rendered_before_an_error_are_written():
    from kwire.cli import inspect

    def render(i):
        if i == 2:
            raise MemoryError("no room")
        return b"line\n"

    write = Writes()
    with pytest.raises(MemoryError):
        inspect._write_here(Closing(range(5)), render, write, None, False)
    assert b"".join(write.pieces) == b"line\nline\n"


class InOrder:
    """A fold that checks each connection's exchanges reach it in capture order across the states of a worker:
    its state is (correlation id last seen per connection, exchanges seen, exchanges out of order), and a state
    goes on from the one handed over before it (`successor`: the last ids). Every connection's first
    correlation id is 1. In a worker it dies at its `die_at`-th batch (once: `marker`)."""

    def __init__(self, parent: int, marker: Path | None = None, die_at: int = 0, carry: bool = True):
        self.parent, self.marker, self.die_at, self.carry = parent, marker, die_at, carry
        self.batches = 0

    def successor(self, state):
        return (dict(state[0]) if self.carry else {}, 0, 0)

    def __call__(self, exchanges, state=None):
        import os

        if self.marker is not None and os.getpid() != self.parent and not self.marker.exists():
            self.batches += 1
            if self.batches >= self.die_at:
                self.marker.write_text("died")
                os._exit(1)
        last, seen, wrong = state if state is not None else ({}, 0, 0)
        for ex in exchanges:
            key = (ex.client, ex.broker)
            wrong += ex.correlation_id != last.get(key, 0) + 1
            last[key] = ex.correlation_id
            seen += 1
        return last, seen, wrong


def _interleaved(path: Path, connections: int = 6, each: int = 120) -> None:
    from kwire.capture.pcapwrite import PcapWriter
    from tests.campaign.traffic import ETHERNET, Traffic, client_address
    from tests.render.hostile import exchange

    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer)
        conns = [traffic.connection(client_address(i)) for i in range(connections)]
        sent = [0] * connections
        for step in range(each):
            for i in range(1 + step % connections):  # some connections busier than others
                sent[i] += 1
                conns[i].exchange(exchange(18, 0, sent[i], f"c{i}", {}, {"ErrorCode": 0, "ApiKeys": []}))


def _folded_in_order(path: Path, fold: InOrder, route) -> tuple[int, int]:
    from kwire.pipeline import analyze_files

    raws = [raw for raw in analyze_files([str(path)], offload=lambda raw: True) if raw.request is not None]
    batches = parallel.FoldedBatches(fold, 2, batch=3, hold_bytes=2048, route=route)
    seen = wrong = 0
    try:
        for raw in raws:
            if batches.add(raw):
                for (_, n, w), _, _ in batches.done():
                    seen, wrong = seen + n, wrong + w
        batches.finish()
        for (_, n, w), _, _ in batches.done(wait=True):
            seen, wrong = seen + n, wrong + w
    finally:
        batches.close()
    assert seen == len(raws)
    return seen, wrong


def _by_connection(raw) -> int:
    return raw.conn.id


@pytest.mark.parametrize("dies", [False, True])
def test_routed_exchanges_fold_in_capture_order_across_states(dies: bool, tmp_path):
    """FoldedBatches' `route`: every exchange of a route reaches one worker's states in capture order, each
    state going on from the one handed over before it (handed over every few batches here), and still when the
    worker dies mid-run (what it held is folded here, in its order, from its last state's successor)."""
    import os

    path = tmp_path / "interleaved.pcap"
    _interleaved(path)
    marker = tmp_path / "marker" if dies else None
    seen, wrong = _folded_in_order(path, InOrder(os.getpid(), marker, die_at=40), _by_connection)
    assert wrong == 0 and seen > 300
    assert marker is None or marker.exists()


@pytest.mark.parametrize("how", ["not routed", "not carried"])
def test_the_order_check_sees_exchanges_out_of_order(how: str, tmp_path):
    """The check above can fail: dealt to the worker with the fewest batches waiting, or with each state
    started afresh, a connection's exchanges reach a state after others it did not see."""
    import os

    path = tmp_path / "interleaved.pcap"
    _interleaved(path)
    fold = InOrder(os.getpid(), carry=how != "not carried")
    _, wrong = _folded_in_order(path, fold, None if how == "not routed" else _by_connection)
    assert wrong > 0
