"""scripts/gen_secrets.py: Kafka's configuration names, by type, from its Java and Scala sources.

A small git repository in Kafka's layout checks the reading: constants resolved through concatenation,
static and Scala imports, inheritance and nested classes; `define`, `defineInternal` and `new ConfigKey`;
comments, strings and test sources ignored; the union over revisions, a name PASSWORD in any of them being a
secret; a definition whose name is no constant said in the header. With KWIRE_KAFKA_GIT (an apache/kafka git
directory) the committed kwire/codec/kafka_configs.py is checked against a fresh generation from the revisions
its header names.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

from tests.scripts.git_repo import commit, git

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("gen_secrets", ROOT / "scripts" / "gen_secrets.py")
gen = importlib.util.module_from_spec(spec)
sys.modules["gen_secrets"] = gen
spec.loader.exec_module(gen)

SSL = """package org.apache.kafka.common.config;
public class SslConfigs {
    public static final String SSL_KEY_PASSWORD_CONFIG = "ssl.key.password";
    public static final String SSL_KEYMANAGER_ALGORITHM_CONFIG = "ssl.keymanager.algorithm";
    private static final String NOT_A_CONFIG = "define(\\"in.a.string\\", Type.PASSWORD";
    public static void addClientSslSupport(ConfigDef config) {
        config.define(SslConfigs.SSL_KEY_PASSWORD_CONFIG, ConfigDef.Type.PASSWORD, null, Importance.HIGH, "doc")
              // .define("commented.out", ConfigDef.Type.PASSWORD, null, Importance.HIGH, "doc")
              /* .define("block.commented", ConfigDef.Type.PASSWORD, ...) */
              .define(SSL_KEYMANAGER_ALGORITHM_CONFIG, ConfigDef.Type.STRING, "SunX509", Importance.LOW, "doc");
    }
}
"""
TOKENS = """package org.apache.kafka.server.config;
import static org.apache.kafka.common.config.ConfigDef.Type.PASSWORD;
import static org.apache.kafka.common.config.ConfigDef.Type.LONG;
import static org.apache.kafka.common.config.SslConfigs.*;
public class DelegationTokenManagerConfigs {
    private static final String PREFIX = "delegation." + "token.";
    public static final String SECRET_KEY_CONFIG = PREFIX + "secret.key";
    public static final String EXPIRY_CONFIG = (PREFIX + "expiry.time.ms");
    public static class Nested { public static final String ALIAS = PREFIX + "master.key"; }
    public static final ConfigDef CONFIG_DEF = new ConfigDef()
        .define(SECRET_KEY_CONFIG, PASSWORD, null, MEDIUM, "doc")
        .define(DelegationTokenManagerConfigs.Nested.ALIAS, PASSWORD, null, MEDIUM, "doc")
        .defineInternal(EXPIRY_CONFIG, LONG, 1L, MEDIUM, "doc")
        .define(new ConfigKey(SSL_KEY_PASSWORD_CONFIG + ".copy", ConfigDef.Type.PASSWORD, null, null, MEDIUM, "d"));
    static void perListener(ConfigDef def, String listener) {
        def.define(listener + ".computed", ConfigDef.Type.PASSWORD, null, MEDIUM, "doc");
    }
}
"""
CONNECT = """package org.apache.kafka.connect.runtime;
public class ConnectorConfig { public static final String NAME_CONFIG = "name"; }
"""
SINK = """package org.apache.kafka.connect.runtime;
public class SinkConnectorConfig extends ConnectorConfig {
    static ConfigDef config = ConnectorConfig.configDef().define(NAME_CONFIG, Type.STRING, null, HIGH, "doc");
}
"""
SCALA = """package kafka.server
import org.apache.kafka.common.config.SslConfigs
object KafkaConfig {
  val ZkPasswordProp = "zookeeper.ssl." +
    "keystore.password"
  val KeyPasswordProp = SslConfigs.SSL_KEY_PASSWORD_CONFIG
  val SaslJaasConfigProp: String = "sasl.jaas.config"
  private val configDef = {
    import ConfigDef.Type._
    new ConfigDef()
      .define(ZkPasswordProp, PASSWORD, null, MEDIUM, "doc")
      .define(SaslJaasConfigProp, PASSWORD, null, MEDIUM, "doc")
      .define(KeyPasswordProp, PASSWORD, null, MEDIUM, "doc")
  }
}
"""
TEST_ONLY = 'class T { void f() { def.define("test.only.secret", ConfigDef.Type.PASSWORD, null, HIGH, ""); } }'


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "kafka"
    repo.mkdir()
    git(repo, "init", "-q")
    base = "clients/src/main/java/org/apache/kafka/"
    old = commit(repo, {
        base + "common/config/SslConfigs.java": SSL,
        "server/src/main/java/org/apache/kafka/server/config/DelegationTokenManagerConfigs.java": TOKENS,
        "connect/runtime/src/main/java/org/apache/kafka/connect/runtime/ConnectorConfig.java": CONNECT,
        "connect/runtime/src/main/java/org/apache/kafka/connect/runtime/SinkConnectorConfig.java": SINK,
        "core/src/main/scala/kafka/server/KafkaConfig.scala": SCALA,
        "clients/src/test/java/org/apache/kafka/T.java": TEST_ONLY,
        "jmh-benchmarks/src/main/java/T.java": TEST_ONLY,
        base + "Old.java": 'class Old { static final String O = "old.secret"; void f() { '
                           'd.define(O, Type.PASSWORD, null, HIGH, ""); d.define("both", Type.PASSWORD); } }',
    }, "old")
    (repo / base / "Old.java").unlink()
    new = commit(repo, {base + "New.java": 'class New { void f() { d.define("both", Type.STRING, null, HIGH, ""); } }'},
                 "new")
    return repo, old, new


def generated(tmp_path, monkeypatch, repo_dir, revs) -> tuple[str, dict]:
    out = tmp_path / "kafka_configs.py"
    monkeypatch.setattr(gen, "OUT", out)
    assert gen.main(["--git", str(repo_dir / ".git"), *revs]) == 0
    text = out.read_text()
    namespace: dict = {}
    exec(compile(text, str(out), "exec"), namespace)
    return text, namespace


def test_names_are_resolved_and_typed(tmp_path, monkeypatch, repo):
    repo_dir, old, new = repo
    text, names = generated(tmp_path, monkeypatch, repo_dir, [old, new])
    assert names["PASSWORD_CONFIGS"] == {
        "ssl.key.password", "delegation.token.secret.key", "delegation.token.master.key", "ssl.key.password.copy",
        "zookeeper.ssl.keystore.password", "sasl.jaas.config", "old.secret", "both"}
    assert names["OTHER_CONFIGS"] == {"ssl.keymanager.algorithm", "delegation.token.expiry.time.ms", "name"}
    assert "DelegationTokenManagerConfigs.java:" in text and "PASSWORD definitions whose name is not a constant" \
        " (not in the list): 1" in text  # the per-listener definition, said
    assert old[:12] in text and new[:12] in text
    assert all(len(line) <= 120 for line in text.splitlines())


def test_check_says_when_the_module_differs(tmp_path, monkeypatch, repo):
    repo_dir, old, new = repo
    generated(tmp_path, monkeypatch, repo_dir, [old, new])
    assert gen.main(["--git", str(repo_dir / ".git"), old, new, "--check"]) == 0
    assert gen.main(["--git", str(repo_dir / ".git"), new, "--check"]) == 1  # "old.secret" would go


def test_the_committed_module_is_what_kafkas_sources_give():
    kafka_git = os.environ.get("KWIRE_KAFKA_GIT")
    if not kafka_git:
        pytest.skip("KWIRE_KAFKA_GIT names no apache/kafka git directory")
    header = (ROOT / "kwire" / "codec" / "kafka_configs.py").read_text().split('"""')[1]
    command = re.search(r"--git KAFKA_GIT_DIR(.*?)\nand checked", header, re.S).group(1)
    revs = command.replace("\\", " ").split()
    assert gen.main(["--git", kafka_git, *revs, "--check"]) == 0
