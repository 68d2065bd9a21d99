"""What one admin exchange changed in the cluster: `change_of(ex)` -> a change entry, or None.

A change is a request that creates, alters or deletes something: topics, partitions, configurations,
ACLs, SCRAM credentials, client quotas, group offsets set or deleted by a tool, groups and members
removed, records deleted, leaders elected, reassignments, features, delegation tokens, transactions
aborted by a tool, brokers unregistered. The entry (a plain dict, picklable, the `changes` entries of
the stats document less `principal`, which kwire.analytics.changes joins in from the SASL exchange of
the same connection):

    {ts_ns, client, broker, client_id, correlation_id, api, operation, resources: [dict], result: [str],
     kind, makes_kind: [index], resource_count, unlisted_results: {result: n}, request_outcome,
     entries_not_read}

`result[i]` is the outcome for `resources[i]`: "ok", the Kafka error name the broker gave it,
"no_response" when the request was not answered, "undecoded" when the answer did not decode,
"not_in_answer" when the answer decoded but did not name the resource, "not_kept" when the part of an
answer past kwire's entries bound that would name it was not kept (kwire.codec.partial).
`kind` names a destructive or security-relevant change (DESTRUCTIVE), else None; `makes_kind` the
indexes in `resources` of those that make it when not every resource does (the allow-all bindings of
a CreateAcls), else [].

Bounded whatever the request's size (`Resources`): every resource the request names is read and counted
(`resource_count`), the first MAX_RESOURCES are kept with their results, then up to MAX_RESOURCES more of
those that make the change's kind (an allow-all binding after a million harmless ones); the results of the
others are counted in `unlisted_results`. A resource's lists and maps (offsets, partitions, configs, an
assignment's replicas), at any depth, keep MAX_DETAIL items, the rest counted in its `unlisted`. A request
past the decoder's entries bound is read in part (kwire.codec.partial): its arrays' elements past the bound
are read here one at a time, never held together; what a resource holds past it is counted
(`entries_not_read`). A request that did not decode at all (malformed, cut by the snap length, not kept) is
listed all the same, by its api with its client and the answer's result, as one resource {"type": "request",
"not_read": why}, with the api's destructive kind (`request_outcome` says why): a bound or a bad byte never
makes an operation vanish. (OffsetCommit, LeaveGroup and WriteTxnMarkers are changes only by what their
bodies say: a tool's commit, an admin's removal, an abort; undecoded, they are not listed.)

The bodies are read through the schemas' marks (kwire.codec.schema): numbers with names (ACL resource
types, operations, permissions, config operations, SCRAM mechanisms, election types) come out as the
names (`enum=`), secret fields (`role=SECRET`: salts, salted passwords, token HMACs) are never read, and
a configuration value (`role=CONFIG_VALUE`) is {"redacted": n_chars} when its name is one Kafka treats
as sensitive (kwire.codec.config_secrets.sensitive_config) or the broker flagged it (`role=CONFIG_SENSITIVE`).
Requests that only validate (ValidateOnly) change nothing and are not changes. A consumer's own offset
commit is not a change: a tool commits with no member id and generation -1 (OffsetCommit v1+, and a
transactional producer's TxnOffsetCommit v3+ with a bare group metadata), or as a transient member that joins,
commits and leaves and fetches nothing (KafkaJS admin.setOffsets: the entry's `commits_as`, decided for the
whole capture by kwire.analytics.changes); members
removed by a tool are LeaveGroup members named by instance id alone or removed "by an admin" (the Java
admin client's reason), or, decided for the whole capture (kwire.analytics.changes: the entry's
`removes`), named by a client that is not one of them (kafka-python's remove_group_members).
"""

from __future__ import annotations

from kwire.analytics.changes_body import Body
from kwire.kafka.error_codes import error_name
from kwire.model import PAIRED, Exchange
from kwire.outcomes import DECODED, KEPT_IN_PART, NULL_IN_BODY, TRAILING_BYTES, describe

OK, NO_RESPONSE, UNDECODED, NOT_IN_ANSWER, NOT_KEPT = "ok", "no_response", "undecoded", "not_in_answer", "not_kept"
# kinds of change that are findings (kwire.analytics.findings_changes), with their severity
DESTRUCTIVE = {"topic_deleted": "critical", "records_deleted": "critical", "acl_allow_all": "critical",
               "group_deleted": "warning", "offsets_moved": "warning", "acl_removed": "warning",
               "credentials_changed": "warning"}
ADMIN_REASON = "removed by an admin"  # the Java admin client's LeaveGroup reason
MARKER_SENDER = "txn-marker-sender"  # a broker's own WriteTxnMarkers client id (not a tool)
MAX_RESOURCES = 20  # resources kept per change (and as many more that make its kind)
MAX_DETAIL = 20  # items kept of each list or map a resource holds, at any depth
_READ = frozenset({DECODED, TRAILING_BYTES, KEPT_IN_PART, NULL_IN_BODY})  # a request body there to read


# ---- results ------------------------------------------------------------------------------------

def code_result(code) -> str:
    return OK if not code else error_name(code)


