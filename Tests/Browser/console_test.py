#!/usr/bin/env python3
"""Drives PushRelay's admin console in headless Chromium (Selenium + chromedriver) against a live server.

Run by ConsoleBrowserTests (Tests/PushRelayServerTests/Admin/ConsoleBrowserTests.swift), which starts the server, makes
the traffic and writes the expectations file. By hand:

    python3 Tests/Browser/console_test.py --url http://127.0.0.1:8080/admin/ --token ADMIN_TOKEN \
        --expect expect.json --screenshots docs

Exit status 0: every check passed; 1: a check failed (the reasons are printed); 2: Selenium, Chromium or chromedriver
is missing (the reason is printed).

The expectations file (JSON):
    today                 "YYYY-MM-DD", the server's UTC day
    days                  {"YYYY-MM-DD": {"accepted": n, "rejectedByQuota": n, "failed": n}, ...}
    hours                 {"H": {"accepted": n, "failed": n}, ...}    (hours not listed must be 0)
    providers             [{"provider": p, "outcome": o, "count": n}, ...]  (today's delivery-log rows)
    quotas                [{"target": t, "used": n, "maximum": n}, ...], busiest first
    search                a substring that matches some quota tokens; searchMatches: how many
    override              {"target": t, "limit": n}: set through the page, then read back through the API
    deadTokens            [t, ...]
    latency               {"provider": deliveries since the server started}: the latency table's rows
"""

import argparse
import json
import shutil
import sys
import time
import urllib.request

try:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException, WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError as error:  # pragma: no cover - reported to the Swift test as "missing"
    print(f"MISSING: Selenium is not installed ({error}); pip install selenium", file=sys.stderr)
    sys.exit(2)


failures = []


def check(condition, message):
    if condition:
        print(f"  ok    {message}")
    else:
        print(f"  FAIL  {message}")
        failures.append(message)
    return condition


def find_binary(names):
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def start_browser():
    chromium = find_binary(["chromium", "chromium-browser", "google-chrome", "chrome"])
    driver_path = find_binary(["chromedriver"])
    if not chromium or not driver_path:
        print("MISSING: chromium and chromedriver are needed (Debian: apt-get install chromium chromium-driver)", file=sys.stderr)
        sys.exit(2)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
                "--hide-scrollbars", "--force-device-scale-factor=1", "--lang=en-US", "--no-first-run",
                "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-default-apps", "--disable-features=Translate,OptimizationHints"]:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        return webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    except WebDriverException as error:
        print(f"MISSING: could not start headless Chromium: {error.msg}", file=sys.stderr)
        sys.exit(2)


class Console:
    def __init__(self, driver, url, token):
        self.driver = driver
        self.url = url
        self.token = token
        self.severe = []

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def wait(self, predicate, what, timeout=15):
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(lambda d: predicate())
        except TimeoutException:
            check(False, f"timed out waiting for {what}")
            raise

    def logs(self, allowed=()):
        """Reads (and empties) the browser console; SEVERE entries fail the run unless they contain an allowed text."""
        for entry in self.driver.get_log("browser"):
            if entry.get("level") != "SEVERE":
                continue
            text = entry.get("message", "")
            if any(a in text for a in allowed):
                print(f"  note  expected console error: {text}")
                continue
            self.severe.append(text)
            check(False, f"no browser console error (got: {text})")

    def visible(self, element_id):
        return self.js("const e = document.getElementById(arguments[0]); return !!e && !e.hidden && e.offsetParent !== null;", element_id)

    def login(self, token):
        field = self.driver.find_element(By.ID, "token")
        field.clear()
        field.send_keys(token)
        self.driver.find_element(By.ID, "login-button").click()

    def view(self, name):
        self.js("document.body.dataset.loaded = '';")
        self.driver.find_element(By.CSS_SELECTOR, f'#nav a[data-view="{name}"]').click()
        self.wait(lambda: self.js("return document.body.dataset.loaded") == name, f"the {name} view to load")

    def attr(self, selector, name):
        # In one script: the page re-renders rows, so an element found in one call may be gone in the next.
        return self.js("const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;", selector, name)

    def screenshot(self, path):
        # The whole page: the window as tall as the document.
        width = self.js("return window.innerWidth")
        height = self.js("return Math.ceil(document.documentElement.scrollHeight)")
        self.driver.set_window_size(1280, max(600, height + 20))
        time.sleep(0.2)
        self.driver.save_screenshot(path)
        self.driver.set_window_size(1280, 900)
        print(f"  saved {path} ({width}x{height})")

    def no_data_shown(self, context):
        shown = self.js(
            """return {
                app: !document.getElementById('app').hidden,
                nav: !document.getElementById('nav').hidden,
                svgs: document.querySelectorAll('#app svg').length,
                rows: document.querySelectorAll('#app tbody tr').length,
                cards: document.querySelectorAll('#app .card').length,
                login: !document.getElementById('login').hidden,
                stored: sessionStorage.length,
            };"""
        )
        check(shown["login"], f"{context}: the login form is shown")
        check(not shown["app"] and not shown["nav"], f"{context}: the console is hidden")
        check(shown["svgs"] == 0 and shown["rows"] == 0 and shown["cards"] == 0, f"{context}: no chart, card or row is in the page ({shown})")
        check(shown["stored"] == 0, f"{context}: nothing is kept in sessionStorage")


