#!/usr/bin/python3
"""System test: the RUM tag in a real browser (issue 43, docs/rum.md).

Headless Chromium (Debian `chromium` + `chromium-driver`, through
`python3-selenium`) loads a page that embeds the tag from a real `gtmesh
decider`'s --http listener, as a site would:

  1. the page is served from its own origin (127.0.0.1:PAGE); the two
     endpoints of the profile `web` are HTTP servers in network namespaces
     the test creates (tests/system/dns_lib/netns_endpoint.py: each at its
     own address behind a veth pair, which is what `eu` and `us` answer)
     serving the tag's object with CORS and Timing-Allow-Origin, one of them
     150 ms late;
  2. each page view makes the tag ask the decider what to measure, fetch both
     objects and send one beacon (navigator.sendBeacon): two measurements
     stored per view;
  3. after enough views the answers for the browser's own network
     (127.0.0.0/24: the browser and dig share the address) move to the fast
     endpoint within the aggregation window;
  4. the delays swap; more views move the answers to the other endpoint;
  5. the decider's console shows the networks × endpoints table for that
     network, the fast endpoint's p50 below the slow one's.
"""

import http.server
import os
import re
import shutil
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "dns_lib"))
from gtmesh_dns import Checks  # noqa: E402
from cluster_helpers import wait_for  # noqa: E402
from rum_test import KEY, Decider, answer, metrics  # noqa: E402
import netns_endpoint  # noqa: E402

NETWORK = "127.0.0.0/24"
SLOW_S = 0.15

