"""What one admin exchange changed in the cluster: `change_of(ex)` -> a change entry, or None.

A change is a request that creates, alters or deletes something: topics, partitions, configurations,
ACLs, SCRAM credentials, client quotas, group offsets set or deleted by a tool, groups and members
removed, records deleted, leaders elected, reassignments, features, delegation tokens, transactions
aborted by a tool, brokers unregistered. The entry (a plain dict, picklable, the `changes` entries of
the stats document less `principal`, which kwire.analytics.changes joins in from the SASL exchange of
the same connection):

    {ts_ns, client, broker, client_id, correlation_id, api, operation, resources: [dict], result: [str],
     kind}

`result[i]` is the outcome for `resources[i]`: "ok", the Kafka error name the broker gave it,
"no_response" when the request was not answered, "undecoded" when the answer did not decode,
"not_in_answer" when the answer decoded but did not name the resource.
`kind` names a destructive or security-relevant change (DESTRUCTIVE), else None.

The bodies are read through the schemas' marks (kwire.codec.schema): numbers with names (ACL resource
types, operations, permissions, config operations, SCRAM mechanisms, election types) come out as the
names (`enum=`), secret fields (`role=SECRET`: salts, salted passwords, token HMACs) are never read, and
a configuration value (`role=CONFIG_VALUE`) is {"redacted": n_chars} when its name is one Kafka treats
as sensitive (kwire.codec.config_secrets.sensitive_config) or the broker flagged it (`role=CONFIG_SENSITIVE`).
Requests that only validate (ValidateOnly) change nothing and are not changes. A consumer's own offset
commit is not a change: a tool commits with no member id and generation -1 (OffsetCommit v1+); members
removed by a tool are LeaveGroup members named by instance id alone or removed "by an admin" (the Java
admin client's reason).
"""

from __future__ import annotations

from kwire.codec.config_secrets import sensitive_config
from kwire.codec.schema import CONFIG_NAME, CONFIG_SENSITIVE, CONFIG_VALUE, SECRET
from kwire.codec.schemas import schema_for
from kwire.kafka.error_codes import error_name
from kwire.model import PAIRED, Exchange

OK, NO_RESPONSE, UNDECODED, NOT_IN_ANSWER = "ok", "no_response", "undecoded", "not_in_answer"
# kinds of change that are findings (kwire.analytics.findings_changes), with their severity
DESTRUCTIVE = {"topic_deleted": "critical", "records_deleted": "critical", "acl_allow_all": "critical",
               "group_deleted": "warning", "offsets_moved": "warning", "acl_removed": "warning",
               "credentials_changed": "warning"}
ADMIN_REASON = "removed by an admin"  # the Java admin client's LeaveGroup reason
MARKER_SENDER = "txn-marker-sender"  # a broker's own WriteTxnMarkers client id (not a tool)


# ---- bodies with their marks applied ------------------------------------------------------------

def named(api_key: int | None, kind: str, version: int | None, body) -> dict | None:
    """`body` with enum-marked numbers as their names, secrets left out and sensitive configuration
    values redacted, by the schema of (api, kind, version); None when there is no body."""
    if body is None or api_key is None or version is None:
        return None
    schema = schema_for(api_key, kind)
    if schema is None:
        return None
    return _named(body, schema.fields, version)


def _named(struct: dict, fields, version: int) -> dict:
    out = {}
    name_key = value_key = None
    flagged = False
    for f in fields:
        if f.name not in struct or not f.present_in(version):
            continue
        value = struct[f.name]
        if f.role == SECRET:
            continue
        if f.fields is not None:
            if type(value) is list:
                value = [_named(v, f.fields, version) if type(v) is dict else v for v in value]
            elif type(value) is dict:
                value = _named(value, f.fields, version)
        elif f.enum is not None:
            value = [f.enum.get(v, v) for v in value] if type(value) is list else f.enum.get(value, value)
        if f.role == CONFIG_NAME:
            name_key = f.name
        elif f.role == CONFIG_VALUE:
            value_key = f.name
        elif f.role == CONFIG_SENSITIVE:
            flagged = value is True
        out[f.name] = value
    secret = flagged or sensitive_config(out.get(name_key))
    if value_key is not None and type(out.get(value_key)) is str and secret:
        out[value_key] = {"redacted": len(out[value_key])}
    return out


# ---- results ------------------------------------------------------------------------------------

def code_result(code) -> str:
    return OK if not code else error_name(code)


class Answer:
    """The response of an exchange as results: `of(code)` for a resource's own error code, with the
    whole request's outcome first (not answered, not decoded, a top-level error)."""

    __slots__ = ("body", "whole")

    def __init__(self, ex: Exchange, top_field: str | None = "ErrorCode"):
        self.body = named(ex.api_key, "response", ex.api_version, ex.response) if ex.status == PAIRED else None
        if ex.status != PAIRED:
            self.whole = NO_RESPONSE
        elif self.body is None:
            self.whole = UNDECODED
        else:
            top = self.body.get(top_field) if top_field else None
            self.whole = code_result(top) if top else None

    def of(self, code=None, missing: bool = False) -> str:
        if self.whole is not None:
            return self.whole
        return NOT_IN_ANSWER if missing else code_result(code)

    def by(self, array: str, key) -> dict:
        """The response's `array` entries by key(entry)."""
        return {key(e): e for e in (self.body or {}).get(array) or () if type(e) is dict}


def first_error(entries, field: str = "ErrorCode") -> int:
    return next((e.get(field) for e in entries or () if type(e) is dict and e.get(field)), 0)


def entry(ex: Exchange, operation: str, resources: list, results: list, kind: str | None = None) -> dict:
    return {"ts_ns": ex.ts_ns, "client": ex.client, "broker": ex.broker, "client_id": ex.client_id,
            "correlation_id": ex.correlation_id, "api": ex.api, "operation": operation,
            "resources": resources, "result": results, "kind": kind}


def change_of(ex: Exchange) -> dict | None:
    """The change `ex` made or tried, or None when it changes nothing (or its request is unknown)."""
    from kwire.analytics.changes_apis import READERS

    reader = READERS.get(ex.api)
    if reader is None or not ex.request:
        return None
    request = named(ex.api_key, "request", ex.api_version, ex.request)
    if not request or request.get("ValidateOnly") is True or request.get("validateOnly") is True:
        return None
    return reader(ex, request)


def is_change(ex: Exchange) -> bool:
    """Does `ex` change the cluster (or try to)? `kwire inspect --changes` keeps these exchanges."""
    from kwire.analytics.changes_apis import READERS

    return ex.api in READERS and change_of(ex) is not None