class Answer:
    """The response of an exchange as results: `of(code)` for a resource's own error code, with the
    whole request's outcome first (not answered, not decoded, a top-level error). `body`: a Body, or
    None when there is no decoded answer."""

    __slots__ = ("body", "whole")

    def __init__(self, ex: Exchange, top_field: str | None = "ErrorCode"):
        self.body = Body.of(ex, "response") if ex.status == PAIRED else None
        if ex.status != PAIRED:
            self.whole = NO_RESPONSE
        elif self.body is None:
            self.whole = UNDECODED
        else:
            top = self.body.get(top_field) if top_field else None
            self.whole = code_result(top) if top else None

    def of(self, code=None, missing: bool = False, array: str | None = None) -> str:
        """The result of a resource: `missing` when the answer did not name it (in `array`: not kept
        there, when that array was cut)."""
        if self.whole is not None:
            return self.whole
        if missing:
            return NOT_KEPT if array is not None and self.body.cut(array) else NOT_IN_ANSWER
        return code_result(code)

    def items(self, array: str):
        """The kept entries of the answer's `array`, one at a time (an answer is matched within what it kept)."""
        return self.body.items(array, cut=False) if self.body is not None else iter(())

    def by(self, array: str, key) -> dict:
        """The answer's kept `array` entries by key(entry)."""
        return {key(e): e for e in self.items(array)}

    def get(self, name: str, default=None):
        return self.body.get(name, default) if self.body is not None else default


def first_error(entries, field: str = "ErrorCode") -> int:
    return next((e.get(field) for e in entries or () if type(e) is dict and e.get(field)), 0)


# ---- what a change keeps -----------------------------------------------------------------------

class Resources:
    """The resources of one change as it keeps them (the module's bounds), with their results."""

    __slots__ = ("kept", "results", "count", "unlisted", "alarms", "extra")

    def __init__(self) -> None:
        self.kept: list[dict] = []
        self.results: list[str] = []
        self.count = 0
        self.unlisted: dict[str, int] = {}
        self.alarms: list[int] = []  # the indexes in `kept` of the resources that make the kind (`alarm`)
        self.extra = 0  # resources kept past the first MAX_RESOURCES because they make the kind

    def add(self, resource: dict, result: str, alarm: bool = False) -> None:
        """A resource the request names, with its result; `alarm`: it makes the change's kind (when not
        every resource does: an allow-all binding)."""
        self.count += 1
        if len(self.kept) < MAX_RESOURCES or (alarm and self.extra < MAX_RESOURCES):
            if len(self.kept) >= MAX_RESOURCES:
                self.extra += 1
            if alarm:
                self.alarms.append(len(self.kept))
            self.kept.append(_trimmed(resource))
            self.results.append(result)
        else:
            self.unlisted[result] = self.unlisted.get(result, 0) + 1


def _trimmed(resource: dict) -> dict:
    """A resource whose lists and maps, at any depth, keep MAX_DETAIL items: the rest counted in its `unlisted`,
    {path: n} (a key, or keys joined by dots: "assignments.3")."""
    cut: dict[str, int] = {}
    for key, value in resource.items():
        resource[key] = _trim(value, key, cut)
    if cut:
        resource["unlisted"] = cut
    return resource


def _trim(value, path: str, cut: dict):
    if type(value) is list:
        if len(value) > MAX_DETAIL:
            cut[path] = len(value) - MAX_DETAIL
            value = value[:MAX_DETAIL]
        return [_trim(v, f"{path}.{i}", cut) for i, v in enumerate(value)]
    if type(value) is dict:
        if len(value) > MAX_DETAIL:
            cut[path] = len(value) - MAX_DETAIL
        return {k: _trim(v, f"{path}.{k}", cut) for k, v in list(value.items())[:MAX_DETAIL]}
    return value


def entry(ex: Exchange, operation: str, resources: Resources, kind: str | None = None,
          request: Body | None = None) -> dict:
    outcome = ex.request_outcome
    return {"ts_ns": ex.ts_ns, "client": ex.client, "broker": ex.broker, "client_id": ex.client_id,
            "correlation_id": ex.correlation_id, "api": ex.api, "operation": operation,
            "resources": resources.kept, "result": resources.results, "kind": kind, "makes_kind": resources.alarms,
            "resource_count": resources.count, "unlisted_results": dict(sorted(resources.unlisted.items())),
            "request_outcome": outcome.kind if outcome is not None and outcome.kind != DECODED else None,
            "entries_not_read": request.unread if request is not None else 0}


def change_of(ex: Exchange) -> dict | None:
    """The change `ex` made or tried, or None when it changes nothing (or its request is unknown)."""
    from kwire.analytics.changes_apis import READERS

    reader = READERS.get(ex.api)
    if reader is None:
        return None
    outcome = ex.request_outcome
    if ex.request is None or outcome is None or outcome.kind not in _READ:
        return _not_read(ex, reader) if outcome is not None and not reader.by_body else None
    request = Body.of(ex, "request")
    if request is None or request.get("ValidateOnly") is True or request.get("validateOnly") is True:
        return None
    return reader.read(ex, request)


def _not_read(ex: Exchange, reader) -> dict:
    """A change whose request did not decode: its api, client and the answer's result."""
    resources = Resources()
    resources.add({"type": "request", "not_read": describe(ex.request_outcome)}, Answer(ex, None).of())
    resources.count = None  # not known
    return entry(ex, reader.operation, resources, reader.kind)


def is_change(ex: Exchange) -> bool:
    """Does `ex` change the cluster (or try to)? `kwire inspect --changes` keeps these exchanges."""
    from kwire.analytics.changes_apis import READERS

    if ex.api not in READERS:
        return False
    change = change_of(ex)
    # a LeaveGroup, or a member's commit, only the whole capture can tell; a commit from outside the group is
    # shown (a tool's, unless the whole capture shows its client consuming)
    return change is not None and "removes" not in change and ("commits_as" not in change
                                                               or len(change["commits_as"]) == 3)