def api(base, token, path):
    request = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def no_horizontal_overflow(console, what):
    sizes = console.js("return [document.documentElement.scrollWidth, document.documentElement.clientWidth, window.innerWidth];")
    check(sizes[0] <= sizes[1], f"phone width: {what} has no horizontal overflow (scrollWidth {sizes[0]}, clientWidth {sizes[1]})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True, help="the console, e.g. http://127.0.0.1:8080/admin/")
    parser.add_argument("--token", required=True)
    parser.add_argument("--expect", required=True)
    parser.add_argument("--screenshots", help="a directory for console-*.png")
    args = parser.parse_args()
    expect = json.load(open(args.expect))
    base = args.url.split("/admin/")[0] + "/admin/"
    today = expect["today"]

    driver = start_browser()
    console = Console(driver, args.url, args.token)
    try:
        print("without a token")
        driver.get(args.url)
        console.wait(lambda: console.visible("login"), "the login form")
        console.no_data_shown("before signing in")
        check(console.js("return document.querySelectorAll('script:not([src])').length") == 0, "the page has no inline script")
        # The console's own URL must not carry anything but the page.
        check(args.token not in driver.page_source, "the page source does not contain the admin token")
        console.logs()

        print("a wrong token")
        console.login("not-the-admin-token")
        console.wait(lambda: console.js("return document.getElementById('login-message').textContent") != "", "the login message")
        message = console.js("return document.getElementById('login-message').textContent")
        check("wrong" in message.lower(), f"a wrong token is refused with a clear message ({message!r})")
        console.no_data_shown("after a wrong token")
        # The refused request is the one expected console entry (Chromium logs every 401 answer).
        console.logs(allowed=["401"])

        print("signing in")
        console.login(args.token)
        console.wait(lambda: console.js("return document.body.dataset.loaded") == "overview", "the overview")
        check(console.js("return sessionStorage.getItem('pushrelay.adminToken')") == args.token, "the token is kept in sessionStorage")
        check(console.js("return document.cookie") == "", "no cookie is set")
        check(args.token not in driver.current_url, "the token is not in the URL")
        check(console.js("return document.getElementById('token').value") == "", "the password field is emptied")

        print("overview charts")
        for day, figures in expect["days"].items():
            for series in ("accepted", "rejectedByQuota", "failed"):
                value = console.attr(f'#svg-days rect[data-series="{series}"][data-key="{day}"]', "data-value")
                check(value is not None and int(value) == figures[series], f"30-day chart: {day} {series} = {figures[series]} (drawn: {value})")
        bars = len(driver.find_elements(By.CSS_SELECTOR, "#svg-days g[data-key]"))
        check(bars == 30, f"30-day chart has 30 bars ({bars})")
        for hour in range(24):
            figures = expect["hours"].get(str(hour), {"accepted": 0, "failed": 0})
            for series in ("accepted", "failed"):
                value = console.attr(f'#svg-hours rect[data-series="{series}"][data-key="{hour}"]', "data-value")
                if figures[series] or (value and int(value)):
                    check(value is not None and int(value) == figures[series], f"hour chart: {hour:02d}h {series} = {figures[series]} (drawn: {value})")
        for row in expect["providers"]:
            value = console.attr(f'#svg-providers g[data-provider="{row["provider"]}"][data-outcome="{row["outcome"]}"]', "data-value")
            check(value is not None and int(value) == row["count"], f'provider chart: {row["provider"]} {row["outcome"]} = {row["count"]} (drawn: {value})')
        drawn_rows = len(driver.find_elements(By.CSS_SELECTOR, "#svg-providers g[data-provider]"))
        check(drawn_rows == len(expect["providers"]), f"provider chart has {len(expect['providers'])} rows ({drawn_rows})")
        totals = expect["days"][today]
        for key in ("accepted", "rejectedByQuota", "failed"):
            text = console.js(f"const c = document.querySelector('[data-card=\"{key}\"] .value'); return c ? c.textContent : null;")
            check(text is not None and int(text.replace(",", "")) == totals[key], f"card {key} shows {totals[key]} ({text})")
        latency = console.js("return Object.fromEntries([...document.querySelectorAll('#latency-table tbody tr[data-provider]')].map(r => [r.dataset.provider, +r.dataset.count]))")
        check(latency == expect["latency"], f"the latency table counts every delivery per provider ({latency}, expected {expect['latency']})")
        heights = console.js("return [...document.querySelectorAll('#svg-days rect[data-value]')].filter(r => +r.getAttribute('data-value') > 0 && +r.getAttribute('height') > 0).length")
        check(heights > 0, f"the day chart's bars have height ({heights} non-empty)")
        console.logs()
        if args.screenshots:
            console.screenshot(f"{args.screenshots}/console-overview.png")

        print("quotas")
        console.view("quotas")
        rows = console.js("return [...document.querySelectorAll('#quota-table tbody tr[data-token]')].map(r => [r.dataset.token, +r.dataset.used, +r.dataset.maximum, r.querySelector('td.token span').textContent])")
        listed = {r[0]: r for r in rows}
        for q in expect["quotas"]:
            row = listed.get(q["target"])
            check(row is not None, f"quota table lists {q['target']}")
            if row:
                check(row[1] == q["used"] and row[2] == q["maximum"], f"{q['target']}: used {q['used']} of {q['maximum']} (shown {row[1]} of {row[2]})")
                check(q["target"] not in row[3] and "…" in row[3], f"{q['target']} is shown shortened ({row[3]})")
        check(bool(rows) and rows[0][0] == expect["quotas"][0]["target"], f"the busiest token is first ({rows[0][0] if rows else None})")
        check(len(rows) == len(expect["quotas"]), f"the table has {len(expect['quotas'])} rows ({len(rows)})")

        search = driver.find_element(By.ID, "quota-search")
        search.send_keys(expect["search"])
        matched = console.js("return document.querySelectorAll('#quota-table tbody tr[data-token]').length")
        check(matched == expect["searchMatches"], f"searching {expect['search']!r} leaves {expect['searchMatches']} rows ({matched})")
        search.clear()
        console.js("document.getElementById('quota-search').dispatchEvent(new Event('input'))")

        console.js("document.getElementById('quota-sort').value = 'token'; document.getElementById('quota-sort').dispatchEvent(new Event('change'))")
        ordered = console.js("return [...document.querySelectorAll('#quota-table tbody tr[data-token]')].map(r => r.dataset.token)")
        check(ordered == sorted(ordered), "sorting by token orders the rows")
        console.js("document.getElementById('quota-sort').value = 'used'; document.getElementById('quota-sort').dispatchEvent(new Event('change'))")

        target, limit = expect["override"]["target"], expect["override"]["limit"]
        row_selector = f'#quota-table tbody tr[data-token="{target}"]'
        # Cancelled: nothing changes.
        driver.find_element(By.CSS_SELECTOR, row_selector + ' button[data-action="set-limit"]').click()
        console.wait(lambda: console.js("return document.getElementById('confirm-dialog').open"), "the confirm dialog")
        driver.find_element(By.ID, "confirm-cancel").click()
        console.wait(lambda: not console.js("return document.getElementById('confirm-dialog').open"), "the dialog to close")
        check(api(base, args.token, "v1/quotas/" + urllib.request.quote(target, safe=""))["limitOverride"] is None, "a cancelled change changes nothing")
        # Confirmed.
        driver.find_element(By.CSS_SELECTOR, row_selector + ' button[data-action="set-limit"]').click()
        console.wait(lambda: console.js("return document.getElementById('confirm-dialog').open"), "the confirm dialog")
        field = driver.find_element(By.ID, "confirm-limit")
        field.clear()
        field.send_keys(str(limit))
        driver.find_element(By.ID, "confirm-ok").click()
        console.wait(lambda: console.attr(row_selector, "data-override") == str(limit), "the row to show the new override")
        check(console.attr(row_selector, "data-maximum") == str(limit), f"the row's maximum is now {limit}")
        status = console.js("return document.getElementById('status').textContent")
        check("set to" in status, f"the change is reported ({status!r})")
        seen = api(base, args.token, "v1/quotas/" + urllib.request.quote(target, safe=""))
        check(seen["limitOverride"] == limit, f"the admin API sees the override {limit} ({seen['limitOverride']})")
        console.logs()
        if args.screenshots:
            console.screenshot(f"{args.screenshots}/console-quotas.png")

        print("dead tokens")
        console.view("dead-tokens")
        dead = console.js("return [...document.querySelectorAll('#dead-table tbody tr[data-token]')].map(r => r.dataset.token)")
        for token in expect["deadTokens"]:
            check(token in dead, f"dead tokens list {token}")
        check(len(dead) == len(expect["deadTokens"]), f"{len(expect['deadTokens'])} dead tokens listed ({len(dead)})")
        console.logs()
        if args.screenshots:
            console.screenshot(f"{args.screenshots}/console-dead-tokens.png")

        print("matrix queue")
        console.view("matrix")
        queued = console.js("const c = document.querySelector('[data-card=\"queued\"] .value'); return c ? c.textContent : null;")
        check(queued == str(expect.get("matrixQueued", 0)), f"the Matrix queue shows {expect.get('matrixQueued', 0)} ({queued})")
        console.logs()

        print("providers")
        console.view("providers")
        rows = console.js("return [...document.querySelectorAll('#providers-table tbody tr')].map(r => [r.dataset.subject, r.dataset.passed])")
        report = api(base, args.token, "v1/setup")
        check(len(rows) == len(report["checks"]) and len(rows) > 0, f"the page lists the {len(report['checks'])} checks of the admin API ({len(rows)})")
        check(["storage", "true"] in rows, f"the storage check passed ({rows})")
        check(any(s.startswith("providers.") for s, _ in rows), f"the providers are checked ({rows})")
        for check_row in report["checks"]:
            if not check_row["passed"]:
                check(bool(check_row.get("remedy")), f"a failed check says what to do ({check_row})")
        console.logs()
        if args.screenshots:
            console.screenshot(f"{args.screenshots}/console-providers.png")

        print("phone width (390x844)")
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        for name in ("overview", "quotas", "dead-tokens", "matrix", "providers"):
            console.view(name)
            no_horizontal_overflow(console, name)
        console.view("overview")
        if args.screenshots:
            driver.save_screenshot(f"{args.screenshots}/console-phone.png")
            print(f"  saved {args.screenshots}/console-phone.png")
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        console.logs()

        print("signing out")
        driver.find_element(By.ID, "sign-out").click()
        console.wait(lambda: console.visible("login"), "the login form")
        console.no_data_shown("after signing out")
        driver.get(args.url)
        console.wait(lambda: console.visible("login"), "the login form after a reload")
        console.no_data_shown("after signing out and reloading")
        console.logs()
    except TimeoutException:
        pass
    except Exception as error:  # a broken page, not a missing browser
        check(False, f"unexpected {type(error).__name__}: {error}")
    finally:
        try:
            console.logs()
        except Exception:
            pass
        driver.quit()

    if failures:
        print(f"{len(failures)} check(s) failed:")
        for f in failures:
            print(f"  - {f}")
        sys.exit(1)
    print("all console checks passed")


if __name__ == "__main__":
    main()
