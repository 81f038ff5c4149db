"""The interactive page in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, which ``.ci/run`` installs) driven by Selenium, on the README's RNN
gradient. Skipped only outside CI when Chromium is missing; under CI (``CI`` set) that fails.
Screenshots go to ``$SYMSCAN_SCREENSHOTS`` when it is set."""

import json
import os
from pathlib import Path

import pytest

import symscan as ss
import symscan.tensor as T

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
WINDOW = (1400, 900)


def _require_chromium() -> None:
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not os.access(path, os.X_OK)]
    if not missing:
        return
    message = f"{' and '.join(missing)} missing: install Debian's chromium and chromium-driver (.ci/run does)"
    if os.environ.get("CI"):
        pytest.fail(f"the browser test must run in CI: {message}")
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One headless Chromium for the module, isolated (fresh profile, no background network)."""
    _require_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", f"--window-size={WINDOW[0]},{WINDOW[1]}",
                     f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def rnn_gradient():
    """The README's Elman RNN, compiled with the gradient of a loss through it."""
    X, W_in, W_h, b, h0 = T.tensor3("X"), T.matrix("W_in"), T.matrix("W_h"), T.vector("b"), T.matrix("h0")
    hs, _ = ss.scan(lambda x_t, h, W_in, W_h, b: T.tanh(T.dot(x_t, W_in) + T.dot(h, W_h) + b),
                    sequences=X, outputs_info=h0, non_sequences=[W_in, W_h, b])
    return ss.function([X, W_in, W_h, b, h0], [hs[-1]] + ss.grad((hs**2).sum(), [W_in, W_h]))


@pytest.fixture(scope="module")
def page(browser, rnn_gradient, tmp_path_factory):
    """The gradient's page written by ``ss.draw(f, path)`` and loaded; returns its embedded data."""
    path = Path(ss.draw(rnn_gradient, tmp_path_factory.mktemp("page") / "rnn_gradient.html"))
    browser.get(path.as_uri())
    _wait(browser, "return document.getElementById('ss-graph').dataset.ready === 'true'")
    return json.loads(browser.execute_script("return document.getElementById('ss-data').textContent"))


def _wait(browser, script: str, *args, timeout: float = 10):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, timeout, poll_frequency=0.05).until(lambda d: d.execute_script(script, *args))


def _open_loops(browser) -> list[str]:
    return json.loads(browser.execute_script("return document.getElementById('ss-graph').dataset.open"))


def _boxes(browser, selector: str) -> dict[str, dict]:
    """Screen boxes of the elements matching ``selector`` in the picture, by data-id (or loop id)."""
    return browser.execute_script("""
        const boxes = {};
        for (const el of document.querySelectorAll('.ss-stage ' + arguments[0])) {
          const r = el.getBoundingClientRect();
          boxes[el.getAttribute('data-id') || el.getAttribute('data-loop-id')] =
            {x: r.left, y: r.top, w: r.width, h: r.height, text: el.textContent};
        }
        return boxes;""", selector)


def _viewport(browser) -> dict:
    return browser.execute_script("""const r = document.querySelector('.ss-viewport').getBoundingClientRect();
        return {x: r.left, y: r.top, w: r.width, h: r.height};""")


def _fit(browser) -> None:
    browser.find_element("css selector", ".ss-fit").click()


