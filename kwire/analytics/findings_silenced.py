"""client_silenced: a client whose connection went quiet after an answer that carries a throttle long enough to
silence a client that honours it (KIP-219: a client sends nothing on a throttled connection until the time is up).

- client_silenced {client_id, client, broker, api, api_version, correlation_id, throttle_ms, read_as, quiet_ms,
  client_software}: an answer whose ThrottleTimeMs is observe.SILENCING_MS or more, as kwire decoded it, or, for a
  refusal of ApiVersions in a layout of its own (`read_as`: "librdkafka-mock", kwire.codec.version_refusal), as a
  client reading the body in the layout of the version it asked for reads it (the Java client reads the mock's
  refusal of v4 as 1,179,648 ms, and retries a lower version on the same connection, as a refusal asks: such a
  retry is required of a refusal's reading); after it the connection sent nothing more (but, after a refusal,
  within AFTER_S of the answer, an ApiVersions: the client's retry of the refused version) while the capture's exchanges went on for
  QUIET_MIN_S or more (`quiet_ms`: to the capture's last exchange, a lower bound). A connection that went on to other requests and
  then idled is not silenced (librdkafka reads the mock's refusal as the mock means it, and its bootstrap
  connection idles after Metadata), and neither is a client that went on talking to the broker on another
  connection (of its host and client id) within AFTER_S (it hung up on the answer, or reconnected: kafka-python,
  which cannot read the mock's refusal, does so); one that came back later on another connection was quiet until
  then. The evidence: the answer, and the connection's last exchange.
"""

from __future__ import annotations

from kwire.analytics.figures import ms
from kwire.analytics.findings import client_named, finding
from kwire.analytics.observe import SILENCING_MS
from kwire.analytics.traffic import host_of

NS = 1_000_000_000
AFTER_S = 1.0
QUIET_MIN_S = 5.0


def _span(ms: int) -> str:
    return f"{ms / 60_000:,.1f} min" if ms >= 60_000 else f"{ms / 1000:,.1f} s"


def _summary(client_id, client, broker, api, version, corr, throttle, layout, quiet) -> str:
    out = (f"{client_named(client_id)} ({client}) went quiet on broker {broker} after its {api} v{version} answer "
           f"(corr {corr}): nothing more on the connection for {quiet:,.1f} s while the capture went on; the answer ")
    if layout is None:
        return out + f"carried ThrottleTimeMs {throttle:,} ({_span(throttle)}), which a client that honours waits out"
    return out + (f"is a refusal in neither Kafka's layout (KIP-511: the v0 body) nor v{version}'s ({layout}): read as "
                  f"v{version}, the version the client asked, it carries ThrottleTimeMs {throttle:,} "
                  f"({_span(throttle)}), which a client that honours waits out")


def _latest_requests(traffic) -> dict[tuple, list]:
    """(client host, client id, broker) -> [(latest request ns, connection key, first ns)] of each connection."""
    out: dict[tuple, list] = {}
    for key, conn in traffic.connections.items():
        if conn.last is not None:
            out.setdefault((host_of(key[0]), conn.client_id, key[1]), []).append((conn.last[1], key, conn.first_ns))
    return out


def _back(connections: list, key: tuple, answered: int) -> int | None:
    """When the client came back to the broker on another connection after `answered`: a new connection's first
    request, or `answered` itself for one that was open and carried a request after it; None if it did not."""
    back = None
    for (latest, other, first) in connections:
        if other == key or latest <= answered:
            continue
        t = first if first > answered else answered
        back = t if back is None else min(back, t)
    return back


def find(analysis, names: dict, first_ns, last_ns) -> list[dict]:
    traffic = analysis.traffic
    out = []
    latest = _latest_requests(traffic) if traffic.silencing.items else {}
    for ev, key, client_id, throttle, layout, answered, version in traffic.silencing.values():
        conn = traffic.connections.get(key)
        if conn is None or conn.last is None or last_ns is None or throttle < SILENCING_MS:
            continue
        answered = answered if answered is not None else ev[0]
        end, latest_request = conn.last[0], conn.last[1]
        if layout is not None and conn.last[2] == ev[3]:
            continue  # no retry on the connection: the client did not take it for a refusal (it hung up: kafka-python)
        retried = layout is not None and conn.last[3] == "ApiVersions" and latest_request <= answered + AFTER_S * NS
        if conn.last[2] != ev[3] and not retried:
            continue  # it went on talking (an idle connection is no silenced one: librdkafka's bootstrap, after Metadata;
            # a request inside a throttle is throttle_not_honoured's, kwire.analytics.rules)
        back = _back(latest.get((host_of(key[0]), conn.client_id, key[1]), ()), key, answered)
        if back is not None and back <= answered + AFTER_S * NS:
            continue  # the client went on talking to the broker on another connection (it hung up, or reconnected)
        until = back if back is not None else last_ns
        quiet_ns = until - max(end, answered)
        quiet = quiet_ns / NS
        if quiet < QUIET_MIN_S:
            continue
        evidence = [ev] + ([(conn.last[1], ev[1], ev[2], conn.last[2], conn.last[3])] if conn.last[2] != ev[3] else [])
        summary = _summary(client_id, ev[1], ev[2], ev[4], version, ev[3], throttle, layout, quiet)
        out.append(finding("client_silenced", "warning", summary, ev[0], until, evidence, client_id=client_id,
                           client=ev[1], broker=ev[2], api=ev[4], api_version=version, correlation_id=ev[3],
                           throttle_ms=throttle, read_as=layout, quiet_ms=ms(quiet_ns),
                           client_software=conn.software, quiet_s=round(quiet, 3)))  # (deprecated)
    return out
