"""A real HTTP "parser" on a thread of the test (no mocks): it answers each POST with what a
reply function makes of the request body (issue #16's HTTP plugins)."""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Reply = Callable[[str], tuple[int, bytes]]
"""The request's CoNLL-U → (HTTP status, reply body)."""


def chain(body: str) -> tuple[int, bytes]:
    """Attach every word to the previous one (the first to ROOT), keeping every other column."""
    lines = []
    for line in body.splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[6], cols[7] = str(int(cols[0]) - 1), "root" if cols[0] == "1" else "dep"
        lines.append("\t".join(cols))
    return 200, ("\n".join(lines) + "\n").encode("utf-8")


@dataclass
class Servers:
    """The servers a test started (shut down by :func:`servers`) and every request body they got."""

    running: list[socketserver.TCPServer] = field(default_factory=list)
    received: list[str] = field(default_factory=list)

    def start(self, reply: Reply) -> str:
        """Serve ``reply`` on a free local port; the endpoint's URL."""
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server name)
                body = self.rfile.read(int(self.headers["Content-Length"])).decode("utf-8")
                received.append(body)
                status, data = reply(body)
                self.send_response(status)
                if status in (301, 302):
                    self.send_header("Location", "http://127.0.0.1:9/elsewhere")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.running.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/parse"


    def start_tcp(self, serve: Callable[[socket.socket], None]) -> str:
        """A plain TCP server on a free local port whose connections ``serve`` handles (it may
        answer anything, or nothing); an http:// URL pointing at it."""
        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                try:
                    serve(self.request)
                except OSError:
                    pass  # the client hung up

        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.running.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/parse"


def trickle(data: bytes, every: float = 1.0, *, head: bytes = b"") -> Callable[[socket.socket], None]:
    """A TCP handler that reads the request, sends ``head`` at once, then ``data`` one byte every
    ``every`` s."""
    def serve(connection: socket.socket) -> None:
        connection.recv(65536)
        connection.sendall(head)
        for byte in data:
            connection.sendall(bytes([byte]))
            time.sleep(every)
    return serve


def servers() -> Iterator[Servers]:
    """A fixture body: the :class:`Servers` of one test, shut down after it."""
    started = Servers()
    yield started
    for server in started.running:
        server.shutdown()
        server.server_close()
