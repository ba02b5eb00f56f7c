"""Stored XSS: a treebank whose every user-controlled string is hostile, and every GET route
of ``app.url_map`` read by the site admin (who sees everything).

Hostile strings go into the treebank name, the pool file's name, ``# sent_id`` and ``# text``
comments, word forms, lemmas, FEATS and MISC values, a DEPREL subtype, a user name (made with the
admin's user service and given a role), a note, an external parse's file name and an audit
event's details. No ``text/html`` page may contain a payload unescaped; JSON is served as
``application/json`` and CSV as ``text/csv`` (never something a browser would sniff as HTML); the
tree's SVG download holds the payloads XML-escaped, with no script element or event handler.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from flask import Flask

from tests.app.hostile import IMG, RAW, SCRIPT, SVG, hostile_treebank
from tests.app.team_helpers import client_as, route_url, routes


def test_no_page_renders_a_payload_unescaped(app: Flask, password_hash: str) -> None:
    team, hostile_id = hostile_treebank(app, password_hash)
    admin = client_as(app, team.users["admin"])
    found, kinds = [], {"html": 0, "json": 0, "csv": 0, "svg": 0}
    hostile_seen = 0
    for endpoint, method, rule in routes(app):
        if method != "GET":
            continue
        url = route_url(app, endpoint, rule, team, user_id=hostile_id)
        response = admin.get(url, query_string={"a": "ext1", "b": "gold"})
        healthz = endpoint.endswith("healthz") and response.status_code == 503  # no job worker here
        assert response.status_code < 500 or healthz, f"{url}: {response.status_code}"
        mimetype = response.mimetype or ""
        body = response.get_data(as_text=True)
        hostile_seen += "alert(1)" in body
        if mimetype == "text/html":
            kinds["html"] += 1
            found += [f"{url} ({endpoint}): {raw}" for raw in RAW if raw in body]
        elif mimetype == "application/json":
            kinds["json"] += 1
        elif mimetype == "text/csv":
            kinds["csv"] += 1
        elif mimetype == "image/svg+xml":  # a tree download: XML-escaped text, no script, no handler
            kinds["svg"] += 1
            found += [f"{url} ({endpoint}): {raw}" for raw in RAW if raw in body]
            drawing = ET.fromstring(body)
            assert not [node for node in drawing.iter() if node.tag.endswith("script")
                        or any(name.lower().startswith("on") for name in node.attrib)], url
        else:
            assert "html" not in mimetype and "xml" not in mimetype, f"{url}: {mimetype}"
        if "alert(1)" in body and mimetype != "text/html":
            assert mimetype in ("application/json", "text/csv", "text/plain", "application/x-ndjson",
                                "application/jsonl", "image/svg+xml", "text/x-tex"), f"{url}: {mimetype}"
        assert response.headers.get("X-Content-Type-Options") == "nosniff", url
    assert not found, "payload rendered unescaped:\n" + "\n".join(found)
    assert kinds["html"] > 20 and kinds["json"] > 5 and kinds["svg"] == 1, kinds
    assert hostile_seen > 15, "too few responses carried the hostile data to prove anything"


def test_hostile_strings_are_shown_escaped(app: Flask, password_hash: str) -> None:
    """The payloads are shown (as text), not dropped: escaping, not filtering."""
    team, _hostile_id = hostile_treebank(app, password_hash)
    admin = client_as(app, team.users["admin"])
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert escaped in admin.get("/treebanks/").get_data(as_text=True)
    members = admin.get(f"/treebanks/{team.treebank_id}/members").get_data(as_text=True)
    assert f"u{escaped}" in members


def test_query_arguments_are_not_reflected_unescaped(app: Flask, password_hash: str) -> None:
    """Reflected XSS: every GET route with hostile query arguments (the names pages read)."""
    team, hostile_id = hostile_treebank(app, password_hash)
    admin = client_as(app, team.users["admin"])
    hostile = f"{SCRIPT}{IMG}{SVG}"
    query = {name: hostile for name in ("a", "b", "against", "split", "q", "next", "before", "page",
                                        "source", "field", "name", "provenance", "sentence",
                                        "reviewed_only", "status", "sort")}
    found = []
    for endpoint, method, rule in routes(app):
        if method == "GET":
            url = route_url(app, endpoint, rule, team, user_id=hostile_id)
            response = admin.get(url, query_string=query)
            body = response.get_data(as_text=True)
            if response.mimetype == "text/html":
                found += [f"{url} ({endpoint}): {raw}" for raw in RAW if raw in body]
    assert not found, "query argument reflected unescaped:\n" + "\n".join(found)
