"""Decoded bodies made plain: JSON-ready values for every renderer, with secrets redacted.

`plain_body(body, records=..., show_secrets=...)` turns a decoded body into dicts, lists, str, int,
float, bool and None: RawRecords become a summary of their batches (records="summary"), every
record ("full") or their size ("none"); bytes become {"hex": ...}; unknown tagged fields keep
their tags as text keys. Record sets draw on `budget`, a kwire.native.codec_budget.RecordBudget: the caller
gives one per exchange, shared by the request and the response (kwire.render.records_run).

Secrets: the fields the schemas mark as secrets (kwire.codec.overlay.ROLES: SaslAuthenticate AuthBytes,
delegation-token Hmac, SCRAM credential Salt / SaltedPassword, an Envelope's forwarded request) are
redacted unless show_secrets is set: AuthBytes become `sasl_view(bytes)` (kwire.codec.sasl), the SASL message's structure
with its secret parts left out (user names and mechanism-level structure shown; passwords, proofs,
signatures, nonces and tokens never), other secret fields {"redacted": n_bytes}. A configuration
entry's value (CreateTopics, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs: the fields marked
as config names and values) becomes {"redacted": n_chars} when its name is one Kafka treats as
sensitive (kwire.codec.overlay.sensitive_config: passwords, JAAS configs, keys, secrets) or the broker
said IsSensitive; so do the values of its synonyms. In the bodies of SECRET_APIS the unknown tagged
fields (kept as hex by the decoders: a newer client's field kwire cannot name may hold anything) become
{"redacted": n_bytes} too. SECRET_APIS names the apis whose bodies can hold such fields, found from the
same marks: `json_default(records)` (the JSON encoder's hook for non-JSON values) never sees field
names, so renderers walk those bodies with plain_body and hand every other body to the encoder as it is.
"""

from __future__ import annotations

import orjson

from kwire.native.codec_budget import RecordBudget
from kwire.codec.config_secrets import sensitive_config
from kwire.codec.overlay import field_names_with, messages_with
from kwire.native.codec_records import crc32c, decode_records, summarize_records
from kwire.codec.sasl import sasl_view
from kwire.codec.schema import CONFIG_NAME, CONFIG_SENSITIVE, CONFIG_VALUE, SECRET
from kwire.codec.values import RawRecords
from kwire.native.json_line import RecordsHook
from kwire.render.records_json import attributes_json
from kwire.kafka.apis import API_BY_NAME


def _api_keys(message_names) -> frozenset[int]:
    return frozenset(API_BY_NAME[name.removesuffix("Request").removesuffix("Response").lower()].key
                     for name in message_names)


SECRET_FIELDS = field_names_with(SECRET)
CONFIG_NAMES, CONFIG_VALUES = field_names_with(CONFIG_NAME), field_names_with(CONFIG_VALUE)
CONFIG_FLAGS = field_names_with(CONFIG_SENSITIVE)  # the broker's own IsSensitive
CONFIG_APIS = _api_keys(messages_with(CONFIG_VALUE))  # CreateTopics, DescribeConfigs, AlterConfigs, ...
SECRET_APIS = _api_keys(messages_with(SECRET)) | CONFIG_APIS
_BYTES = (bytes, bytearray, memoryview)


def _records(value: RawRecords, records: str, budget: RecordBudget | None):
    if records == "full":
        return decode_records(value.data, budget)
    if records == "none":
        return {"size": len(value.data)}
    return summarize_records(value.data, budget)


