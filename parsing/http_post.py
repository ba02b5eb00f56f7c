"""One HTTP POST bounded in time, size and reach: what an HTTP parser (:mod:`parsing.external`)
sends its sentences through.

* **Time**: one deadline (``timeout`` seconds from the call) covers the name lookup, the
  connection, the TLS handshake, sending, the status line and headers, and every byte of the
  body. Each socket operation waits at most the time left, and a watchdog shuts the socket down
  at the deadline, so a server that trickles one byte a second is cut off on time.
* **Size**: at most ``max_bytes`` of body are read.
* **Reach**: with an ``allowed`` list, every address the host resolves to is checked first
  (:func:`address_refusal`: loopback, private, link-local and other non-global addresses are
  refused unless listed), and the connection goes to one of those checked addresses, never to
  a second lookup's answer (no DNS rebinding between check and use). No proxy, no redirect.

Every failure is a :class:`PostError`; ``unreachable`` says whether the server gave no usable
HTTP answer (refused, unknown host, not allowed, late, not HTTP, an error status), which callers
may report with one generic sentence so that the reply does not tell open ports from closed.
"""

from __future__ import annotations

import concurrent.futures
import http.client
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Sequence
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class PostError(Exception):
    """The POST failed; the message says why. ``unreachable``: no usable HTTP answer came."""

    def __init__(self, message: str, *, unreachable: bool) -> None:
        super().__init__(message)
        self.unreachable = unreachable


def address_refusal(host: str, address: IPAddress, allowed: Sequence[str]) -> str | None:
    """Why ``host`` at ``address`` may not be reached, or None: a global unicast address may,
    another (loopback, private, link-local, shared, reserved, multicast, unspecified) only when
    ``allowed`` names the host, the address or a network holding it, or is ``"*"``.

    Examples:
        >>> address_refusal("example.org", ipaddress.ip_address("93.184.215.14"), []) is None
        True
        >>> address_refusal("localhost", ipaddress.ip_address("127.0.0.1"), [])
        'localhost resolves to 127.0.0.1, a loopback address'
        >>> address_refusal("localhost", ipaddress.ip_address("127.0.0.1"), ["127.0.0.0/8"]) is None
        True
        >>> address_refusal("x", ipaddress.ip_address("::ffff:10.0.0.1"), [])
        'x resolves to 10.0.0.1, a private address'
    """
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    for entry in allowed:
        entry = entry.strip().lower()
        if entry in ("*", host.lower()):
            return None
        try:
            if address in ipaddress.ip_network(entry, strict=False):
                return None
        except ValueError:
            continue  # a host name that is not this one
    if address.is_global and not address.is_multicast:
        return None
    kinds = (("loopback", address.is_loopback), ("link-local", address.is_link_local),
             ("multicast", address.is_multicast), ("unspecified", address.is_unspecified),
             ("private", address.is_private))
    kind = next((name for name, hit in kinds if hit), "non-public")
    return f"{host} resolves to {address}, a {kind} address"


class _Deadline:
    """The time left until one moment; ``expired`` once a watchdog cut the socket."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds
        self.expired = threading.Event()
        self.sock: socket.socket | None = None
        """The socket in use (a TLS socket replaces the plain one): what the watchdog cuts."""

    def left(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            self.expired.set()
            raise TimeoutError
        return left


def _resolve(host: str, port: int, deadline: _Deadline) -> list[tuple[int, tuple[object, ...]]]:
    """``(family, socket address)`` of every address ``host`` has, looked up within the deadline."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        found = pool.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
        infos = found.result(timeout=deadline.left())
    except concurrent.futures.TimeoutError:
        deadline.expired.set()
        raise TimeoutError from None
    finally:
        pool.shutdown(wait=False)
    return [(family, sockaddr) for family, _type, _proto, _name, sockaddr in infos]


def _connect(host: str, port: int, deadline: _Deadline, allowed: Sequence[str] | None) -> socket.socket:
    """A socket connected to one of ``host``'s addresses, every one of them checked first."""
    addresses = _resolve(host, port, deadline)
    refusal = None if allowed is None else _first_refusal(host, addresses, allowed)
    if refusal:
        raise PostError(f"is not allowed: {refusal} (PLUGIN_ALLOWED_HOSTS)", unreachable=True)
    error: OSError = OSError(f"{host} has no address")
    for family, sockaddr in addresses:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(deadline.left())
            sock.connect(sockaddr)
            return sock
        except OSError as failed:
            sock.close()
            error = failed
            if isinstance(failed, TimeoutError):
                raise
    raise error


