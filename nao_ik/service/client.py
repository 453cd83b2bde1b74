"""A caller's qi session that reconnects: how the ``nao-ik`` programs call ``NaoArmIK`` and ``ALMotion``.

libqi 3.1.5: once a service has dropped a caller's connection (``nao-ik serve`` drops a caller whose message is
over its size cap, ``QI_MAX_MESSAGE_PAYLOAD``: that call fails with ``Socket Disconnected``), every later call
from the caller's session to that service fails with ``Socket is not connected``, from the old proxy and from a
new one alike, while ``session.isConnected()`` says True; 40 s later still. A new session works at once. A
proxy held across the service's restart (``nao-ik serve`` after a crash) fails the same way; a new proxy works.

:class:`Session` is a qi session to one URL whose services' calls, on ``Socket is not connected`` (the call was
not sent), open a new session and send the call once more. A call whose connection dropped while it ran (``Socket
Disconnected``, a service gone) is not sent again (it may have moved the arm); the next call finds the new
session. Calls with ``_async=True`` pass as they are.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

#: libqi's error for a call on a connection it holds for closed: the call did not leave the caller.
NOT_SENT = "Socket is not connected"


class Session:
    """A qi session connected to ``url`` that opens a new one where a call finds its connection closed.

    Used like ``qi.Session``: ``service(name)``, ``services()``, ``isConnected()``, ``close()``; also as a
    context manager (closed on leaving).
    """

    def __init__(self, url: str):
        import qi

        self._qi, self._url, self._lock = qi, url, threading.Lock()
        self._session = self._open()
        self._generation = 0  # how many times the session was opened anew
        self._services: dict[str, Service] = {}

    def _open(self) -> Any:
        session = self._qi.Session()
        try:
            session.connect(self._url)
        except RuntimeError:
            session.close()
            raise
        return session

    def service(self, name: str) -> Service:
        """The service ``name``, its methods called through the current session; as ``qi.Session.service``,
        a RuntimeError if there is none."""
        with self._lock:
            service = self._services.get(name)
        if service is None:
            service = Service(self, name)
            service._proxy_on(*self.current())
            with self._lock:
                service = self._services.setdefault(name, service)
        return service

    def current(self) -> tuple[Any, int]:
        """The qi session now, and its generation."""
        with self._lock:
            return self._session, self._generation

    def renew(self, generation: int) -> None:
        """Open a new session in place of ``generation``'s (once, however many callers found it closed)."""
        with self._lock:
            if generation != self._generation:
                return  # another caller did
            old, self._session = self._session, self._open()
            self._generation += 1
        try:
            old.close()
        except RuntimeError:
            pass

    def services(self) -> list:
        return self.current()[0].services()

    def isConnected(self) -> bool:  # noqa: N802 (qi's name)
        return self.current()[0].isConnected()

    def close(self) -> None:
        self.current()[0].close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class Service:
    """A service of a :class:`Session`: ``service.method(*args)`` calls it, once more on a new session where the
    call could not leave."""

    def __init__(self, session: Session, name: str):
        self._session, self._name = session, name
        self._proxy: Any = None
        self._generation = -1
        self._lock = threading.Lock()

    def _proxy_on(self, session: Any, generation: int) -> Any:
        """The qi proxy on the session of ``generation`` (asked for once per session)."""
        with self._lock:
            if self._generation != generation:
                self._proxy, self._generation = session.service(self._name), generation
            return self._proxy

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        session, generation = self._session.current()
        if kwargs.get("_async"):
            return getattr(self._proxy_on(session, generation), method)(*args, **kwargs)
        try:
            return getattr(self._proxy_on(session, generation), method)(*args, **kwargs)
        except RuntimeError as e:
            if NOT_SENT not in str(e):
                raise
        self._session.renew(generation)
        session, generation = self._session.current()
        return getattr(self._proxy_on(session, generation), method)(*args, **kwargs)

    def __getattr__(self, method: str) -> Any:
        if method.startswith("_"):
            raise AttributeError(method)
        return functools.partial(self._call, method)
