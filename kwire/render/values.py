"""Decoded bodies made plain: JSON-ready values for every renderer, with secrets redacted.

`plain_body(body, records=..., show_secrets=...)` turns a decoded body into dicts, lists, str, int,
float, bool and None: RawRecords become a summary of their batches (records="summary"), every
record ("full") or their size ("none"); bytes become {"hex": ...}; unknown tagged fields keep
their tags as text keys. Record sets draw on `budget`, a kwire.codec.budget.RecordBudget: the caller
gives one per exchange, shared by the request and the response (kwire.render.records_run).

Secrets: the fields the schemas mark as secrets (kwire.codec.overlay.ROLES: SaslAuthenticate AuthBytes,
delegation-token Hmac, SCRAM credential Salt / SaltedPassword, an Envelope's forwarded request) are
redacted unless show_secrets is set: AuthBytes become `sasl_view(bytes)`, the SASL message's structure
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

from kwire.codec.budget import RecordBudget
from kwire.codec.overlay import field_names_with, messages_with, sensitive_config
from kwire.codec.records import decode_records, summarize_records
from kwire.codec.schema import CONFIG_NAME, CONFIG_VALUE, SECRET
from kwire.codec.values import RawRecords
from kwire.kafka.apis import API_BY_NAME


def _api_keys(message_names) -> frozenset[int]:
    return frozenset(API_BY_NAME[name.removesuffix("Request").removesuffix("Response").lower()].key
                     for name in message_names)


SECRET_FIELDS = field_names_with(SECRET)
CONFIG_NAMES, CONFIG_VALUES = field_names_with(CONFIG_NAME), field_names_with(CONFIG_VALUE)
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
    sensitive = sensitive or entry.get("IsSensitive") is True or sensitive_config(name)
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


def json_default(records: str = "summary", budget: RecordBudget | None = None):
    """The `default` hook of a JSON encoder fed raw decoded bodies (of apis not in SECRET_APIS);
    `budget`: the exchange's record budget (None: a fresh one per record set)."""

    def default(value):
        if type(value) is RawRecords:
            return _records(value, records, budget)
        if isinstance(value, _BYTES):
            return {"hex": bytes(value).hex()}
        raise TypeError(f"{type(value).__name__} is not JSON serializable")

    return default


# ---- SASL messages (RFC 4616 PLAIN, RFC 5802 SCRAM, RFC 7628 OAUTHBEARER) -----------------------

MAX_SHOWN = 256  # longest user name / attribute value shown


def sasl_view(data) -> dict:
    """What may be shown of one SASL message: {"redacted": n_bytes} plus, when the message is a
    recognised PLAIN / SCRAM / OAUTHBEARER one, its mechanism and non-secret parts."""
    raw = bytes(data)
    out: dict = {"redacted": len(raw)}
    if not raw or len(raw) > 65536:
        return out
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return out  # GSSAPI and other binary tokens: nothing to show
    try:
        shown = _plain(text) or _oauthbearer(text) or _scram(text)
    except (ValueError, IndexError):  # pragma: no cover - the parsers check before they index
        shown = None
    if shown:
        out.update(shown)
    return out


def _short(s: str) -> str | None:
    if len(s) > MAX_SHOWN or not s.isprintable():
        return None
    return s


def _plain(text: str) -> dict | None:
    # authzid NUL authcid NUL passwd
    if text.count("\0") != 2:
        return None
    authzid, authcid, password = text.split("\0")
    if password and (password in authcid or password in authzid):
        return {"mechanism": "PLAIN"}  # the names would give the password away
    user = _short(authcid)
    zid = _short(authzid)
    if user is None or zid is None:
        return {"mechanism": "PLAIN"}
    out = {"mechanism": "PLAIN", "username": user}
    if zid:
        out["authzid"] = zid
    return out


def _gs2(text: str) -> tuple[str | None, str] | None:
    """(authzid or None, rest) after an RFC 5801 GS2 header "n,"/"y,"/"p=cb," "[a=authzid]," or None."""
    if not (text.startswith(("n,", "y,")) or text.startswith("p=")):
        return None
    first = text.find(",")
    second = text.find(",", first + 1)
    if first < 0 or second < 0:
        return None
    zid = text[first + 1:second]
    if zid and not zid.startswith("a="):
        return None
    return (_scram_unescape(zid[2:]) if zid else None), text[second + 1:]


def _oauthbearer(text: str) -> dict | None:
    # gs2-header kvsep *(key "=" value kvsep) kvsep, kvsep = %x01; auth=Bearer <token>
    head = _gs2(text)
    if head is None or not head[1].startswith("\x01"):
        return None
    zid, rest = head
    out: dict = {"mechanism": "OAUTHBEARER"}
    if zid is not None and _short(zid) is not None:
        out["authzid"] = zid
    keys = []
    for pair in rest.split("\x01"):
        if not pair:
            continue
        key, _, value = pair.partition("=")
        if key == "auth":
            scheme = value.split(" ", 1)[0]
            if _short(scheme) is not None and len(scheme) < 32:
                out["auth_scheme"] = scheme
        elif _short(key) is not None and len(key) < 64:
            keys.append(key)  # extension values can be secrets too: only their names
    if keys:
        out["extensions"] = keys
    return out


def _scram_unescape(name: str) -> str:
    return name.replace("=2C", ",").replace("=3D", "=")


def _scram_attrs(text: str) -> dict[str, str] | None:
    """RFC 5802 attributes "x=value" (Kafka's extensions such as tokenauth=true too), or None."""
    attrs: dict[str, str] = {}
    for part in text.split(","):
        key, eq, value = part.partition("=")
        if not eq or not key.isalnum() or not key.isascii():
            return None
        attrs[key] = value
    return attrs


def _scram(text: str) -> dict | None:
    head = _gs2(text)
    if head is not None:  # client-first: gs2-header n=user,r=nonce[,extensions]
        zid, rest = head
        attrs = _scram_attrs(rest)
        if not attrs or "n" not in attrs or "r" not in attrs:
            return None
        out = {"mechanism": "SCRAM", "message": "client-first"}
        user = _short(_scram_unescape(attrs["n"]))
        if user is not None:
            out["username"] = user
        if zid is not None and _short(zid) is not None:
            out["authzid"] = zid
        return out
    attrs = _scram_attrs(text)
    if not attrs:
        return None
    if "c" in attrs and "r" in attrs and "p" in attrs:
        return {"mechanism": "SCRAM", "message": "client-final"}
    if "r" in attrs and "s" in attrs and "i" in attrs:
        out = {"mechanism": "SCRAM", "message": "server-first"}
        if attrs["i"].isdigit() and len(attrs["i"]) < 10:
            out["iterations"] = int(attrs["i"])
        return out
    if set(attrs) == {"v"}:
        return {"mechanism": "SCRAM", "message": "server-final"}
    if set(attrs) == {"e"}:
        error = _short(attrs["e"])
        out = {"mechanism": "SCRAM", "message": "server-final"}
        if error is not None:
            out["error"] = error
        return out
    return None
