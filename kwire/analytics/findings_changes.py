"""admin_change: destructive or security-relevant changes to the cluster, with who made them.

One finding per (kind of change, client id, principal, broker) over the kept changes
(kwire.analytics.changes): topics deleted, records deleted, groups deleted, group offsets set or
deleted by a tool, ACLs removed, an ALLOW binding for every principal or every operation on every
resource added, SCRAM credentials changed. Severity by kind (kwire.analytics.changes_read.DESTRUCTIVE:
critical for deleted topics and records and allow-all ACLs, warning for the rest); "info" when the
broker refused every attempt with an error (nothing changed, but someone tried); a step down when none
was done and some went unanswered. The summary says what was done (a resource answered ok) apart from
what was only tried (refused, or no answer: "tried to delete records from ...; no answer to 6
requests"). An attempt answered with a body that does not decode may have changed the cluster: it counts. So
does a request kwire could not read (malformed, cut by the snap length, not kept): it is a change of
its api's destructive kind, said as what it may have done (`not_read`).

    admin_change {change, client_id, principal, clients, operations, resources, resource_count, count,
                  refused, unanswered, not_read}

`resources` names what was touched (at most MAX_NAMED, in time order; of a change whose kind some of its
resources make, those: the bindings that allow all), `resource_count` how many resources the changes named
(null when one was not read),
`count` the changes, `refused` those of them the broker refused (every resource's result an error
name), `unanswered` those no answer came to, `not_read` those whose request kwire could not read.
"""

from __future__ import annotations

from kwire.analytics.changes_read import DESTRUCTIVE, NO_RESPONSE, NOT_IN_ANSWER, NOT_KEPT, OK, UNDECODED
from kwire.analytics.findings import finding, named
from kwire.counts import count, noun
from kwire.outcomes import DECODED, KEPT_IN_PART, NULL_IN_BODY, TRAILING_BYTES

_UNKNOWN = frozenset({NO_RESPONSE, NOT_IN_ANSWER, UNDECODED, NOT_KEPT})
_READ = frozenset({None, DECODED, KEPT_IN_PART, TRAILING_BYTES, NULL_IN_BODY})  # a change's request_outcome when it was read
MAX_NAMED = 20
_WHAT = {"topic_deleted": "deleted topics", "records_deleted": "deleted records from",
         "group_deleted": "deleted groups", "offsets_moved": "moved group offsets of", "acl_removed": "removed ACLs",
         "acl_allow_all": "added allow-all ACLs", "credentials_changed": "changed SCRAM credentials of"}
_MAY = {"topic_deleted": "deleted topics", "records_deleted": "deleted records", "group_deleted": "deleted groups",
        "offsets_moved": "moved group offsets", "acl_removed": "removed ACLs", "acl_allow_all": "added allow-all ACLs",
        "credentials_changed": "changed SCRAM credentials"}
_TRY = {"topic_deleted": "delete topics", "records_deleted": "delete records from", "group_deleted": "delete groups",
        "offsets_moved": "move group offsets of", "acl_removed": "remove ACLs", "acl_allow_all": "add allow-all ACLs",
        "credentials_changed": "change SCRAM credentials of"}
_STEP_DOWN = {"critical": "warning", "warning": "info", "info": "info"}


def resource_name(res: dict) -> str:
    """A short name of a change's resource, for summaries and tables ("null" for a name the wire held null)."""
    kind = res.get("type")
    if kind in ("acl", "acl_filter"):
        return (f"{named(res.get('permission'))} {named(res.get('principal'))} {named(res.get('operation'))} on "
                f"{named(res.get('resource_type'))}:{named(res.get('resource_name'))}")
    if kind == "group_offsets":
        return f"{named(res.get('group'))}/{named(res.get('topic'))}"
    if kind == "user":
        return f"{named(res.get('name'))} ({named(res.get('mechanism'))}, {named(res.get('action'))})"
    if kind in ("records", "partitions"):
        return named(res.get("topic"))
    if kind == "quota":
        return ",".join(f"{k}={'<default>' if x is None else x}" for k, x in (res.get("entity") or {}).items())
    if kind == "group_member":
        return f"{named(res.get('group'))}/{named(res.get('instance_id') or res.get('member_id'))}"
    if kind == "request":
        return f"(request not read: {named(res.get('not_read'))})"
    return named(res.get("name", res.get("token_id", kind)))


