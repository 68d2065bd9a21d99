"""kwire.analytics.traffic: connections are TCP connections, not pairs of endpoints: a client that
reconnects from a port it used before (busy clients do) makes a connection of its own each time."""

from __future__ import annotations

from kwire.analytics import Aggregator
from kwire.model import PAIRED, Exchange

NS = 1_000_000_000


def _hangup(connection_id: int, port: int, t: int) -> Exchange:
    """An ApiVersions answered, after which the client hangs up (one exchange on the connection)."""
    return Exchange(connection_id=connection_id, client=f"10.0.0.1:{port}", broker="10.0.0.2:9092", status=PAIRED,
                    correlation_id=1, api_key=18, api="ApiVersions", api_version=3, client_id="fragile",
                    request_ts_ns=t, response_ts_ns=t + 1000, request_size=40, response_size=400,
                    request={"ClientSoftwareName": "fragile-client", "ClientSoftwareVersion": "1.0"},
                    response={"ErrorCode": 0})


def test_a_reused_port_is_another_connection():
    agg = Aggregator()
    ports = [40000, 40001, 40000, 40001, 40000, 40002]  # the last one is followed by nothing
    for n, port in enumerate(ports):
        agg.add_exchange(_hangup(n + 1, port, n * NS))
    (found,) = [f for f in agg.document()["findings"] if f["kind"] == "client_hangup"]
    assert found["count"] == len(ports) - 1 and found["client_software"] == "fragile-client/1.0"
