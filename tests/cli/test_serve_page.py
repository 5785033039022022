"""kiln serve's web page in a real headless Chromium (Debian chromium + chromium-driver, python3-selenium): the page
loads without the token (its calls carry it), a real face photo set into its file input is boxed as /v1/faces
answers for the same photo, a picture gets its mask and a clip's frames theirs, the metrics chart gets data, and the page asks nothing of any
address but the server's."""
import json
import shutil
import subprocess
import time

import pytest

from conftest import KILN
from serve_util import Server

ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
HOPPER = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"
TOKEN = "page-s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:  # Debian python3-selenium (make deps)
    webdriver = None

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")

pytestmark = [
    pytest.mark.skipif(
        "serve" not in subprocess.run([KILN, "--help"], capture_output=True, text=True).stdout
        or "built without" in subprocess.run([KILN, "serve", "--help"], capture_output=True, text=True).stdout,
        reason="this kiln is built without ONNX Runtime, faiss or Boost.Beast"),
    pytest.mark.skipif(webdriver is None or CHROMIUM is None or CHROMEDRIVER is None,
                       reason="chromium, chromium-driver or python3-selenium is missing (make deps)"),
]


@pytest.fixture(scope="module")
def server():
    segment = "without ONNX Runtime or FFmpeg" not in subprocess.run([KILN, "segment", "--help"], capture_output=True,
                                                                     text=True).stdout
    with Server("--token", TOKEN, "--mode", "cpu", *(["--segment"] if segment else [])) as s:
        s.segment = segment
        yield s


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update",
                 "--disable-default-apps", "--disable-sync", "--metrics-recording-only"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def wait_for(driver, condition, seconds=90):  # generous: the whole suite may share the cores
    return WebDriverWait(driver, seconds, poll_frequency=0.1).until(lambda d: condition(d))


def finished(driver, container):
    figures = driver.find_elements(By.CSS_SELECTOR, f"#{container} figure")
    if figures and all(f.get_attribute("data-state") != "pending" for f in figures):
        return figures
    return None


def requested_urls(driver):
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def test_page_is_public_and_forbids_outside_sources(server):
    status, headers, body = server.request("GET", "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    policy = headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "connect-src 'self'" in policy
    assert b'<input id="face-files" type="file"' in body
    assert server.request("GET", "/page.js")[0] == 200 and server.request("GET", "/page.css")[0] == 200
    # The page's own files are public; everything else still needs the token.
    assert server.request("GET", "/metrics")[0] == 401
    assert server.request("POST", "/v1/faces", b"x")[0] == 401


def test_photo_boxed_as_v1_faces_answers(server, browser):
    base = f"http://127.0.0.1:{server.port}"
    browser.get(base + "/")
    browser.find_element(By.ID, "token").send_keys(TOKEN)
    browser.find_element(By.ID, "face-files").send_keys(ASTRONAUT + "\n" + HOPPER)
    figures = wait_for(browser, lambda d: finished(d, "face-results"))
    assert [f.get_attribute("data-state") for f in figures] == ["done", "done"], \
        [f.get_attribute("data-error") for f in figures]

    for figure, path in zip(figures, (ASTRONAUT, HOPPER)):
        with open(path, "rb") as f:
            status, _, answer = server.json("POST", "/v1/faces", f.read(), AUTH)
        assert status == 200
        drawn = json.loads(figure.get_attribute("data-boxes"))
        assert len(drawn) == len(answer["faces"]) >= 1
        for box, face in zip(drawn, answer["faces"]):
            assert all(abs(a - b) <= 1 for a, b in zip(box["box"], face["box"]))
            assert box["accepted"] == face["accepted"] and box["reasons"] == face["reasons"]
        caption = figure.find_element(By.TAG_NAME, "figcaption").text
        assert ("accepted" in caption) or ("rejected" in caption)
    # The canvas holds the photo at its size, a box stroked in the verdict's colour.
    width, height = browser.execute_script(
        "const c = document.querySelector('#face-results canvas'); return [c.width, c.height];")
    assert (width, height) == (512, 512)
    box = json.loads(figures[0].get_attribute("data-boxes"))[0]
    x, y = int(box["box"][0]), int(box["box"][1] + box["box"][3] / 2)
    rgb = browser.execute_script(
        f"return Array.from(document.querySelector('#face-results canvas').getContext('2d')"
        f".getImageData({x}, {y}, 1, 1).data).slice(0, 3);")
    assert rgb == ([0x1a, 0x9e, 0x3f] if box["accepted"] else [0xd6, 0x27, 0x28])


def test_picture_gets_its_mask(server, browser):
    if not server.segment:
        pytest.skip("this kiln is built without FFmpeg: no /v1/segment")
    browser.find_element(By.ID, "segment-files").send_keys(ASTRONAUT)
    figures = wait_for(browser, lambda d: finished(d, "segment-results"))
    assert figures[0].get_attribute("data-state") == "done", figures[0].get_attribute("data-error")
    with open(ASTRONAUT, "rb") as f:
        _, _, answer = server.json("POST", "/v1/segment?output=json", f.read(), AUTH)
    assert abs(float(figures[0].get_attribute("data-person")) - answer["person_fraction"]) < 1e-3


def test_clip_is_played_frame_by_frame_with_masks(server, browser, tmp_path):
    if not server.segment or shutil.which("ffmpeg") is None:
        pytest.skip("this kiln is built without FFmpeg (no /v1/segment), or the ffmpeg tool is missing")
    clip = tmp_path / "astronaut.webm"  # one second of the photo, VP9 (Chromium plays it)
    subprocess.run(["ffmpeg", "-v", "error", "-loop", "1", "-i", ASTRONAUT, "-t", "1", "-r", "8", "-vf", "scale=256:256",
                    "-c:v", "libvpx-vp9", "-deadline", "realtime", "-pix_fmt", "yuv420p", str(clip)], check=True)
    items_before = server.metric('kiln_serve_model_items_total{model="segment"}', AUTH)
    browser.find_element(By.ID, "segment-files").send_keys(str(clip))
    figure = wait_for(browser, lambda d: (f := finished(d, "segment-results")) and f[-1].get_attribute("data-file")
                      == clip.name and f[-1])
    assert figure.get_attribute("data-state") == "done", figure.get_attribute("data-error")
    assert figure.get_attribute("data-frames") == "4"  # 4 frames a second
    assert "person" in figure.find_element(By.TAG_NAME, "figcaption").text
    assert server.metric('kiln_serve_model_items_total{model="segment"}', AUTH) - items_before == 4


def test_metrics_chart_gets_data_and_nothing_leaves_the_server(server, browser):
    chart = browser.find_element(By.ID, "metrics-chart")
    wait_for(browser, lambda d: int(chart.get_attribute("data-samples") or 0) >= 3)
    series = json.loads(chart.get_attribute("data-series"))
    assert any(s["rps"] > 0 for s in series)  # the page's own uploads were counted
    assert all(s["queue_ms"] >= 0 for s in series)
    base = f"http://127.0.0.1:{server.port}/"
    urls = requested_urls(browser)
    assert any(u.startswith(base + "v1/faces") for u in urls) and any(u == base + "metrics" for u in urls)
    outside = [u for u in urls if not (u.startswith(base) or u.startswith("blob:") or u.startswith("data:"))]
    assert outside == []
    # The polls before the token was typed were refused (401): the only errors the page may have met.
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert [m for m in errors if "/metrics" not in m or "401" not in m] == []
