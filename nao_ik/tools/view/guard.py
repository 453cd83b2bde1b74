"""Who may use the view: requests to the view's own address, from its own page, with the run's token.

The page moves the arms, so any web page open in the operator's browser must
not be able to drive it:

- **Host**: a request whose ``Host`` header is not one of the view's own
  addresses (the host:port it listens on; with a loopback address also
  ``127.0.0.1``, ``localhost`` and ``[::1]`` on that port) is refused. This
  stops DNS rebinding (a foreign name resolving to the view's address).
- **Origin**: a websocket whose ``Origin`` is not ``http://`` + one of those
  addresses (or that has none) is refused: a foreign page's script cannot
  open the view's websocket.
- **Token**: every request must carry the run's token
  (:func:`secrets.token_urlsafe`), printed in the page's address
  (``http://127.0.0.1:8080/?token=...``): in the query, or in the cookie set
  when the page is served with the right token (viser's client opens its
  websocket without the page's query, so the cookie carries the token there).

Refusals are HTTP 403 answers to the handshake (the connection is then closed).

How it hooks into viser: viser serves the page and the websocket on one port
with ``websockets.asyncio.server.serve(ws_handler, ..., process_request=...)``
called from its server thread (``viser.infra.WebsockServer._background_worker``),
where ``process_request`` (its HTTP file server) sees every request first. Viser
offers no hook to add a check there, so :func:`guarded_serve` wraps
``websockets.asyncio.server.serve`` at runtime while the ``ViserServer`` is being
constructed (its constructor returns only once the port is bound, so the call
has happened by then), and only for viser's handler: the server gets
:meth:`Guard.process_request`, which checks and then hands over to viser's own.
If the wrapper was not used (a viser that serves otherwise), the viewer stops
the server and raises rather than leave the view unguarded.
"""

from __future__ import annotations

import contextlib
import hmac
import http
import inspect
import ipaddress
import secrets
import socket
import threading
from typing import Any, Callable, Iterator
from urllib.parse import parse_qs, urlsplit

TOKEN_PARAM = "token"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARDS = ("", "0.0.0.0", "::")

_install_lock = threading.Lock()