def _results(change: dict) -> list[str]:
    return list(change["result"]) + list(change["unlisted_results"])


def _refused(change: dict) -> bool:
    """Every resource answered with an error: nothing was changed."""
    return all(r != OK and r not in _UNKNOWN for r in _results(change))


def _unanswered(change: dict) -> bool:
    """The request was never answered: it was tried, and nothing on the wire says it was done."""
    results = _results(change)
    return bool(results) and all(r == NO_RESPONSE for r in results)


def _state(change: dict) -> str:
    """"refused", "unanswered", "unconfirmed" (answered, but kwire cannot tell how: the answer did not
    decode, or did not name a resource) or "done" (the broker answered a resource ok)."""
    results = _results(change)
    if _refused(change):
        return "refused"
    if _unanswered(change):
        return "unanswered"
    return "done" if OK in results else "unconfirmed"


def _named(kind: str, changes: list[dict], refused: bool | None = None) -> list[str]:
    """The resources a finding names: the first MAX_NAMED (of allow-all ACLs, the bindings that allow all);
    `refused` True: only those the broker answered with an error, False: only the others."""
    named: list[str] = []
    for change in changes:
        marked = set(change["makes_kind"])
        for i, res in enumerate(change["resources"]):
            if marked and i not in marked:
                continue
            if refused is not None and _is_error(change["result"][i]) is not refused:
                continue
            name = resource_name(res)
            if name not in named and len(named) < MAX_NAMED:
                named.append(name)
    return named


def _covered(changes: list[dict], shown: set, refused: bool | None) -> int:
    return sum(1 for c in changes for i, res in enumerate(c["resources"])
               if (refused is None or _is_error(c["result"][i]) is refused) and resource_name(res) in shown
               and (not c["makes_kind"] or i in c["makes_kind"]))


def _is_error(result: str) -> bool:
    return result != OK and result not in _UNKNOWN


def _listed(kind: str, changes: list[dict], refused: bool | None = None) -> str:
    """The resources of `changes` in words: "a, b and 3 more" (allow-all ACLs: "(n bindings in all)");
    `refused` as for `_named` (counted among the results, listed or not)."""
    shown = [n for n in _named(kind, changes, refused) if not n.startswith("(request not read")]
    if refused is None:
        total = sum(c["resource_count"] or 0 for c in changes)
    else:
        total = sum(1 for c in changes for r in c["result"] if _is_error(r) is refused) + \
            sum(n for c in changes for r, n in c["unlisted_results"].items() if _is_error(r) is refused)
    out = ", ".join(shown) or "(none named)"
    covered = _covered(changes, set(shown), refused)  # the resources the names say (one name, several partitions)
    if kind != "acl_allow_all" and total > covered:
        out += f" and {total - covered:,} more"
    if kind == "acl_allow_all" and total > len(shown):
        out += f" ({total:,} bindings in all)"
    return out


def _errors(changes: list[dict]) -> str:
    names = sorted({r for c in changes for r in _results(c) if r != OK and r not in _UNKNOWN})
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")


def _tried(changes: list[dict]) -> str:
    """What became of requests not done: "refused (ERR)", "no answer to 6 requests", "..., 1 with its
    answer not read"."""
    refused = [c for c in changes if _state(c) == "refused"]
    unanswered = sum(1 for c in changes if _state(c) == "unanswered")
    unconfirmed = len(changes) - len(refused) - unanswered
    parts = []
    if refused:
        parts.append(f"{len(refused):,} refused ({_errors(refused)})" if len(refused) < len(changes)
                     else f"refused ({_errors(refused)})")
    if unanswered:
        parts.append(f"{unanswered:,} with no answer" if unanswered < len(changes)
                     else f"no answer to {count(unanswered, 'request')}")
    if unconfirmed:
        parts.append(f"{unconfirmed:,} answered in a way kwire could not read (it may have been done)")
    return ", ".join(parts)


