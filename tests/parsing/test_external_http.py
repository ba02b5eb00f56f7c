"""An external parser given as an HTTP endpoint: a real server on a thread of the test (issue #16)."""

from __future__ import annotations

import ipaddress
import socket
import time

import pytest

from parsing.conllu_io import parse_conllu
from parsing.external import ExternalParserError, PluginUnreachable, check_url, run_http_parser
from parsing.http_post import address_refusal
from tests.http_parser import Servers, chain, servers, trickle

TEXT = (
    "# sent_id = a\n1\tthe\tthe\tDET\t_\t_\t2\tdet\t_\t_\n2\tdog\tdog\tNOUN\t_\t_\t3\tnsubj\t_\t_\n"
    "3\tbarks\tbark\tVERB\t_\t_\t0\troot\t_\t_\n\n"
    "# sent_id = b\n1\tyes\tyes\tINTJ\t_\t_\t0\troot\t_\t_\n\n"
)
SENTENCES = parse_conllu(TEXT)

http = pytest.fixture(servers)


def test_parses_come_back_from_the_endpoint(http: Servers) -> None:
    url = http.start(chain)
    parses = run_http_parser(url, SENTENCES, timeout=5, name="web")
    assert [p.heads.tolist() for p in parses] == [[-1, 0, 1, 2], [-1, 0]]
    assert parses[0].deprels[1:] == ["root", "dep", "dep"]
    sent = http.received[0]
    assert "\t_\t_\t_\t_\n" in sent and "\tnsubj\t" not in sent  # the trees were blanked


def test_other_tokens_are_refused(http: Servers) -> None:
    url = http.start(lambda body: chain(body.replace("\tdog\t", "\tcat\t")))
    with pytest.raises(ExternalParserError, match=r"web, sentence 1 \(sent_id a\): returned other tokens: "
                                                  r"word 2 is 'cat' instead of 'dog'"):
        run_http_parser(url, SENTENCES, timeout=5, name="web")


def test_an_error_status_is_named(http: Servers) -> None:
    url = http.start(lambda body: (500, b"boom"))
    with pytest.raises(ExternalParserError, match="answered HTTP 500"):
        run_http_parser(url, SENTENCES, timeout=5, name="web")


def test_a_redirect_is_not_followed(http: Servers) -> None:
    url = http.start(lambda body: (302, b""))
    with pytest.raises(ExternalParserError, match="answered HTTP 302.*not followed"):
        run_http_parser(url, SENTENCES, timeout=5, name="web")


def test_a_slow_endpoint_times_out(http: Servers) -> None:
    def slow(body: str) -> tuple[int, bytes]:
        time.sleep(3)
        return chain(body)

    url = http.start(slow)
    started = time.monotonic()
    with pytest.raises(ExternalParserError, match="did not answer within 0.5 s"):
        run_http_parser(url, SENTENCES, timeout=0.5, name="web")
    assert time.monotonic() - started < 2.5


def test_an_oversized_reply_is_cut(http: Servers) -> None:
    url = http.start(lambda body: (200, b"x" * 5000))
    with pytest.raises(ExternalParserError, match="larger than 1000 bytes"):
        run_http_parser(url, SENTENCES, timeout=5, max_bytes=1000, name="web")


def test_malformed_or_non_utf8_replies(http: Servers) -> None:
    with pytest.raises(ExternalParserError, match="web output, line 1"):
        run_http_parser(http.start(lambda body: (200, b"not conllu\n\n")), SENTENCES, timeout=5, name="web")
    with pytest.raises(ExternalParserError, match="not UTF-8"):
        run_http_parser(http.start(lambda body: (200, b"\xff\xfe")), SENTENCES, timeout=5, name="web")


def test_nobody_listening() -> None:
    with pytest.raises(ExternalParserError, match="http://127.0.0.1:9/ could not be reached"):
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


# -- issue #31: the timeout bounds the whole exchange; non-HTTP replies; addresses --------------

REPLY = b"HTTP/1.0 200 OK\r\nContent-Length: 4000\r\n\r\n" + b"1\tx" * 1000


