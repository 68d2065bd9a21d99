"""kwire.live.http_request: a request head fed whole, byte by byte and with bytes after it reads the same; heads
past the limit, or that are not HTTP/1.x, are refused with their kind; only GET and HEAD of the path are answered;
every refusal is a whole HTTP answer that says why and closes."""

from __future__ import annotations

import pytest

from kwire.live.http_request import NEED_DATA, HeadReader, Outcome, Request, answer, refusal, route

SCRAPE = (b"GET /metrics?name[]=x HTTP/1.1\r\nHost: 127.0.0.1:9464\r\nUser-Agent: Prometheus/2.42.0\r\n"
          b"Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5\r\n"
          b"Accept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n")


def _fed(chunks, limit=8192):
    reader = HeadReader(limit)
    got = NEED_DATA
    for chunk in chunks:
        got = reader.feed(chunk)
        if got is not NEED_DATA:
            break
    return got


def test_a_scrape_fed_whole_byte_by_byte_and_with_bytes_after_it():
    whole = _fed([SCRAPE])
    assert whole == Request("GET", "/metrics", {
        "host": "127.0.0.1:9464", "user-agent": "Prometheus/2.42.0",
        "accept": "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5",
        "accept-encoding": "gzip", "x-prometheus-scrape-timeout-seconds": "10"})
    assert _fed([SCRAPE[i:i + 1] for i in range(len(SCRAPE))]) == whole
    assert _fed([SCRAPE + b"a body nobody reads"]) == whole
    assert _fed([b"\r\n\r\n" + SCRAPE]) == whole  # blank lines before the request line
    assert _fed([SCRAPE.replace(b"\r\n", b"\n")]) == whole  # bare line feeds
    assert _fed([SCRAPE[:-1]]) is NEED_DATA


def test_repeated_headers_are_joined_and_names_are_any_case():
    got = _fed([b"HEAD /metrics HTTP/1.0\r\nACCEPT: a\r\naccept: b\r\n\r\n"])
    assert got.headers == {"accept": "a, b"} and got.head_only


@pytest.mark.parametrize("head", [
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n\n",      # a TLS ClientHello's first bytes
    b"GET /metrics\r\n\r\n",                                   # HTTP/0.9
    b"GET /metrics HTTP/2.0\r\n\r\n",
    b"GET  /metrics HTTP/1.1\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nName : value\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\n folded: line\r\n\r\n",
])
def test_what_is_not_http_1_is_a_bad_request(head):
    assert _fed([head]) is Outcome.BAD_REQUEST
    assert _fed([head[i:i + 1] for i in range(len(head))]) is Outcome.BAD_REQUEST


def test_a_head_past_the_limit_is_too_large_whole_or_dripped():
    huge = b"GET /metrics HTTP/1.1\r\nX-Huge: " + b"a" * 10_000 + b"\r\n\r\n"
    assert _fed([huge]) is Outcome.TOO_LARGE
    assert _fed([huge[i:i + 7] for i in range(0, len(huge), 7)]) is Outcome.TOO_LARGE
    assert _fed([b"x" * 100], limit=64) is Outcome.TOO_LARGE  # no end in sight: refused at the limit
    assert _fed([SCRAPE], limit=len(SCRAPE)) is not Outcome.TOO_LARGE


def test_a_drip_is_searched_once_not_again_at_each_byte(monkeypatch):
    import kwire.live.http_request as http_request

    searched = []
    head_end = http_request._head_end

    def counted(buffer, start):
        searched.append(len(buffer) - start)
        return head_end(buffer, start)

    monkeypatch.setattr(http_request, "_head_end", counted)
    reader = HeadReader(1 << 20)
    drip = b"GET /metrics HTTP/1.1\r\n" + b"X-a: b\r\n" * 5_000
    for i in range(len(drip)):
        assert reader.feed(drip[i:i + 1]) is NEED_DATA
    assert sum(searched) <= 4 * len(drip)  # each byte once (and the 3 before it), not the buffer at each byte


def test_routes():
    assert route(Request("GET", "/metrics", {}), "/metrics") is Outcome.ANSWERED
    assert route(Request("HEAD", "/metrics", {}), "/metrics") is Outcome.ANSWERED
    assert route(Request("GET", "/", {}), "/metrics") is Outcome.NOT_FOUND
    assert route(Request("POST", "/metrics", {}), "/metrics") is Outcome.NOT_ALLOWED


def test_refusals_are_whole_answers_that_close():
    for outcome in Outcome:
        text = refusal(outcome)
        if outcome.status is None or outcome in (Outcome.ANSWERED, Outcome.ERROR):
            continue
        head, _, body = text.partition(b"\r\n\r\n")
        assert head.startswith(f"HTTP/1.1 {outcome.status} ".encode()) and b"Connection: close" in head
        assert f"Content-Length: {len(body)}".encode() in head and body.endswith(b"\n")
    assert refusal(Outcome.WRITE_TIMEOUT) == b""
    assert b"Allow: GET, HEAD" in refusal(Outcome.NOT_ALLOWED)
    assert len({outcome.label for outcome in Outcome}) == len(Outcome)


def test_a_head_answer_has_the_length_and_no_body():
    full = answer(200, "OK", b"abc", "text/plain", "gzip")
    assert full.endswith(b"\r\n\r\nabc") and b"Content-Encoding: gzip" in full
    assert answer(200, "OK", b"abc", "text/plain", head_only=True) == full.replace(
        b"Content-Encoding: gzip\r\n", b"")[:-3]


def test_every_outcome_is_documented():
    from pathlib import Path

    row = next(line for line in (Path(__file__).resolve().parents[2] / "docs" / "metrics.md").read_text().splitlines()
               if line.startswith("| `kwire_exporter_connections_total` |"))
    assert [o.label for o in Outcome if f"`{o.label}` (" not in row] == []