def _summary(kind: str, who: str, broker: str, changes: list[dict]) -> str:
    read = [c for c in changes if c["request_outcome"] in _READ]
    unread = [c for c in changes if c["request_outcome"] not in _READ]
    if not read:
        apis = ", ".join(sorted({c["api"] for c in unread}))
        why = unread[0]["resources"][0].get("not_read") if unread[0]["resources"] else unread[0]["request_outcome"]
        out = (f"{who} sent {len(unread):,} {apis} {noun(len(unread), 'request')} to broker {broker} that kwire "
               f"could not read ({why})")
        tried = [c for c in unread if _state(c) != "done"]
        if len(tried) == len(unread):
            return f"{out}: {_tried(tried)}"
        return out + f": it may have {_MAY[kind]}" + (f" ({_tried(tried)})" if tried else "")
    done = [c for c in read if _state(c) == "done"]
    tried = [c for c in read if _state(c) != "done"]
    if done:
        out = f"{who} {_WHAT[kind]} {_listed(kind, done, False)} on broker {broker}"
        errors = [c for c in done if any(_is_error(r) for r in _results(c))]
        if errors:
            out += f" (refused for {_listed(kind, errors, True)}: {_errors(errors)})"
        if tried:
            out += f"; tried {count(len(tried), 'more request')}: {_tried(tried)}"
    else:
        out = f"{who} tried to {_TRY[kind]} {_listed(kind, tried)} on broker {broker}; {_tried(tried)}"
    deep = sum(c["entries_not_read"] for c in read)
    if deep:
        out += f"; {count(deep, 'entry')} inside them past kwire's entries bound not detailed"
    if unread:
        out += f"; {count(len(unread), 'more request')} not read: it may have {_MAY[kind]} too"
    return out


def _severity(kind: str, changes: list[dict]) -> str:
    """The kind's severity when a change was done (or may have been); a step down when none was and one
    went unanswered (tried, effect unknown); info when the broker refused every one."""
    states = {_state(c) for c in changes}
    if states == {"refused"}:
        return "info"
    if states <= {"refused", "unanswered"}:
        return _STEP_DOWN[DESTRUCTIVE[kind]]
    return DESTRUCTIVE[kind]


def find(analysis, names: dict, first_ns, last_ns) -> list[dict]:
    groups: dict[tuple, list] = {}
    for change, principal in analysis.changes.destructive(analysis.groups, analysis.traffic):
        key = (change["kind"], change["client_id"] or "", principal or "", change["broker"])
        groups.setdefault(key, []).append(change)
    out = []
    for (kind, client_id, principal, broker), changes in sorted(groups.items()):
        named = _named(kind, changes)
        failed = sum(1 for c in changes if _refused(c))
        who = client_id or "(no client id)"
        if principal:
            who += f" as {principal}"
        counts = [c["resource_count"] for c in changes]
        evidence = [(c["ts_ns"], c["client"], c["broker"], c["correlation_id"], c["api"]) for c in changes]
        out.append(finding("admin_change", _severity(kind, changes), _summary(kind, who, broker, changes),
                           changes[0]["ts_ns"], changes[-1]["ts_ns"], evidence,
                           change=kind, client_id=client_id or None, principal=principal or None,
                           clients=sorted({c["client"] for c in changes}),
                           operations=sorted({c["operation"] for c in changes}), resources=named,
                           resource_count=None if None in counts else sum(counts), count=len(changes),
                           refused=failed, unanswered=sum(1 for c in changes if _unanswered(c)),
                           not_read=sum(1 for c in changes if c["request_outcome"] not in _READ)))
    return out
