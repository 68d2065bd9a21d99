"""Test-only, issue 49: secret configuration values set and answered through the admin apis.

`secret_capture(seed=0, scale=1)` -> `SecretCapture`: a pcap of one admin connection whose exchanges carry
secret configuration values, each a distinct marker string, beside harmless ones:
- AlterConfigs v2 and IncrementalAlterConfigs v1 requests set, on a broker, `delegation.token.master.key`
  (the name a hand list missed), a seeded sample of the names Kafka defines with Type.PASSWORD
  (kwire.codec.kafka_configs), their listener- and mechanism-prefixed forms, an unknown name that reads like a
  credential (`vault.api.token`, `...private.key`) and the SCRAM user configuration (`SCRAM-SHA-256`);
- CreateTopics v5 sets some of them as topic configurations, and its answer echoes them;
- a DescribeConfigs v4 answer gives them back with IsSensitive false (a broker that lies: the names alone
  must hide them), plus a harmless-looking name with IsSensitive true (the flag alone must hide it) and
  synonyms of each.
Every exchange also carries names Kafka knows are not secrets although they read a little like one
(`delegation.token.expiry.time.ms`, `ssl.keymanager.algorithm`, ...): their values must stay shown.

`scale` multiplies the resources of each request (each with its own markers). The frames are written by the
project's own encoder (tests/render/hostile.py), driven by kwire's schemas.

    python -m tests.hostile3.secrets OUT.pcap --scale 100
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, field

from kwire.codec.kafka_configs import PASSWORD_CONFIGS
from tests.fuzz.conversation import conversation_pcap
from tests.render.hostile import exchange

MASTER_KEY = "delegation.token.master.key"
UNKNOWN_SECRETS = ("vault.api.token", "custom.signing.private.key", "my.connector.credentials")
MECHANISM_JAAS = "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config"  # a broker's per-mechanism JAAS
PREFIXES = ("listener.name.internal.", "producer.override.", "source.cluster.")
SCRAM = "SCRAM-SHA-256"  # a user's SCRAM credential as a user configuration (salt, stored and server key)
# Names Kafka defines with a type other than PASSWORD: shown, although some read a little like secrets.
SHOWN = ("delegation.token.expiry.time.ms", "ssl.keymanager.algorithm", "sasl.kerberos.service.name",
         "ssl.endpoint.identification.algorithm", "log.retention.ms", "sasl.oauthbearer.token.endpoint.url",
         "listener.name.internal.ssl.keystore.location")
BROKER, TOPIC = 4, 2  # ConfigResource types


@dataclass
class SecretCapture:
    pcap: bytes
    secrets: list[str] = field(default_factory=list)  # values that must never be shown
    shown: list[str] = field(default_factory=list)  # values that must be shown
    names: list[str] = field(default_factory=list)  # the secret names used


def secret_names(rng: random.Random) -> list[str]:
    """The master key, a sample of PASSWORD names, prefixed forms, unknown credential-like names."""
    sample = rng.sample(sorted(PASSWORD_CONFIGS - {MASTER_KEY}), 4)
    prefixed = [p + n for p, n in zip(PREFIXES, rng.sample(sorted(PASSWORD_CONFIGS), len(PREFIXES)))]
    return [MASTER_KEY, *sample, MECHANISM_JAAS, *prefixed, *UNKNOWN_SECRETS, SCRAM]


class Markers:
    """Distinct values: a secret's and a harmless one's, so an output can be searched for each."""

    def __init__(self, rng: random.Random, out: SecretCapture):
        self.rng, self.out = rng, out

    def secret(self) -> str:
        value = f"s3cr3t-{self.rng.randrange(16**10):010x}"
        self.out.secrets.append(value)
        return value

    def shown(self) -> str:
        value = f"plain-{self.rng.randrange(16**10):010x}"
        self.out.shown.append(value)
        return value


def _configs(names, marks: Markers, extra=None) -> list[dict]:
    configs = [{"Name": n, "Value": marks.secret(), **(extra or {})} for n in names]
    return configs + [{"Name": n, "Value": marks.shown(), **(extra or {})} for n in SHOWN]


def alter_configs(corr: int, names, marks: Markers, scale: int):
    resources = [{"ResourceType": BROKER, "ResourceName": str(i), "Configs": _configs(names, marks)}
                 for i in range(scale)]
    answers = [{"ErrorCode": 0, "ResourceType": BROKER, "ResourceName": str(i)} for i in range(scale)]
    return exchange(33, 2, corr, "adminclient-1", {"Resources": resources, "ValidateOnly": False},
                    {"Responses": answers})


def incremental_alter_configs(corr: int, names, marks: Markers, scale: int):
    resources = [{"ResourceType": BROKER, "ResourceName": str(i),
                  "Configs": _configs(names, marks, {"ConfigOperation": 0})} for i in range(scale)]
    answers = [{"ErrorCode": 0, "ResourceType": BROKER, "ResourceName": str(i)} for i in range(scale)]
    return exchange(44, 1, corr, "adminclient-1", {"Resources": resources, "ValidateOnly": False},
                    {"Responses": answers})


def create_topics(corr: int, names, marks: Markers, scale: int):
    topics = [{"Name": f"t{i}", "NumPartitions": 1, "ReplicationFactor": 1, "Configs": _configs(names, marks)}
              for i in range(scale)]
    echoed = [{"Name": f"t{i}", "ErrorCode": 0, "NumPartitions": 1, "ReplicationFactor": 1,
               "Configs": _configs(names, marks, {"ConfigSource": 1, "IsSensitive": False})} for i in range(scale)]
    return exchange(19, 5, corr, "adminclient-1", {"Topics": topics, "timeoutMs": 30000, "validateOnly": False},
                    {"Topics": echoed})


def _described(name: str, value: str, sensitive: bool, synonym: str) -> dict:
    return {"Name": name, "Value": value, "ConfigSource": 4, "IsSensitive": sensitive, "ConfigType": 2,
            "Synonyms": [{"Name": name, "Value": synonym, "Source": 4}]}


def describe_configs(corr: int, names, marks: Markers, scale: int):
    results = []
    for i in range(scale):
        configs = [_described(n, marks.secret(), False, marks.secret()) for n in names]
        configs.append(_described("custom.harmless.looking", marks.secret(), True, marks.secret()))
        configs += [_described(n, marks.shown(), False, marks.shown()) for n in SHOWN]
        results.append({"ErrorCode": 0, "ResourceType": BROKER, "ResourceName": str(i), "Configs": configs})
    request = {"Resources": [{"ResourceType": BROKER, "ResourceName": str(i), "ConfigurationKeys": None}
                             for i in range(scale)], "IncludeSynonyms": True}
    return exchange(32, 4, corr, "adminclient-1", request, {"Results": results})


def secret_capture(seed: int = 0, scale: int = 1) -> SecretCapture:
    rng = random.Random(seed)
    out = SecretCapture(b"")
    out.names = secret_names(rng)
    marks = Markers(rng, out)
    messages = []
    for corr, build in enumerate((alter_configs, incremental_alter_configs, create_topics, describe_configs), 1):
        messages += build(corr, out.names, marks, scale)
    out.pcap = conversation_pcap(messages, start_ns=1_795_305_690 * 10**9)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", type=int, default=1)
    args = parser.parse_args(argv)
    capture = secret_capture(args.seed, args.scale)
    with open(args.out, "wb") as f:
        f.write(capture.pcap)
    print(f"{args.out}: {len(capture.pcap):,} bytes, {len(capture.secrets):,} secret values")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