def url_host(host: str) -> str:
    """``host`` as it appears in a URL (an IPv6 address in brackets), lower case."""
    host = host.strip().lower()
    if ":" in host and not host.startswith("["):
        return f"[{host}]"
    return host


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses."""
    host = host.strip().lower().strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def _split_host_header(value: str) -> tuple[str, int | None] | None:
    """``(name, port)`` of a Host header (``port`` None when absent), or None if malformed."""
    value = value.strip().lower()
    if not value:
        return None
    if value.startswith("["):
        name, bracket, rest = value.partition("]")
        if not bracket:
            return None
        name += "]"
    else:
        name, colon, port = value.partition(":")
        rest = colon + port
    if not rest:
        return name, None
    if not rest.startswith(":") or not rest[1:].isdigit():
        return None
    return name, int(rest[1:])


class Guard:
    """The checks for one view.

    Args:
        host: the address the view listens on (as given to viser).
        token: the run's token (default: a new :func:`secrets.token_urlsafe`).
    """

    def __init__(self, host: str, token: str | None = None):
        self.host = host
        self.token = token or secrets.token_urlsafe()
        self.installed = False  # set once viser's server got :meth:`process_request`

    # ------------------------------------------------------------------ checks

    def cookie_name(self, port: int) -> str:
        """The token's cookie (cookies are per host, not per port: one name per port)."""
        return f"nao-ik-view-{port}"

    def host_allowed(self, value: str, port: int) -> bool:
        """Whether a ``Host`` header names this view (listening on ``port``)."""
        parsed = _split_host_header(value)
        if parsed is None:
            return False
        name, given_port = parsed
        if (given_port if given_port is not None else 80) != port:
            return False
        if self.host.strip() in WILDCARDS:
            # Listening on every interface: any IP literal (no DNS, so no rebinding) or this machine's names.
            return _is_ip_literal(name) or name in {"localhost", socket.gethostname().lower(), socket.getfqdn().lower()}
        names = {url_host(self.host)}
        if is_loopback(self.host):
            names.update(LOOPBACK_NAMES)
        return name in names

    def origin_allowed(self, origin: str | None, port: int) -> bool:
        """Whether a websocket's ``Origin`` is the view's own page."""
        if not origin or not origin.lower().startswith("http://"):
            return False
        return self.host_allowed(origin[len("http://") :].rstrip("/"), port)

    def token_given(self, request: Any, port: int) -> tuple[bool, bool]:
        """``(right token, in the query)`` of a request (the query's token, else the cookie's)."""
        given = parse_qs(urlsplit(request.path).query).get(TOKEN_PARAM)
        if given:
            return self._matches(given[-1]), True
        name = self.cookie_name(port)
        for header in request.headers.get_all("Cookie"):
            for part in header.split(";"):
                key, eq, value = part.strip().partition("=")
                if eq and key == name:
                    return self._matches(value), False
        return False, False

    def _matches(self, given: str) -> bool:
        return hmac.compare_digest(given.encode("utf-8", "replace"), self.token.encode("ascii"))

    def refusal(self, connection: Any, request: Any) -> str | None:
        """Why a request is refused, or None if it may go on."""
        port = connection.local_address[1]
        if not self.host_allowed(request.headers.get("Host", ""), port):
            return "unknown host"
        if "websocket" in request.headers.get("Upgrade", "").lower():
            if not self.origin_allowed(request.headers.get("Origin"), port):
                return "foreign origin"
        if not self.token_given(request, port)[0]:
            return "missing or wrong token (open the address the view printed)"
        return None

    # ------------------------------------------------------------ the hook

    def wrap(self, process_request: Callable | None) -> Callable:
        """A ``process_request`` for websockets' ``serve``: the checks, then ``process_request`` (viser's)."""

        async def guarded(connection: Any, request: Any) -> Any:
            from websockets.datastructures import Headers
            from websockets.http11 import Response

            why = self.refusal(connection, request)
            if why is not None:
                body = f"403 Forbidden: {why}\n".encode()
                headers = Headers([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
                return Response(http.HTTPStatus.FORBIDDEN, "Forbidden", headers, body)
            response = None if process_request is None else process_request(connection, request)
            if inspect.isawaitable(response):
                response = await response
            port = connection.local_address[1]
            ok = response is not None and response.status_code == http.HTTPStatus.OK
            if ok and self.token_given(request, port)[1]:
                # The page was asked for with the token: its websocket (opened without the query) sends it back.
                response.headers["Set-Cookie"] = (
                    f"{self.cookie_name(port)}={self.token}; Path=/; HttpOnly; SameSite=Strict"
                )
            return response

        return guarded


def _is_viser_handler(handler: Any) -> bool:
    return (getattr(handler, "__module__", "") or "").startswith("viser.")


@contextlib.contextmanager
def guarded_serve(guard: Guard) -> Iterator[None]:
    """While open, viser's calls of ``websockets.asyncio.server.serve`` get ``guard``'s checks.

    Wrap the construction of the ``viser.ViserServer`` in it (see the module's
    docstring); ``guard.installed`` then says whether viser went through it.
    Other callers of ``serve`` (any non-viser handler) are passed through as they are.
    """
    import websockets.asyncio.server as ws_server

    with _install_lock:
        original = ws_server.serve

        def serve(handler: Any, *args: Any, **kwargs: Any) -> Any:
            if _is_viser_handler(handler):
                kwargs["process_request"] = guard.wrap(kwargs.get("process_request"))
                guard.installed = True
            return original(handler, *args, **kwargs)

        ws_server.serve = serve  # type: ignore[assignment, misc]
        try:
            yield
        finally:
            ws_server.serve = original  # type: ignore[misc]