def _exchange(conn: http.client.HTTPConnection, sock: socket.socket, deadline: _Deadline, path: str,
              body: bytes, headers: dict[str, str], max_bytes: int) -> bytes:
    sock.settimeout(deadline.left())
    conn.request("POST", path, body=body, headers=headers)
    sock.settimeout(deadline.left())
    reply = conn.getresponse()
    if reply.status in (301, 302, 303, 307, 308):
        raise PostError(f"answered HTTP {reply.status} (redirects to {reply.getheader('Location')}, "
                        "not followed)", unreachable=True)
    if not 200 <= reply.status < 300:
        raise PostError(f"answered HTTP {reply.status} ({reply.reason})", unreachable=True)
    chunks: list[bytes] = []
    size = 0
    while True:
        sock.settimeout(deadline.left())
        chunk = reply.read1(min(2**16, max_bytes + 1 - size))
        if not chunk:
            if deadline.expired.is_set():  # the watchdog cut the socket: the body is not whole
                raise TimeoutError
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            raise PostError(f"sent a reply larger than {max_bytes} bytes", unreachable=False)


def post(url: str, body: bytes, *, headers: dict[str, str], timeout: float, max_bytes: int,
         allowed: Sequence[str] | None = None) -> bytes:
    """POST ``body`` to ``url`` (http or https, already checked); the reply's body.

    ``allowed``: None reaches any address; a list reaches global addresses and those it names
    (:func:`address_refusal`).

    Raises:
        PostError: naming why (late, unreachable, not allowed, an error status, too large).
    """
    parts = urlsplit(url)
    host, secure = parts.hostname or "", parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    deadline = _Deadline(timeout)
    watchdog: threading.Timer | None = None
    try:
        sock = deadline.sock = _connect(host, port, deadline, allowed)
        watchdog = threading.Timer(deadline.left(), _cut, (deadline,))
        watchdog.daemon = True
        watchdog.start()
        if secure:
            sock.settimeout(deadline.left())
            sock = deadline.sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        conn = http.client.HTTPConnection(host, port)
        conn.sock = sock
        return _exchange(conn, sock, deadline, path, body, headers, max_bytes)
    except PostError:
        raise
    except (OSError, http.client.HTTPException) as error:
        if deadline.expired.is_set() or isinstance(error, TimeoutError):
            raise PostError(f"did not answer within {timeout:g} s", unreachable=True) from None
        if isinstance(error, http.client.HTTPException):
            raise PostError(f"did not answer in HTTP ({type(error).__name__})", unreachable=True) from None
        reason = error.strerror or str(error) or type(error).__name__
        raise PostError(f"could not be reached: {reason}", unreachable=True) from None
    finally:
        if watchdog is not None:
            watchdog.cancel()
        if deadline.sock is not None:
            deadline.sock.close()


def _cut(deadline: _Deadline) -> None:
    """The watchdog: past the deadline, shut the socket so that a blocked read returns."""
    deadline.expired.set()
    if deadline.sock is not None:
        try:
            deadline.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def url_refusal(url: str, allowed: Sequence[str], *, timeout: float = 3.0) -> str | None:
    """Why the host of ``url`` may not be reached (:func:`address_refusal` of its first refused
    address), or None, also when it does not resolve now (a run checks again).

    >>> url_refusal("http://127.0.0.1:8080/parse", [])
    '127.0.0.1 resolves to 127.0.0.1, a loopback address'
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        addresses = _resolve(host, parts.port or 80, _Deadline(timeout))
    except OSError:
        return None
    return _first_refusal(host, addresses, allowed)


def _first_refusal(host: str, addresses: list[tuple[int, tuple[object, ...]]], allowed: Sequence[str]
                   ) -> str | None:
    """:func:`address_refusal` of the first of ``addresses`` (socket addresses) refused, or None."""
    for _family, sockaddr in addresses:
        refusal = address_refusal(host, ipaddress.ip_address(str(sockaddr[0]).split("%")[0]), allowed)
        if refusal:
            return refusal
    return None
