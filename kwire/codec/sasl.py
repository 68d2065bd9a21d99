"""SASL messages inside SaslAuthenticate's AuthBytes (RFC 4616 PLAIN, RFC 5802 SCRAM, RFC 7628 OAUTHBEARER).

`sasl_view(bytes)` says what may be shown of one message: its size, and when it is a recognised PLAIN,
SCRAM or OAUTHBEARER message, its mechanism and non-secret parts (user names, SCRAM's message step and
iterations, OAUTHBEARER's scheme and extension names); passwords, proofs, signatures, nonces and tokens
never. `principal(bytes)` is the user a client authenticates as ("User:alice"), or None. Used by the
renderers (kwire.render.values) and by the change log's principals (kwire.analytics.changes).
"""

from __future__ import annotations

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


def principal(data) -> str | None:
    """The principal a client's SASL message names, as Kafka writes it ("User:alice"): the PLAIN
    authentication id or the SCRAM user name; the authorization id when one is given. None otherwise."""
    if not data:
        return None
    view = sasl_view(data)
    name = view.get("authzid") or view.get("username")
    return f"User:{name}" if name else None