@pytest.mark.parametrize("headers_at_once", [True, False])
def test_a_trickling_server_is_cut_at_the_timeout(http: Servers, headers_at_once: bool) -> None:
    # one byte a second: every single read returns well within the timeout, the exchange never does
    head = REPLY[:REPLY.index(b"\r\n\r\n") + 4] if headers_at_once else b""
    url = http.start_tcp(trickle(REPLY[len(head):], 1.0, head=head))
    started = time.monotonic()
    with pytest.raises(PluginUnreachable, match="did not answer within 2 s"):
        run_http_parser(url, SENTENCES, timeout=2, name="web")
    assert time.monotonic() - started < 3


def test_a_reply_that_is_not_http_is_named(http: Servers) -> None:
    def garbage(connection: socket.socket) -> None:
        connection.recv(65536)
        connection.sendall(b"garbage\r\n")
    with pytest.raises(PluginUnreachable, match=r"did not answer in HTTP \(BadStatusLine\)"):
        run_http_parser(http.start_tcp(garbage), SENTENCES, timeout=5, name="web")


@pytest.mark.parametrize("url", ['http://127.0.0.1:5079/"><img>', "http://127.0.0.1:5079/a b",
                                 "http://127.0.0.1:5079/a\x00b", "http://bad host/"])
def test_urls_with_characters_urls_may_not_hold_are_refused(url: str) -> None:
    with pytest.raises(ValueError, match=r"may not appear in a URL: percent-encode it"):
        check_url(url)
    with pytest.raises(ExternalParserError, match=r"may not appear in a URL"):
        run_http_parser(url, SENTENCES, timeout=1, name="web")


def test_private_addresses_are_refused_unless_allowed(http: Servers) -> None:
    url = http.start(chain)
    for allowed in ([], ["10.0.0.0/8"], ["example.org"]):
        with pytest.raises(PluginUnreachable, match=r"is not allowed: 127.0.0.1 resolves to 127.0.0.1, "
                                                    r"a loopback address \(PLUGIN_ALLOWED_HOSTS\)"):
            run_http_parser(url, SENTENCES, timeout=5, name="web", allowed=allowed)
    assert not http.received  # refused before connecting
    for allowed in (["127.0.0.1"], ["127.0.0.0/8"], ["*"]):
        assert len(run_http_parser(url, SENTENCES, timeout=5, name="web", allowed=allowed)) == 2
    localhost = url.replace("127.0.0.1", "localhost")
    with pytest.raises(PluginUnreachable, match="localhost resolves to .*, a loopback address"):
        run_http_parser(localhost, SENTENCES, timeout=5, name="web", allowed=["127.0.0.2"])
    assert len(run_http_parser(localhost, SENTENCES, timeout=5, name="web", allowed=["LOCALHOST"])) == 2


@pytest.mark.parametrize(("address", "kind"), [
    ("10.1.2.3", "private"), ("192.168.0.1", "private"), ("169.254.169.254", "link-local"),
    ("::1", "loopback"), ("fe80::1", "link-local"), ("0.0.0.0", "unspecified"), ("fc00::1", "private"),
    ("::ffff:127.0.0.1", "loopback"), ("100.64.0.1", "non-public"),
])
def test_address_refusal_kinds(address: str, kind: str) -> None:
    refusal = address_refusal("h", ipaddress.ip_address(address), [])
    assert refusal is not None and refusal.endswith(f"a {kind} address")
    assert address_refusal("h", ipaddress.ip_address("8.8.8.8"), []) is None


def test_https_is_bounded_too(http: Servers) -> None:
    # a server that accepts the connection and never completes the TLS handshake
    silent = http.start_tcp(lambda connection: time.sleep(5)).replace("http://", "https://")
    started = time.monotonic()
    with pytest.raises(PluginUnreachable, match="did not answer within 1 s"):
        run_http_parser(silent, SENTENCES, timeout=1, name="web")
    assert time.monotonic() - started < 2
    plain = http.start(chain).replace("http://", "https://")  # HTTP where TLS was expected
    with pytest.raises(PluginUnreachable, match="could not be reached"):
        run_http_parser(plain, SENTENCES, timeout=5, name="web")
