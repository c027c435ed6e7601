"""The two protocol eras, in one place: what a request carries in each, and how a peer's era is found.

Revision 2026-07-28 ("modern", SEP-2575/SEP-2567) has no handshake: every request carries
`_meta` with the protocol version and the client's capabilities (a server answers -32602
without them), `server/discover` is the one method every modern server must implement, and
`ping` is gone. The legacy era opens with `initialize` and `notifications/initialized`.

The client side (the server checks) finds a server's era as the SDKs do and as the stdio
backward-compatibility rule says (spec PR #2844): `server/discover` at the newest version the
probe knows; a result naming that version is modern; an UnsupportedProtocolVersionError
naming it too (a retry) likewise; any other error, a result naming only handshake versions, an
unparseable result, or no answer within the bound is legacy. The determination is made once
per server, on a process of its own, and cached: a legacy server may be left in an undefined
state by the unknown probe (the Rust SDK exits), so every check starts a fresh one in the era found.

The server side (a scenario server a host talks to) recognises the era of an incoming request
and builds what a modern server answers. This module imports only the stdlib, so a script a
host starts can load it by its path.
"""

from __future__ import annotations

LEGACY = "legacy"
MODERN = "2026-07-28"  # the newest modern revision the probe knows: what server/discover proposes
ERAS = (LEGACY, MODERN)  # --protocol's choices
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LEGACY_VERSION = HANDSHAKE_VERSIONS[-1]  # what initialize proposes
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
UNSUPPORTED_PROTOCOL_VERSION = -32022  # as mcp_types names it; an error with data.supported is read as one anyway
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
DISCOVER = "server/discover"
CLIENT_INFO = {"name": "stdio-probe", "version": "1"}


def is_modern(era: str) -> bool:
    """Whether era (LEGACY or a protocol version) is one without a handshake."""
    return era != LEGACY and era not in HANDSHAKE_VERSIONS


# --- the client side: what each request carries


def envelope(version: str = MODERN, capabilities: dict | None = None) -> dict:
    """The `_meta` a modern request carries: protocol version, client capabilities and identity."""
    return {
        PROTOCOL_VERSION_KEY: version,
        CLIENT_CAPABILITIES_KEY: capabilities or {},
        CLIENT_INFO_KEY: CLIENT_INFO,
    }


def stamp(era: str, message: dict) -> dict:
    """message as era requires it: a modern request gains the envelope in params._meta (keys
    already there kept); a legacy request, any notification or response is returned as it is."""
    if not is_modern(era) or "method" not in message or "id" not in message:
        return message
    params = dict(message.get("params") or {})
    params["_meta"] = {**envelope(era), **(params.get("_meta") or {})}
    return {**message, "params": params}


def opening_request(era: str, request_id: int) -> dict:
    """The request a connection opens with: initialize (legacy), server/discover (modern)."""
    if is_modern(era):
        return stamp(era, {"jsonrpc": "2.0", "id": request_id, "method": DISCOVER})
    client = {"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": client}


def liveness_method(era: str) -> str:
    """A request every server of the era answers and that changes nothing: ping, or server/discover."""
    return DISCOVER if is_modern(era) else "ping"


def liveness_request(era: str, request_id: int) -> dict:
    return stamp(era, {"jsonrpc": "2.0", "id": request_id, "method": liveness_method(era)})


def answer_text(answer: dict | None) -> str:
    """An answer in a few words: "result", "error -32601 Method not found", or "no answer"."""
    if answer is None:
        return "no answer"
    if "error" in answer:
        error = answer["error"] if isinstance(answer["error"], dict) else {}
        return f"error {error.get('code')} {str(error.get('message', ''))[:80]}".rstrip()
    return "result" if isinstance(answer.get("result"), dict) else "an answer that is neither result nor error"


def era_from_discover(answer: dict | None, waited_s: float) -> dict:
    """The era a server/discover answer shows: {"protocol": LEGACY, MODERN or None (no version in
    common), "version": the version to speak (None for legacy: initialize's answer names it), "evidence"}."""
    if answer is None:
        return _era(LEGACY, f"no answer to {DISCOVER} within {waited_s:g} s")
    result, error = answer.get("result"), answer.get("error")
    if isinstance(error, dict):
        data = error.get("data")
        supported = data.get("supported") if isinstance(data, dict) else None
        if isinstance(supported, list):
            if MODERN in supported:
                return _era(MODERN, f"{DISCOVER} refused {answer_text(answer)}, supported {supported}", MODERN)
            if not any(v in HANDSHAKE_VERSIONS for v in supported):
                return _era(None, f"speaks only {supported}; the probe knows {MODERN} and the handshake")
        return _era(LEGACY, f"{DISCOVER} refused: {answer_text(answer)}")
    versions = result.get("supportedVersions") if isinstance(result, dict) else None
    if not isinstance(versions, list):
        return _era(LEGACY, f"{DISCOVER} answered without supportedVersions")
    if MODERN in versions:
        return _era(MODERN, f"{DISCOVER} answered, supportedVersions {versions}", MODERN)
    return _era(LEGACY, f"{DISCOVER} answered, supportedVersions {versions} (no modern version)")


def _era(protocol: str | None, evidence: str, version: str | None = None) -> dict:
    return {"protocol": protocol, "version": version, "evidence": evidence}


# --- the server side: a server a host talks to


def era_of_request(message: dict) -> str | None:
    """The era an incoming request speaks: LEGACY for initialize, the protocol version its `_meta`
    declares (a modern request), or None for any other (a legacy request after the handshake,
    or a notification): the era the connection opened with holds."""
    if message.get("method") == "initialize":
        return LEGACY
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def client_envelope(message: dict) -> dict:
    """What a request's `_meta` declares of the client: protocolVersion, clientCapabilities,
    clientInfo (each None when absent)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    return {
        "protocolVersion": meta.get(PROTOCOL_VERSION_KEY),
        "clientCapabilities": meta.get(CLIENT_CAPABILITIES_KEY),
        "clientInfo": meta.get(CLIENT_INFO_KEY),
    }


def envelope_error(message: dict) -> dict | None:
    """The error a modern server answers a request whose envelope lacks a required key, else None."""
    declared = client_envelope(message)
    missing = [name for name in ("protocolVersion", "clientCapabilities") if declared[name] is None]
    if not missing:
        return None
    return {"code": INVALID_PARAMS, "message": f"params._meta lacks {', '.join(missing)}"}


def modern_result(body: dict, server_info: dict | None = None) -> dict:
    """A result as a modern server sends it: resultType, and the server's identity in `_meta`."""
    result = {**body, "resultType": "complete"}
    if server_info is not None:
        result["_meta"] = {SERVER_INFO_KEY: server_info}
    return result


def discover_result(capabilities: dict, server_info: dict, versions: tuple[str, ...] = (MODERN,)) -> dict:
    """server/discover's result: the versions served, capabilities, identity, and the cache hints."""
    body = {"supportedVersions": list(versions), "capabilities": capabilities, "ttlMs": 0, "cacheScope": "public"}
    return modern_result(body, server_info)