class Page:
    """A site's page on its own origin (127.0.0.1, a free port): `body(path)`
    gives the HTML of a path, None for 404."""

    def __init__(self, body):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                html = body(self.path)
                data = (html or "not found").encode()
                self.send_response(200 if html is not None else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def tag_page(tag):
    """The shop's page embedding the tag from tag["src"] (set once the
    decider is up: the page's origin goes into its config first)."""
    return lambda path: (('<!doctype html><html><head><title>shop</title></head><body><p>shop</p>'
                          '<script async src="%s" data-app="shop" data-key="%s"></script></body></html>')
                         % (tag["src"], KEY) if path.split("?")[0] == "/" else None)


def browser_or_skip(extra_tools=()):
    """(webdriver, Service) of python3-selenium, or None after saying why
    the test is skipped (chromium, chromedriver, `extra_tools`, root for the
    namespaces)."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        print("skip: python3-selenium missing (tools/setup.sh installs it)")
        return None
    for tool in ("chromium", "chromedriver") + tuple(extra_tools):
        if not shutil.which(tool):
            print("skip: %s missing (tools/setup.sh installs it)" % tool)
            return None
    if not netns_endpoint.available():
        print("skip: the endpoints run in network namespaces: run as root")
        return None
    return webdriver, Service


def start_chromium(webdriver, Service, extra=(), env=None):
    """Headless Chromium through chromedriver, pages timed out after 30 s."""
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1400,1000", "--no-first-run", "--disable-extensions", *extra):
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver"), env=env), options=opts)
    driver.set_page_load_timeout(30)
    return driver


def config(origins, eu, us, half_life="20s"):
    """The decider's config: `www` steered by RUM over eu and us, the app
    `shop` allowed from `origins` and measuring both endpoints."""
    return f"""
datacenters:
  - {{name: fra, location: {{lat: 50.1, lon: 8.7}}}}
  - {{name: iad, location: {{lat: 38.9, lon: -77.4}}}}
zones:
  - name: example.com
    soa: {{primary: ns1.example.com., admin: hostmaster.example.com.}}
    ns: [ns1.example.com.]
    records:
      - {{name: www, type: A, ttl: 5, profile: web}}
profiles:
  - name: web
    method: performance
    source: rum
    rum: {{min_samples: 5, keep_within: 10%, availability_threshold: 90%}}
    endpoints:
      - {{name: eu, kind: external, target: {eu.address}, location: fra}}
      - {{name: us, kind: external, target: {us.address}, location: iad}}
rum:
  window: 1s
  half_life: {half_life}
  max_age: 10m
  apps:
    - name: shop
      keys: ["{KEY}"]
      origins: [{", ".join('"%s"' % o for o in origins)}]
      measure:
        - {{job: web/eu, url: "{eu.url}"}}
        - {{job: web/us, url: "{us.url}"}}
"""


def main():
    browser = browser_or_skip()
    if not browser:
        return 77
    checks = Checks("rum_browser")
    work = tempfile.mkdtemp(prefix="gtmesh-rum-browser-")
    eu = netns_endpoint.NetnsEndpoint("eu")
    endpoints = {eu.address: eu}
    d, driver, page = None, None, None
    try:
        us = netns_endpoint.NetnsEndpoint("us")
        endpoints[us.address] = us
        tag = {"src": ""}
        page = Page(tag_page(tag))
        cfg = os.path.join(work, "rum.yaml")
        open(cfg, "w").write(config([page.origin], eu, us))
        d = Decider(work, cfg)
        d.start()
        tag["src"] = d.http.base + "/rum.js"
        driver = start_chromium(*browser)
        run(checks, d, page, endpoints, eu.address, us.address, driver)
    finally:
        if driver:
            driver.quit()
        for e in endpoints.values():
            e.stop()
        if page:
            page.stop()
        if d:
            d.stop()
        if checks.failed and d:
            print("--- decider log (tail) ---\n" + open(d.log_path).read()[-4000:], flush=True)
        shutil.rmtree(work, ignore_errors=True)
    checks.finish()


def accepted(d):
    return metrics(d.http).get("gtmesh_rum_beacons_accepted_total", 0.0)


def views(checks, d, page, driver, count, what):
    """`count` page views, each waited for until its two measurements are
    stored (one beacon: both endpoints)."""
    for i in range(count):
        before = accepted(d)
        driver.get(page.origin + "/?view=%d" % i)
        if not wait_for(lambda: accepted(d) >= before + 2, 10, 0.05):
            checks.check(False, "%s: page view %d sent its beacon (2 measurements stored)" % (what, i),
                         "accepted %s -> %s" % (before, accepted(d)))
            return False
    checks.check(True, "%s: %d page views, each beaconing both endpoints" % (what, count))
    return True


def console_cells(driver):
    """The console's RUM table row for NETWORK: {endpoint: cell text}."""
    return driver.execute_script(
        "const r = document.querySelector('#rum tbody tr[data-network=\"' + arguments[0] + '\"]');"
        "if (!r) return null; const o = {};"
        "for (const td of r.querySelectorAll('td[data-endpoint]')) o[td.dataset.endpoint] = td.textContent;"
        "return o;", NETWORK)


def p50(text):
    m = re.match(r"(\d+) ms", text or "")
    return int(m.group(1)) if m else None


def run(checks, d, page, endpoints, EU, US, driver):
    dns = d.dns
    before = answer(dns)
    if not checks.check(len(before) == 1 and before[0] in (EU, US), "without beacons the agents' chain answers",
                        str(before)):
        return
    # The endpoint answered now is made the slow one: the answers must move.
    slow, fast = before[0], (US if before[0] == EU else EU)
    endpoints[slow].set(delay=SLOW_S)
    hits = {a: e.hits() for a, e in endpoints.items()}
    if not views(checks, d, page, driver, 8, "%s slow" % slow):
        return
    checks.check(all(endpoints[a].hits() >= hits[a] + 8 for a in endpoints),
                 "the browser fetched each endpoint's object once per view, in its namespace",
                 str({a: e.hits() - hits[a] for a, e in endpoints.items()}))
    t0 = time.monotonic()
    moved = wait_for(lambda: answer(dns) == [fast], 10)
    checks.check(moved, "answers for the browser's network %s move to the fast endpoint %s (%.1f s, window 1 s)"
                 % (NETWORK, fast, time.monotonic() - t0), str(answer(dns)))

    # The console shows what the browser measured.
    driver.get(d.http.base + "/")
    cells = wait_for(lambda: (lambda c: c if c and all(p50(v) is not None for v in c.values()) and len(c) == 2
                              else None)(console_cells(driver)), 15)
    name = {EU: "web/eu", US: "web/us"}
    checks.check(cells and p50(cells[name[fast]]) < p50(cells[name[slow]]) and p50(cells[name[slow]]) >= 100 and
                 all(" 100 % " in v for v in cells.values()),
                 "the console's networks x endpoints table shows %s: the fast endpoint's p50 below the slow "
                 "one's (>= 100 ms), both 100 %% available" % NETWORK, str(cells))

    # The delays swap: the answers follow.
    endpoints[slow].set(delay=0.0)
    endpoints[fast].set(delay=SLOW_S)
    if not views(checks, d, page, driver, 16, "%s slow" % fast):
        return
    t0 = time.monotonic()
    back = wait_for(lambda: answer(dns) == [slow], 15)
    checks.check(back, "after the delays swap, the answers move to %s (%.1f s)" % (slow, time.monotonic() - t0),
                 str(answer(dns)))


if __name__ == "__main__":
    sys.exit(main())
