"""Secrets in the admin apis stay out of every output unless --show-secrets.

The bodies are written by kio's serialisers (an independent encoder), framed, wrapped in a TCP
conversation and read back through the whole pipeline: a sensitive configuration value (by its name,
kwire.codec.overlay.sensitive_config, or by the broker's IsSensitive), its synonyms, SCRAM salts and
salted passwords, and a delegation token's HMAC must appear in neither `inspect --json` nor the -V
tree; the plain configuration values beside them must; --show-secrets shows everything.
"""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

pytest.importorskip("kio.schema")

from kio.serial import entity_writer  # noqa: E402

from kwire.codec.overlay import sensitive_config  # noqa: E402
from tests.fuzz.conversation import conversation_pcap  # noqa: E402
from tests.kafka.frames import request_frame, response_frame  # noqa: E402

JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="jaas-pw-0417";'
KEY_PASSWORD = "key-pw-5150"
PLAIN_VALUE = "604800017"


def kio_bytes(entity) -> bytes:
    buf = io.BytesIO()
    entity_writer(type(entity))(buf, entity)
    return buf.getvalue()


def incremental_alter_configs() -> bytes:
    from kio.schema.incremental_alter_configs.v1 import request as m
    from kio.static.primitive import i8
    configs = (m.AlterableConfig(name="listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config",
                                 config_operation=i8(0), value=JAAS),
               m.AlterableConfig(name="ssl.key.password", config_operation=i8(0), value=KEY_PASSWORD),
               m.AlterableConfig(name="log.retention.ms", config_operation=i8(0), value=PLAIN_VALUE))
    body = kio_bytes(m.IncrementalAlterConfigsRequest(
        resources=(m.AlterConfigsResource(resource_type=i8(4), resource_name="1", configs=configs),),
        validate_only=False))
    return request_frame(44, 1, 7, "adminclient-1", body, flexible=True)


def describe_configs_answer() -> bytes:
    from kio.schema.describe_configs.v4 import response as m
    from kio.static.primitive import i8, i32Timedelta
    import datetime

    from kio.schema.errors import ErrorCode
    # a broker that (wrongly) sends a sensitive value: IsSensitive alone must hide it and its synonym
    secret = m.DescribeConfigsResourceResult(
        name="custom.credential", value="sensitive-by-flag-77", read_only=False, config_source=i8(2),
        is_sensitive=True, synonyms=(m.DescribeConfigsSynonym(name="custom.credential",
                                                             value="sensitive-by-flag-77", source=i8(2)),),
        config_type=i8(2), documentation=None)
    plain = m.DescribeConfigsResourceResult(
        name="log.retention.ms", value=PLAIN_VALUE, read_only=False, config_source=i8(5), is_sensitive=False,
        synonyms=(), config_type=i8(5), documentation=None)
    body = kio_bytes(m.DescribeConfigsResponse(
        throttle_time=i32Timedelta.parse(datetime.timedelta(0)),
        results=(m.DescribeConfigsResult(error_code=ErrorCode.none, error_message=None, resource_type=i8(4),
                                         resource_name="1", configs=(secret, plain)),)))
    return response_frame(8, body, flexible=True)


def describe_configs_request() -> bytes:
    from kio.schema.describe_configs.v4 import request as m
    from kio.static.primitive import i8
    body = kio_bytes(m.DescribeConfigsRequest(
        resources=(m.DescribeConfigsResource(resource_type=i8(4), resource_name="1", configuration_keys=None),),
        include_synonyms=True, include_documentation=False))
    return request_frame(32, 4, 8, "adminclient-1", body, flexible=True)


def scram_upsertion() -> bytes:
    from kio.schema.alter_user_scram_credentials.v0 import request as m
    from kio.static.primitive import i8, i32
    body = kio_bytes(m.AlterUserScramCredentialsRequest(
        deletions=(), upsertions=(m.ScramCredentialUpsertion(
            name="alice", mechanism=i8(1), iterations=i32(8192), salt=b"salt-bytes-4242",
            salted_password=b"salted-password-bytes-4242"),)))
    return request_frame(51, 0, 9, "adminclient-1", body, flexible=True)


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    path = tmp_path_factory.mktemp("admin") / "admin-secrets.pcap"
    empty_answer = response_frame(7, b"\x00\x00\x00\x00\x01\x00", flexible=True)  # throttle 0, no results
    scram_answer = response_frame(9, b"\x00\x00\x00\x00\x01\x00", flexible=True)
    path.write_bytes(conversation_pcap([
        (0, incremental_alter_configs()), (1, empty_answer),
        (0, describe_configs_request()), (1, describe_configs_answer()),
        (0, scram_upsertion()), (1, scram_answer),
    ]))
    return path


SECRETS = [JAAS, "jaas-pw-0417", KEY_PASSWORD, "sensitive-by-flag-77", b"salt-bytes-4242".hex(),
           b"salted-password-bytes-4242".hex()]


def kwire(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "kwire", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("view", [["--json"], ["-V"]])
def test_admin_secrets_redacted(capture, view):
    out = kwire("inspect", "--no-summary", *view, str(capture))
    assert "IncrementalAlterConfigs" in out and "DescribeConfigs" in out and "AlterUserScramCredentials" in out
    for secret in SECRETS:
        assert secret not in out, secret
    assert PLAIN_VALUE in out and "redacted" in out  # the harmless values are shown, the others said hidden


def test_show_secrets_shows_them(capture):
    out = kwire("inspect", "--no-summary", "--json", "--show-secrets", str(capture))
    for secret in SECRETS[2:]:
        assert secret in out, secret


@pytest.mark.parametrize("name,sensitive", [
    ("sasl.jaas.config", True), ("listener.name.sasl_ssl.plain.sasl.jaas.config", True),
    ("ssl.key.password", True), ("ssl.keystore.password", True), ("ssl.keystore.key", True),
    ("ssl.keystore.certificate.chain", True), ("ssl.truststore.certificates", True),
    ("delegation.token.secret.key", True), ("password.encoder.secret", True),
    ("sasl.oauthbearer.client.credentials.client.secret", True), ("SSL.KEY.PASSWORD", True),
    ("retention.ms", False), ("cleanup.policy", False), ("ssl.keystore.location", False),
    ("sasl.enabled.mechanisms", False), ("", False), (None, False), (7, False),
])
def test_sensitive_config_rule(name, sensitive):
    assert sensitive_config(name) is sensitive
