"""Which configuration values are secrets (kwire.codec.config_secrets), by Kafka's own definitions.

The names come from kwire/codec/kafka_configs.py, generated from Kafka's sources (scripts/gen_secrets.py). The
rule is checked on every name it lists: each PASSWORD name is a secret bare and in each of Kafka's prefixed
forms, and no name Kafka defines with another type is one, bare or behind a listener's prefix, even those that
read like credentials (`delegation.token.expiry.time.ms`). Unknown names are secrets when they read like a
credential. With KWIRE_KAFKA_CLIENTS_JAR (a kafka-clients jar; java and javac on PATH) every configuration the
client defines is checked to be in the lists, PASSWORD ones as secrets.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

from kwire.codec.config_secrets import known_tail, reads_like_credential, sensitive_config
from kwire.codec.kafka_configs import OTHER_CONFIGS, PASSWORD_CONFIGS

ROOT = Path(__file__).resolve().parents[2]
# Kafka's prefixed forms: a listener's, a listener's SASL mechanism's, Connect's client overrides,
# MirrorMaker's per cluster, Streams' per client, remote storage's plugin configs.
PREFIXES = ("listener.name.sasl_ssl.", "listener.name.external.scram-sha-512.", "listener.name.ssl.oauthbearer.",
            "producer.override.", "consumer.override.", "admin.", "source.cluster.", "backup.", "main.consumer.",
            "rsm.config.", "listeners.https.", "admin.listeners.https.")


def test_the_lists_are_kafkas_names():
    assert "delegation.token.master.key" in PASSWORD_CONFIGS  # PASSWORD in 1.1 to 3.9 (an alias)
    assert {"sasl.jaas.config", "ssl.key.password", "ssl.keystore.password", "ssl.truststore.password",
            "ssl.keystore.key", "password.encoder.secret", "delegation.token.secret.key"} <= PASSWORD_CONFIGS
    assert {"ssl.keymanager.algorithm", "delegation.token.expiry.time.ms", "sasl.kerberos.service.name",
            "ssl.endpoint.identification.algorithm", "retention.ms", "bootstrap.servers"} <= OTHER_CONFIGS
    assert not PASSWORD_CONFIGS & OTHER_CONFIGS
    assert len(OTHER_CONFIGS) > 500


@pytest.mark.parametrize("prefix", ("",) + PREFIXES)
def test_every_password_config_is_a_secret_in_every_prefixed_form(prefix):
    shown = [n for n in PASSWORD_CONFIGS if not sensitive_config(prefix + n)]
    assert not shown


@pytest.mark.parametrize("prefix", ("", "listener.name.internal.", "listener.name.sasl_ssl.scram-sha-256.",
                                    "producer.override.", "source.cluster."))
def test_no_name_kafka_defines_as_not_secret_is_redacted(prefix):
    hidden = [n for n in OTHER_CONFIGS if sensitive_config(prefix + n)]
    assert not hidden
    assert any(reads_like_credential(n) for n in OTHER_CONFIGS)  # the names the heuristic alone would hide


@pytest.mark.parametrize("name,sensitive", [
    ("delegation.token.master.key", True), ("DELEGATION.TOKEN.MASTER.KEY", True),
    ("listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config", True), ("listener.name.ssl.ssl.key.password", True),
    ("delegation.token.expiry.time.ms", False), ("ssl.keymanager.algorithm", False),
    ("sasl.kerberos.service.name", False), ("ssl.endpoint.identification.algorithm", False),
    ("listener.name.sasl_ssl.scram-sha-256.sasl.login.callback.handler.class", False),
    ("zookeeper.clientCnxnSocket", False),
    # names Kafka does not define (newer releases, plugins, connectors): hidden when they read like credentials
    ("sasl.oauthbearer.client.credentials.client.secret", True),
    ("sasl.oauthbearer.assertion.private.key.passphrase", True), ("vault.api.token", True),
    ("custom.signing.key", True), ("aws.access.key.id", True), ("http.headers.authorization", True),
    ("basic.auth.user.info", True), ("SCRAM-SHA-256", True), ("scram-sha-512", True),
    ("my.secret.retention.ms", True),  # a known name behind a prefix that reads like a credential
    ("custom.retention.policy", False), ("scram.sha.enabled", False), ("keystore.type.custom", False),
    ("", False), (None, False), (7, False), (b"ssl.key.password", False),
])
def test_sensitive_config(name, sensitive):
    assert sensitive_config(name) is sensitive


def test_the_longest_known_tail_decides():
    assert known_tail("listener.name.internal.ssl.keystore.location") == "ssl.keystore.location"
    assert known_tail("ssl.key.password") == "ssl.key.password"
    assert known_tail("no.such.name.at.all") is None


def _generator():
    spec = importlib.util.spec_from_file_location("gen_secrets", ROOT / "scripts" / "gen_secrets.py")
    gen = importlib.util.module_from_spec(spec)
    sys.modules["gen_secrets"] = gen
    spec.loader.exec_module(gen)
    return gen


def test_the_reference_client_defines_nothing_the_lists_lack():
    jar = os.environ.get("KWIRE_KAFKA_CLIENTS_JAR")
    if not jar or not Path(jar).is_file():
        pytest.skip("KWIRE_KAFKA_CLIENTS_JAR names no kafka-clients jar (e.g. pyflink/lib/kafka-clients.jar of the "
                    "PyPI package shigawire-apache-flink-libraries)")
    if not (shutil.which("javac") and shutil.which("java")):
        pytest.skip("no javac and java on PATH")
    assert _generator().check_jar(jar, PASSWORD_CONFIGS, OTHER_CONFIGS) == []