def plain_value(value, records: str = "summary", show_secrets: bool = False, key: str | None = None,
                budget: RecordBudget | None = None, configs: bool = False):
    """`value` made plain. Without a `budget`, each record set gets a fresh default one. `configs`: the
    value is (part of) a body of CONFIG_APIS, whose configuration entries may hold secrets."""
    t = type(value)
    if t is dict or isinstance(value, dict):
        out = {str(k): plain_value(v, records, show_secrets, str(k), budget, configs) for k, v in value.items()}
        if configs and not show_secrets:
            _redact_config(out)
        return out
    if t is list or t is tuple:
        return [plain_value(v, records, show_secrets, None, budget, configs) for v in value]
    if t is RawRecords:
        return _records(value, records, budget)
    if isinstance(value, _BYTES):
        if key in SECRET_FIELDS and not show_secrets:
            return sasl_view(value) if key == "AuthBytes" else {"redacted": len(value)}
        return {"hex": bytes(value).hex()}
    return value


def plain_body(body: dict | None, records: str = "summary", show_secrets: bool = False,
               api_key: int | None = None, budget: RecordBudget | None = None) -> dict | None:
    """`body` made plain; secrets redacted unless show_secrets. `api_key` None (not known) is treated
    as an api that can carry secrets. `budget`: the exchange's record budget."""
    if body is None:
        return None
    plain = plain_value(body, records, show_secrets, None, budget, api_key is None or api_key in CONFIG_APIS)
    if not show_secrets and (api_key is None or api_key in SECRET_APIS):
        _redact_unknown_tags(plain)
    return plain


UNKNOWN_TAGS = "_unknown_tagged_fields"
SYNONYMS = "Synonyms"  # DescribeConfigs: the entries a config's value comes from, each a name and a value


def _redact_config(entry: dict, sensitive: bool = False) -> None:
    """A configuration entry's value, redacted when its name is sensitive or the broker said so."""
    name = next((entry[k] for k in CONFIG_NAMES if k in entry), None)
    value_key = next((k for k in CONFIG_VALUES if k in entry), None)
    if value_key is None or name is None:
        return
    sensitive = sensitive or any(entry.get(k) is True for k in CONFIG_FLAGS) or sensitive_config(name)
    if not sensitive:
        return
    value = entry[value_key]
    if type(value) is str:
        entry[value_key] = {"redacted": len(value)}
    for synonym in entry.get(SYNONYMS) or ():
        if type(synonym) is dict:
            _redact_config(synonym, True)


def _redact_unknown_tags(node) -> None:
    if type(node) is dict:
        for key, value in node.items():
            if key == UNKNOWN_TAGS and type(value) is dict:
                node[key] = {tag: {"redacted": len(raw) // 2 if type(raw) is str else 0} for tag, raw in value.items()}
            else:
                _redact_unknown_tags(value)
    elif type(node) is list:
        for item in node:
            _redact_unknown_tags(item)


class SummaryHook(RecordsHook):
    """The `default` hook of `json_default("summary", budget)` for one exchange after another: the
    exchange's budget is made when its first record set is met (`run.budget()`, run: a
    kwire.render.records_run.RecordsRun), and handed back by `take_budget()` for the caller to charge.
    A record set of whole v2 batches comes back as its JSON text (kwire.render.records_json), any other
    as summarize_records' dict. One per renderer, not one per exchange. (The native core's hook,
    kwire.native.json_line.RecordsHook, given kwire's records.)"""

    __slots__ = ()

    def __init__(self, run):
        super().__init__(run, RawRecords, summarize_records, crc32c, attributes_json, orjson.Fragment)


def json_default(records: str = "summary", budget: RecordBudget | None = None):
    """The `default` hook of a JSON encoder fed raw decoded bodies (of apis not in SECRET_APIS);
    `budget`: the exchange's record budget (None: a fresh one per record set)."""

    if records == "summary":  # the common mode, one call less per record set
        def summary_default(value):
            if type(value) is RawRecords:
                return summarize_records(value.data, budget)
            if isinstance(value, _BYTES):
                return {"hex": bytes(value).hex()}
            raise TypeError(f"{type(value).__name__} is not JSON serializable")

        return summary_default

    def default(value):
        if type(value) is RawRecords:
            return _records(value, records, budget)
        if isinstance(value, _BYTES):
            return {"hex": bytes(value).hex()}
        raise TypeError(f"{type(value).__name__} is not JSON serializable")

    return default
