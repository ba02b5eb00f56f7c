"""An external parser given as an HTTP endpoint: a real server on a thread of the test (issue #16)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from parsing.conllu_io import parse_conllu
from parsing.external import ExternalParserError, check_url, run_http_parser

TEXT = (
    "# sent_id = a\n1\tthe\tthe\tDET\t_\t_\t2\tdet\t_\t_\n2\tdog\tdog\tNOUN\t_\t_\t3\tnsubj\t_\t_\n"
    "3\tbarks\tbark\tVERB\t_\t_\t0\troot\t_\t_\n\n"
    "# sent_id = b\n1\tyes\tyes\tINTJ\t_\t_\t0\troot\t_\t_\n\n"
)
SENTENCES = parse_conllu(TEXT)

Reply = Callable[[str], tuple[int, bytes]]


def chain(body: str) -> tuple[int, bytes]:
    """Attach every word to the previous one (the first to ROOT), as a parser would reply."""
    lines = []
    for line in body.splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[6], cols[7] = str(int(cols[0]) - 1), "root" if cols[0] == "1" else "dep"
        lines.append("\t".join(cols))
    return 200, ("\n".join(lines) + "\n").encode("utf-8")


@pytest.fixture
def serve() -> Iterator[Callable[[Reply], str]]:
    """Start a server answering POSTs with ``reply(request body)``; its URL."""
    servers: list[ThreadingHTTPServer] = []
    received: list[str] = []

    def start(reply: Reply) -> str:
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
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/parse"

    start.received = received  # type: ignore[attr-defined]
    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_parses_come_back_from_the_endpoint(serve: Callable[[Reply], str]) -> None:
    url = serve(chain)
    parses = run_http_parser(url, SENTENCES, timeout=5, name="web")
    assert [p.heads.tolist() for p in parses] == [[-1, 0, 1, 2], [-1, 0]]
    assert parses[0].deprels[1:] == ["root", "dep", "dep"]
    sent = serve.received[0]  # type: ignore[attr-defined]
    assert "\t_\t_\t_\t_\n" in sent and "\tnsubj\t" not in sent  # the trees were blanked


def test_other_tokens_are_refused(serve: Callable[[Reply], str]) -> None:
    url = serve(lambda body: chain(body.replace("\tdog\t", "\tcat\t")))
    with pytest.raises(ExternalParserError, match=r"web, sentence 1 \(sent_id a\): returned other tokens: "
                                                  r"word 2 is 'cat' instead of 'dog'"):
        run_http_parser(url, SENTENCES, timeout=5, name="web")


def test_an_error_status_is_named(serve: Callable[[Reply], str]) -> None:
    url = serve(lambda body: (500, b"boom"))
    with pytest.raises(ExternalParserError, match="answered HTTP 500"):
        run_http_parser(url, SENTENCES, timeout=5, name="web")


def test_a_redirect_is_not_followed(serve: Callable[[Reply], str]) -> None:
    url = serve(lambda body: (302, b""))
    with pytest.raises(ExternalParserError, match="answered HTTP 302.*not followed"):
        run_http_parser(url, SENTENCES, timeout=5, name="web")


def test_a_slow_endpoint_times_out(serve: Callable[[Reply], str]) -> None:
    def slow(body: str) -> tuple[int, bytes]:
        time.sleep(3)
        return chain(body)

    url = serve(slow)
    started = time.monotonic()
    with pytest.raises(ExternalParserError, match="did not answer within 0.5 s"):
        run_http_parser(url, SENTENCES, timeout=0.5, name="web")
    assert time.monotonic() - started < 2.5


def test_an_oversized_reply_is_cut(serve: Callable[[Reply], str]) -> None:
    url = serve(lambda body: (200, b"x" * 5000))
    with pytest.raises(ExternalParserError, match="larger than 1000 bytes"):
        run_http_parser(url, SENTENCES, timeout=5, max_bytes=1000, name="web")


def test_malformed_or_non_utf8_replies(serve: Callable[[Reply], str]) -> None:
    with pytest.raises(ExternalParserError, match="web output, line 1"):
        run_http_parser(serve(lambda body: (200, b"not conllu\n\n")), SENTENCES, timeout=5, name="web")
    with pytest.raises(ExternalParserError, match="not UTF-8"):
        run_http_parser(serve(lambda body: (200, b"\xff\xfe")), SENTENCES, timeout=5, name="web")


def test_nobody_listening() -> None:
    with pytest.raises(ExternalParserError, match="cannot reach http://127.0.0.1:9/"):
        run_http_parser("http://127.0.0.1:9/", SENTENCES, timeout=2, name="web")


@pytest.mark.parametrize(("url", "problem"), [
    ("file:///etc/passwd", "only http:// and https://"),
    ("ftp://example.org/x", "only http:// and https://"),
    ("http:///path", "no host"),
    ("http://host:99999/", "not a URL"),
    ("parse", "only http:// and https://"),
])
def test_only_http_urls(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        check_url(url)
    with pytest.raises(ExternalParserError, match=problem):
        run_http_parser(url, SENTENCES, timeout=1, name="web")
