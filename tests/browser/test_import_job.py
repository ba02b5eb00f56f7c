"""A file above the import threshold (lowered here) is imported by a background job: the form
leads to the job's page, whose progress bar moves until the imported document's link shows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.app.helpers import conllu

pytestmark = pytest.mark.browser
Shot = Callable[[Any, str], Path]


@pytest.fixture
def small_threshold(live_app: Flask, tmp_path: Path) -> Iterator[Path]:
    """Uploads above 2 kB become jobs, stored 10 sentences a batch (a visible progress bar)."""
    settings = {"IMPORT_INLINE_MAX_BYTES": 2000, "IMPORT_BATCH": 10, "EXPORT_INLINE_MAX_SENTENCES": 1000,
                "STAGING_DIR": str(tmp_path / "staging")}
    saved = {key: live_app.config[key] for key in settings if key in live_app.config}
    live_app.config.update(settings)
    path = tmp_path / "big.conllu"
    path.write_bytes(conllu(1500))
    yield path
    for key in settings:
        live_app.config.pop(key, None)
    live_app.config.update(saved)


def test_a_large_upload_shows_its_job_and_then_the_document(
        enforced_ui: Any, small_threshold: Path, screenshot: Shot) -> None:
    ui = enforced_ui  # the job page's script runs under the Content-Security-Policy
    ui.goto("/treebanks/import")
    ui.set_input_files("input[name=file]", str(small_threshold))
    ui.fill("input[name=name]", "Big upload")
    ui.select_option("select[name=split]", "train")
    ui.click("form.card button[type=submit]")
    ui.wait_for_url(lambda url: "/treebanks/jobs/" in url)
    assert ui.locator("h1").inner_text() == "Importing big.conllu"
    ui.locator("#job-message", has_text="stored").wait_for()
    assert 0 < float(ui.locator("#job-progress").get_attribute("value") or 0) <= 1
    screenshot(ui, "import-job-running")
    link = ui.locator("#job-outcome a")
    link.wait_for(timeout=60000)
    assert "Imported 1,500 sentences (4,500 words) into Big upload (train)" in ui.locator(
        "#job-outcome").inner_text()
    assert ui.locator("#job-message").inner_text().startswith("Done")
    screenshot(ui, "import-job-done")
    link.click()
    ui.wait_for_url(lambda url: "/sentences" in url)
    assert ui.locator("ol.sentences li .sent-id").first.inner_text() == "s1"
    screenshot(ui, "import-job-document")

    ui.click("text=Download .conllu")  # 1,500 sentences: above the lowered export threshold
    ui.wait_for_url(lambda url: "/treebanks/jobs/" in url)
    assert ui.locator("h1").inner_text() == "Exporting Big upload"
    download_link = ui.locator("#job-outcome a")
    download_link.wait_for(timeout=60000)
    assert download_link.inner_text() == "Download Big upload-all-gold.conllu"
    screenshot(ui, "export-job-done")
    with ui.expect_download() as download:
        download_link.click()
    assert Path(download.value.path()).read_bytes() == small_threshold.read_bytes()
