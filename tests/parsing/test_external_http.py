"""An external parser given as an HTTP endpoint: a real server on a thread of the test (issue #16)."""

from __future__ import annotations

import time

import pytest

from parsing.conllu_io import parse_conllu
from parsing.external import ExternalParserError, check_url, run_http_parser
from tests.http_parser import Servers, chain, servers

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