def _screenshot(browser, name: str) -> None:
    folder = os.environ.get("SYMSCAN_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(folder) / name))


def _loop_with_ports(page, *labels) -> str:
    """The loop whose body has input ports with all these labels (the forward loop: the pushed-out
    product dot(X,W_in)[t] and h[t-1])."""
    for loop_id in page["loops"]:
        ports = {item["label"] for item in page["items"].values() if item["loop"] == loop_id}
        if all(any(label in port for port in ports) for label in labels):
            return loop_id
    raise AssertionError(f"no loop has ports {labels}: {page['loops']}")


def _click_loop(browser, loop_id: str) -> None:
    """Click a closed loop's box, or an open loop's frame (just inside its top edge, on its title)."""
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    closed = browser.find_elements("css selector", f'.ss-stage .item[data-loop-id="{loop_id}"]')
    if closed:
        closed[0].click()
        return
    title = browser.execute_script(
        "const r = document.querySelector(`.ss-stage .loop[data-loop-id='${arguments[0]}'] > text`)"
        ".getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height};", loop_id)
    x, y = int(title["x"] + title["w"] / 2), int(title["y"] + title["h"] / 2)
    hit = browser.execute_script("const el = document.elementFromPoint(arguments[0], arguments[1]);"
                                 "const loop = el && el.closest('[data-loop-id]');"
                                 "return loop && loop.getAttribute('data-loop-id');", x, y)
    assert hit == loop_id, f"the title of loop {loop_id} is covered by {hit!r} at {(x, y)}"
    actions = ActionBuilder(browser)
    actions.pointer_action.move_to_location(x, y).click()
    actions.perform()


def test_every_item_of_the_first_state_is_drawn_inside_the_page(browser, page):
    assert page["initial"] == [] and len(page["loops"]) >= 2  # the forward and the backward loop, closed
    _fit(browser)
    shown, port = _boxes(browser, ".item"), _viewport(browser)
    initial = next(state for state in page["states"] if not state["open"])
    expected = {item_id for item_id in page["items"] if f'data-id="{item_id}"' in initial["svg"]}
    assert set(shown) == expected and len(shown) >= 10
    for item_id, box in shown.items():
        assert box["w"] > 1 and box["h"] > 1, (item_id, box)
        assert port["x"] - 1 <= box["x"] and box["x"] + box["w"] <= port["x"] + port["w"] + 1, (item_id, box, port)
        assert port["y"] - 1 <= box["y"] and box["y"] + box["h"] <= port["y"] + port["h"] + 1, (item_id, box, port)
    _screenshot(browser, "rnn_gradient_closed.png")


def test_clicking_a_loop_opens_it_and_clicking_again_closes_it(browser, page):
    forward = _loop_with_ports(page, "dot(X,W_in)[t]", "h[t-1]")
    _click_loop(browser, forward)
    _wait(browser, "return JSON.parse(document.getElementById('ss-graph').dataset.open).includes(arguments[0])",
          forward)
    body = _boxes(browser, f'.item[data-loop="{forward}"]')
    labels = " ".join(box["text"] for box in body.values())
    assert "dot(X,W_in)[t]" in labels and "h[t-1]" in labels, labels
    assert all(box["w"] > 1 and box["h"] > 1 for box in body.values())
    assert not browser.find_elements("css selector", f'.ss-stage .item[data-loop-id="{forward}"]')

    _click_loop(browser, forward)
    _wait(browser, "return !JSON.parse(document.getElementById('ss-graph').dataset.open).includes(arguments[0])",
          forward)
    assert not _boxes(browser, f'.item[data-loop="{forward}"]')
    assert browser.find_elements("css selector", f'.ss-stage .item[data-loop-id="{forward}"]')


def test_all_loops_open_side_by_side(browser, page):
    for loop_id in sorted(page["loops"], key=lambda i: (page["loops"][i]["parent"] is not None, i)):
        if loop_id not in _open_loops(browser):
            _click_loop(browser, loop_id)
            _wait(browser, "return JSON.parse(document.getElementById('ss-graph').dataset.open).includes(arguments[0])",
                  loop_id)
    assert sorted(_open_loops(browser)) == sorted(page["loops"])
    _fit(browser)
    _screenshot(browser, "rnn_gradient_open.png")
    for loop_id in list(page["loops"]):  # back to the first state for the other tests
        if loop_id in _open_loops(browser) and page["loops"][loop_id]["parent"] is None:
            _fit(browser)
            _click_loop(browser, loop_id)
    _wait(browser, "return document.getElementById('ss-graph').dataset.open === '[]'")


def test_hovering_an_item_shows_its_details(browser, page):
    from selenium.webdriver.common.action_chains import ActionChains

    _fit(browser)
    item_id, info = next((i, info) for i, info in page["items"].items()
                         if info["kind"] == "op" and info["details"] and browser.find_elements(
                             "css selector", f'.ss-stage .item[data-id="{i}"]'))
    element = browser.find_element("css selector", f'.ss-stage .item[data-id="{item_id}"]')
    ActionChains(browser).move_to_element(element).perform()
    _wait(browser, "return !document.querySelector('.ss-tooltip').hidden")
    text = browser.find_element("css selector", ".ss-tooltip").text
    for _, value in info["details"][:3]:
        assert value.split("\n")[0] in text, (value, text)
    ActionChains(browser).move_to_element(browser.find_element("css selector", ".ss-fit")).perform()
    _wait(browser, "return document.querySelector('.ss-tooltip').hidden")


def test_search_finds_an_item_by_name(browser, page):
    box = browser.find_element("css selector", ".ss-search")
    box.clear()
    box.send_keys("W_h")
    found = _wait(browser, "const el = document.querySelector('.ss-stage .item.ss-current');"
                           "return el && el.getAttribute('data-id');")
    assert "w_h" in (page["items"][found]["label"] + " " + page["items"][found]["search"]).lower()
    count = browser.find_element("css selector", ".ss-count").text
    assert count.startswith("1 of "), count
    centre, port = _boxes(browser, f'.item[data-id="{found}"]')[found], _viewport(browser)
    assert port["x"] <= centre["x"] + centre["w"] / 2 <= port["x"] + port["w"]
    box.send_keys("\n")  # Enter: the next match (or the same one, when there is one)
    assert browser.find_element("css selector", ".ss-count").text.split(" of ")[1] == count.split(" of ")[1]
    box.clear()
    box.send_keys("no such name at all")
    assert browser.find_element("css selector", ".ss-count").text == "no match"
    box.clear()


def test_search_opens_the_loop_holding_a_match(browser, page):
    shown = " ".join(box["text"] for box in _boxes(browser, ".item").values()).lower()
    closed = set(page["loops"]) - set(_open_loops(browser))
    item_id, info = next((i, info) for i, info in page["items"].items()
                         if info["loop"] in closed and info["label"].lower() not in shown)
    box = browser.find_element("css selector", ".ss-search")
    box.send_keys(info["label"])
    _wait(browser, "const el = document.querySelector('.ss-stage .item.ss-current');"
                   "return el && el.getAttribute('data-id') === arguments[0];", item_id)
    assert info["loop"] in _open_loops(browser)
    found, port = _boxes(browser, f'.item[data-id="{item_id}"]')[item_id], _viewport(browser)
    assert port["x"] <= found["x"] and found["x"] + found["w"] <= port["x"] + port["w"]
    assert port["y"] <= found["y"] and found["y"] + found["h"] <= port["y"] + port["h"]
    box.clear()


def test_console_has_no_errors_and_nothing_was_fetched(browser, page):
    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not severe, severe
    fetched = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert not [url for url in fetched if not url.startswith("data:")], fetched


def test_the_gradient_fits_one_full_hd_screen_with_every_label_readable(browser, page):
    """Issue 24's 'done when': drawn with defaults (loops closed), the README RNN's gradient fits
    a 1920x1080 window after 'fit', and every label's text stays at least 10 px tall."""
    browser.set_window_size(1920, 1080)
    try:
        browser.execute_script("window.dispatchEvent(new Event('resize'))")
        _click_to_state(browser, [])
        _fit(browser)
        port = _viewport(browser)
        texts = browser.execute_script("""
            return [...document.querySelectorAll('.ss-stage .item text')].map((el) => {
              const r = el.getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height};});""")
        assert len(texts) >= 10
        for box in texts:
            assert box["h"] >= 10, box  # 12 px labels shown at 80% or more
            assert port["x"] - 1 <= box["x"] and box["x"] + box["w"] <= port["x"] + port["w"] + 1, (box, port)
            assert port["y"] - 1 <= box["y"] and box["y"] + box["h"] <= port["y"] + port["h"] + 1, (box, port)
        _screenshot(browser, "rnn_gradient_closed_1920x1080.png")
    finally:
        browser.set_window_size(*WINDOW)


def _click_to_state(browser, open_ids: list[str]) -> None:
    """Close every open loop, then open ``open_ids`` (by clicking, as a user would)."""
    for loop_id in reversed(_open_loops(browser)):
        if loop_id in _open_loops(browser):
            _click_loop(browser, loop_id)
    for loop_id in open_ids:
        _click_loop(browser, loop_id)
    assert sorted(_open_loops(browser)) == sorted(open_ids)


def test_a_large_page_opens_every_loop_on_a_click_and_closes_them_on_the_next(browser, tmp_path_factory):
    """A picture over LARGE_PICTURE_ITEMS keeps all closed and all open only: a click on any
    loop goes to the nearest state that opens it, another click to one that closes it."""
    from benchmarks.drawing import stacked_rnn_gradient

    path = Path(ss.draw(stacked_rnn_gradient(), tmp_path_factory.mktemp("large") / "large.html"))
    browser.get(path.as_uri())
    _wait(browser, "return document.getElementById('ss-graph').dataset.ready === 'true'")
    data = json.loads(browser.execute_script("return document.getElementById('ss-data').textContent"))
    assert _open_loops(browser) == [] and len(data["states"]) == 2
    first = sorted(data["loops"])[0]
    _click_loop(browser, first)
    _wait(browser, "return JSON.parse(document.getElementById('ss-graph').dataset.open).length > 0")
    assert sorted(_open_loops(browser)) == sorted(data["loops"])
    _click_loop(browser, first)
    _wait(browser, "return JSON.parse(document.getElementById('ss-graph').dataset.open).length === 0")
    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not severe, severe
