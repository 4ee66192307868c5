#!/usr/bin/python3
"""System test: Network Error Logging sent by a real browser (issue 43,
docs/rum.md "NEL").

Headless Chromium (Debian `chromium` + `chromium-driver`, through
`python3-selenium`) and a real `gtmesh decider`:

  1. the endpoints are servers in network namespaces the test creates
     (tests/system/dns_lib/netns_endpoint.py); `eu` speaks HTTPS (its
     certificate signed by a CA the test makes and puts in the browser's NSS
     database, $HOME/.pki/nssdb: no --ignore-certificate-errors) and its
     responses carry `Report-To` naming the decider's /api/v1/rum/nel and
     `NEL` with failure_fraction 1; `us` is plain HTTP; the decider's
     --http listener, the collector, speaks HTTPS with a certificate for
     127.0.0.1 from the same CA (--http-cert, --http-key): browsers send
     reports to secure endpoints only;
  2. beacons posted by the test make `eu` the answer for the browser's
     network (127.0.0.0/24, asked by dig from the same address without ECS);
  3. a page with an image from `eu` loads once while `eu` works (the browser
     takes the NEL policy), then `eu` closes every connection without an
     answer and the page loads again: the browser itself POSTs NEL reports
     to the decider (counted in gtmesh_rum_nel_reports_total, mapped to
     `eu` by server_ip: nothing refused), no beacon is sent in between, and
     the failures move the network's answers to `us`.

Nothing but the browser posts a NEL report in this test.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "dns_lib"))
from gtmesh_dns import Checks  # noqa: E402
from cluster_helpers import wait_for  # noqa: E402
from rum_test import KEY, Decider, answer, beacons, metrics, refused  # noqa: E402
from rum_browser_test import Page, browser_or_skip, config, start_chromium  # noqa: E402
import netns_endpoint  # noqa: E402

NETWORK = "127.0.0.0/24"


def run_tool(argv):
    return subprocess.run(argv, check=True, capture_output=True, timeout=30).stdout


def make_ca(work):
    """A test CA, and a browser home whose NSS database trusts it for TLS
    servers ($HOME/.pki/nssdb, as Chromium on Linux reads it): no
    --ignore-certificate-errors, so the browser treats eu as any site with a
    valid certificate (a connection with certificate errors gets no NEL
    policy)."""
    ca_key, ca = os.path.join(work, "ca.key"), os.path.join(work, "ca.pem")
    run_tool(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
              "-keyout", ca_key, "-out", ca, "-days", "2", "-subj", "/CN=gtmesh rum_nel_browser test CA",
              "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
    home = os.path.join(work, "home")
    nssdb = os.path.join(home, ".pki", "nssdb")
    os.makedirs(nssdb)
    run_tool(["certutil", "-N", "-d", "sql:" + nssdb, "--empty-password"])
    run_tool(["certutil", "-A", "-d", "sql:" + nssdb, "-n", "gtmesh-test-ca", "-t", "C,,", "-i", ca])
    return (ca, ca_key), home


def image_page(image_url):
    """A page with one image from `eu` and nothing else (no tag: only the
    browser's own NEL reports can reach the decider)."""
    return lambda path: ('<!doctype html><html><head><title>img</title></head><body>'
                         '<img id="i" src="%s?%s"></body></html>' % (image_url, path))


def main():
    browser = browser_or_skip(extra_tools=("certutil",))
    if not browser:
        return 77
    checks = Checks("rum_nel_browser")
    work = tempfile.mkdtemp(prefix="gtmesh-rum-nel-")
    ca, home = make_ca(work)
    eu = netns_endpoint.NetnsEndpoint("eu", ca=ca)
    endpoints = [eu]
    d, driver, page = None, None, None
    try:
        us = netns_endpoint.NetnsEndpoint("us")
        endpoints.append(us)
        page = Page(image_page(eu.url))
        cfg = os.path.join(work, "rum.yaml")
        # The report upload's preflight comes from the reporting origin: eu's.
        open(cfg, "w").write(config([page.origin, eu.origin], eu, us, half_life="10m"))
        # The collector: the decider's --http listener over HTTPS with a
        # certificate for 127.0.0.1 from the same CA (--http-cert): a browser
        # sends reports only to a secure endpoint.
        web_cert, web_key = netns_endpoint.issue_certificate(work, "decider", "IP:127.0.0.1", ca)
        d = Decider(work, cfg, extra=["--http-cert", web_cert, "--http-key", web_key], https_ca=ca[0])
        d.start()
        report_to = d.http.base + "/api/v1/rum/nel?app=shop&key=" + KEY
        eu.set(headers={
            "Report-To": '{"group":"gtmesh","max_age":3600,"endpoints":[{"url":"%s"}]}' % report_to,
            "NEL": '{"report_to":"gtmesh","max_age":3600,"success_fraction":0,"failure_fraction":1.0}'})
        driver = start_chromium(*browser, extra=("--short-reporting-delay",
                                                 "--user-data-dir=" + os.path.join(work, "chrome")),
                                env=dict(os.environ, HOME=home))
        run(checks, d, page, eu, us, driver)
    finally:
        if driver:
            driver.quit()
        for e in endpoints:
            e.stop()
        if page:
            page.stop()
        if d:
            d.stop()
        if checks.failed and d:
            print("--- decider log (tail) ---\n" + open(d.log_path).read()[-4000:], flush=True)
        shutil.rmtree(work, ignore_errors=True)
    checks.finish()


def image_loaded(driver):
    return driver.execute_script("const i = document.getElementById('i'); return i.complete && i.naturalWidth > 0;")


def run(checks, d, page, eu, us, driver):
    dns, http = d.dns, d.http
    # 2. eu is what this network's users measured fastest (the sender's
    # network: the beacons carry no address).
    samples = [("web/eu", None, 20, None) for _ in range(20)] + [("web/us", None, 90, None) for _ in range(20)]
    status, body, _ = http.post("/api/v1/rum/beacons", beacons(samples))
    if not checks.check(status == 200 and wait_for(lambda: answer(dns) == [eu.address], 10),
                        "beacons make eu the answer for %s" % NETWORK, f"{status} {body} {answer(dns)}"):
        return
    accepted = metrics(http).get("gtmesh_rum_beacons_accepted_total", 0.0)
    unknown = refused(http, "unknown_job")

    # 3. The browser takes eu's NEL policy from a good response...
    driver.get(page.origin + "/good")
    checks.check(wait_for(lambda: image_loaded(driver), 10) and eu.hits() >= 1,
                 "the browser loads eu's image over HTTPS from its namespace (the NEL policy comes with it)",
                 f"hits {eu.hits()}")
    checks.equal(metrics(http).get("gtmesh_rum_nel_reports_total", 0.0), 0.0,
                 "no NEL report while eu works (success_fraction 0)")
    # ...then eu fails: the browser reports each failed load itself.
    eu.set(failing=True)
    hits = eu.hits()
    for i in range(6):
        driver.get(page.origin + "/failing-%d" % i)
    checks.check(eu.hits() > hits, "the browser asked eu again and got no answer", f"hits {eu.hits() - hits}")
    t0 = time.monotonic()
    got = wait_for(lambda: metrics(http).get("gtmesh_rum_nel_reports_total", 0.0) >= 1, 20)
    m = metrics(http)
    checks.check(got, "Chromium POSTs NEL reports to the decider itself (%.0f in %.1f s)"
                 % (m.get("gtmesh_rum_nel_reports_total", 0.0), time.monotonic() - t0), str(m))
    checks.equal(refused(http, "unknown_job"), unknown, "every report's server_ip maps to an endpoint (eu)")
    checks.check(m.get("gtmesh_rum_beacons_accepted_total", 0.0) > accepted,
                 "the reports are stored as failures of eu (accepted grew; no beacon was sent)", str(m))
    t0 = time.monotonic()
    checks.check(wait_for(lambda: answer(dns) == [us.address], 15),
                 "the browser's reports drop eu under the availability threshold: %s moves to us (%.1f s)"
                 % (NETWORK, time.monotonic() - t0), str(answer(dns)))


if __name__ == "__main__":
    sys.exit(main())
