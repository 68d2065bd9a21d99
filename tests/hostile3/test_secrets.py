"""Secret configuration values stay out of every output unless --show-secrets (issue 49, third round).

`delegation.token.master.key` (a PASSWORD config a hand list of words missed), a sample of the names Kafka
defines with Type.PASSWORD, their prefixed forms, unknown names that read like credentials and the SCRAM user
configuration, set through AlterConfigs, IncrementalAlterConfigs and CreateTopics and answered by
DescribeConfigs (tests/hostile3/secrets.py), must appear in no output of inspect (lines, -V, --json), stats
(tables, --json, --html) or live's replay; the values of names Kafka defines as not secret must stay shown;
--show-secrets shows them all. One AlterConfigs body is also written by kio (an independent encoder): the
project's encoder writes the same bytes, and the pipeline hides the secret it carries.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from tests.fuzz.conversation import conversation_pcap
from tests.hostile3.secrets import MASTER_KEY, SHOWN, secret_capture
from tests.kafka.frames import request_frame, response_frame
from tests.render.hostile import encode_body


@pytest.fixture(scope="module")
def capture():
    return secret_capture(seed=7)


@pytest.fixture(scope="module")
def capture_path(tmp_path_factory, capture):
    path = tmp_path_factory.mktemp("secrets") / "secret-configs.pcap"
    path.write_bytes(capture.pcap)
    return path


def kwire(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "kwire", *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout + proc.stderr


def outputs(path, tmp_path) -> dict[str, str]:
    html = tmp_path / "report.html"
    out = {
        "inspect": kwire("inspect", str(path)),
        "inspect -V": kwire("inspect", "-V", str(path)),
        "inspect --json": kwire("inspect", "--json", str(path)),
        "stats": kwire("stats", str(path)),
        "stats --json": kwire("stats", "--json", str(path)),
        "live --replay": kwire("live", "--replay", str(path), "--speed", "0", "--exit-when-done"),
    }
    kwire("stats", "--html", str(html), str(path))
    out["stats --html"] = html.read_text()
    return out


def test_secret_values_are_in_no_output(capture, capture_path, tmp_path):
    assert MASTER_KEY in capture.names and len(capture.secrets) > 50
    for view, text in outputs(capture_path, tmp_path).items():
        shown = [s for s in capture.secrets if s in text]
        assert not shown, f"{view} shows {len(shown)} secret values, e.g. {shown[0]}"
        if view in ("inspect -V", "inspect --json", "stats --json"):  # the tables cut long lines
            assert all(v in text for v in capture.shown[:len(SHOWN)]), f"{view} hides harmless values"


@pytest.mark.parametrize("view", [["--json"], ["-V"]])
def test_show_secrets_shows_them(capture, capture_path, view):
    text = kwire("inspect", "--show-secrets", *view, str(capture_path))
    missing = [s for s in capture.secrets if s not in text]
    assert not missing


def test_stats_changes_redact_each_secret_entry(capture, capture_path):
    doc = json.loads(kwire("stats", "--json", "--no-summary", str(capture_path)))
    seen = 0
    for change in doc["changes"]["entries"]:
        for resource in change["resources"]:
            configs = resource["configs"]  # CreateTopics: {name: value}; the others: [{name, operation, value}]
            by_name = configs if isinstance(configs, dict) else {c["name"]: c["value"] for c in configs}
            assert by_name[MASTER_KEY] == {"redacted": len(capture.secrets[0])}
            for name in capture.names:
                assert isinstance(by_name[name], dict) and "redacted" in by_name[name], (change["api"], name)
            for name in SHOWN:
                assert isinstance(by_name[name], str), (change["api"], name)
            seen += 1
    assert seen == 3  # AlterConfigs, IncrementalAlterConfigs, CreateTopics


def test_kio_writes_the_same_body_and_its_secret_is_hidden(tmp_path):
    pytest.importorskip("kio.schema")
    from kio.schema.alter_configs.v2 import request as m
    from kio.serial import entity_writer
    from kio.static.primitive import i8

    secret, plain = "kio-master-key-8128", "86400001"
    entity = m.AlterConfigsRequest(resources=(m.AlterConfigsResource(resource_type=i8(4), resource_name="1", configs=(
        m.AlterableConfig(name=MASTER_KEY, value=secret),
        m.AlterableConfig(name="delegation.token.expiry.time.ms", value=plain))),), validate_only=False)
    buf = io.BytesIO()
    entity_writer(type(entity))(buf, entity)
    ours = encode_body(33, "request", 2, {"Resources": [{"ResourceType": 4, "ResourceName": "1", "Configs": [
        {"Name": MASTER_KEY, "Value": secret}, {"Name": "delegation.token.expiry.time.ms", "Value": plain}]}],
        "ValidateOnly": False})
    assert buf.getvalue() == ours
    path = tmp_path / "kio-alter-configs.pcap"
    path.write_bytes(conversation_pcap([(0, request_frame(33, 2, 5, "adminclient-1", buf.getvalue(), flexible=True)),
                                        (1, response_frame(5, b"\x00\x00\x00\x00\x01\x00", flexible=True))]))
    for view in (["--json"], ["-V"]):
        text = kwire("inspect", *view, str(path))
        assert secret not in text and plain in text
    assert secret in kwire("inspect", "--json", "--show-secrets", str(path))
    assert secret not in kwire("stats", "--json", str(path))
