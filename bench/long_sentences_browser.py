"""The browser half of bench/long_sentences.py (issue 30): the editor of a ~100- and a ~300-word
sentence on a live server, ``--edits`` edits each with re-parse, timed with performance.now()
in the page (see that script's docstring for the columns and the numbers)."""

from __future__ import annotations

import statistics
import sys
import threading
import time
from collections import Counter
from typing import Any

EDIT = """async () => {
  const S = window.arcvoteEditor;
  const before = [S.members, S.reparse];  // a reply replaces S.members (or, with item 5, S.reparse)
  const done = new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      if (S.members === before[0] && S.reparse === before[1]) return;
      observer.disconnect();
      void document.body.offsetHeight;
      resolve(performance.now());
    });
    observer.observe(document.querySelector("#editor"), { childList: true, subtree: true, attributes: true });
  });
  const tree = document.querySelector("#tree");
  const start = performance.now();
  tree.dispatchEvent(new KeyboardEvent("keydown", { key: "2", bubbles: true, cancelable: true }));
  void document.body.offsetHeight;
  const key = performance.now() - start;
  const end = await Promise.race([done, new Promise((resolve) => setTimeout(() => resolve(null), 60000))]);
  const status = document.querySelector("#status").innerText;
  if (end === null) return { error: `no re-parse reply within 60 s: ${status}` };
  const t = window.__reparse;
  return { key, server: t.received - t.sent, apply: end - t.received, total: end - start };
}"""
"""One edit (key 2: the second proposed head) and its re-parse, timed in the page (ms)."""

WRAP_FETCH = """() => {
  const original = window.fetch;
  window.__reparse = { sent: 0, received: 0, count: 0 };
  window.fetch = async (...args) => {
    const sent = performance.now();
    const response = await original(...args);
    if (String(args[0]).endsWith("/reparse")) {
      const count = window.__reparse.count + 1;
      Object.assign(window.__reparse, { sent, received: performance.now(), count });
    }
    return response;
  };
}"""


def browser_bench(app: Any, by_length: dict[int, list[int]], edits: int) -> None:
    """Print the page's median ms per edit with re-parse at ~100 and ~300 words."""
    from playwright.sync_api import sync_playwright
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    print("| words | focus window | open s | j key ms | edits | key ms | server ms | apply ms "
          "| browser ms (key + apply) | total ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                             args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=base,
                                   bypass_csp=True).new_page()  # wait_for_function evaluates
        page.on("console", lambda message: print("console:", message.text, file=sys.stderr))
        page.goto("/auth/login")
        page.fill("#username", "bench")
        page.fill("#password", "bench-password")
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/auth/login" not in url)
        page.add_init_script(f"({WRAP_FETCH})();")
        for length in (100, 300):
            for focus in ("auto", "off"):
                print(f"| {bench_page(page, by_length[length][0], focus, edits)} |")
        browser.close()
        browser.close()
    server.shutdown()


KEY = """(key) => {
  const start = performance.now();
  const event = new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true });
  document.querySelector("#tree").dispatchEvent(event);
  void document.body.offsetHeight;
  return performance.now() - start;
}"""
"""Milliseconds one key takes, layout included (tests/browser/helpers.py: KEY_TIME)."""


def bench_page(page: Any, sentence_id: int, focus: str, edits: int) -> str:
    """One table row: open the editor with the focused window ``focus`` ("auto": on above 40
    words, or "off"), time 20 j keys and ``edits`` edits with re-parse."""
    page.evaluate(f"localStorage.setItem('arcvote.focus', '{focus}')")
    started = time.perf_counter()
    page.goto(f"/workspace/sentences/{sentence_id}")
    page.wait_for_selector("#members figure svg")
    opened = time.perf_counter() - started
    page.wait_for_function("() => window.__reparse && window.__reparse.count >= 1", timeout=600000)
    page.locator("#tree").focus()
    keys = statistics.median(page.evaluate(KEY, "j") for _ in range(20))
    cdp = page.context.new_cdp_session(page) if PROFILE_BROWSER else None
    if cdp:
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        cdp.send("Profiler.start")
    runs = [run for run in (edit_once(page, i) for i in range(edits)) if run]
    if cdp:
        print_profile(cdp.send("Profiler.stop")["profile"])
    words = page.evaluate("() => window.arcvoteEditor.words.length")
    med = {k: statistics.median(r[k] for r in runs) for k in ("key", "server", "apply", "total")}
    browser = med["key"] + med["apply"]
    return (f"{words} | {focus} | {opened:.2f} | {keys:.1f} | {len(runs)} | {med['key']:.0f} | "
            f"{med['server']:.0f} | {med['apply']:.0f} | {browser:.0f} | {med['total']:.0f}")


PROFILE_BROWSER = False
"""--profile-browser: print where the page's time goes during the edits (Chrome's sampling profiler)."""


def print_profile(profile: dict[str, Any]) -> None:
    """The 20 functions with the most samples (self time), as shares of the busy samples."""
    nodes = {node["id"]: node["callFrame"] for node in profile["nodes"]}
    counts: Counter[str] = Counter()
    for sample in profile["samples"]:
        frame = nodes[sample]
        where = f"{frame['url'].rsplit('/', 1)[-1]}:{frame['lineNumber'] + 1}"
        counts[f"{frame['functionName'] or '(anonymous)'} {where}"] += 1
    busy = sum(c for name, c in counts.items() if not name.startswith("(idle)"))
    for name, count in counts.most_common(21):
        if not name.startswith("(idle)"):
            print(f"    {count / busy * 100:5.1f}% {name}", file=sys.stderr)


def edit_once(page: Any, i: int) -> dict[str, Any] | None:
    """Select the i-th word (from the start) with two proposed heads and time pressing 2 (the
    second head by votes, as the editor's headCandidates ranks them). Words whose second head is
    ROOT, and the root word itself, are skipped: a second root is refused without a re-parse."""
    word = page.evaluate("""(i) => { const S = window.arcvoteEditor; let seen = 0;
        for (const w of S.words) {
          const votes = new Map();
          for (const m of S.members) votes.set(m.heads[w.id - 1], (votes.get(m.heads[w.id - 1]) ?? 0) + 1);
          const ranked = [...votes].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
          const fine = ranked.length >= 2 && ranked[1][0] !== 0 && S.heads[w.id - 1] !== 0;
          if (fine && !S.human.has(w.id) && seen++ === i) return w.id; } return null; }""", i)
    if word is None:
        return None
    page.click(f'#tokens tr[data-word="{word}"]')
    page.locator("#tree").focus()
    result: dict[str, Any] = page.evaluate(EDIT)
    if "error" in result:
        print(f"edit of word {word}: {result['error']}", file=sys.stderr)
        return None
    return result
