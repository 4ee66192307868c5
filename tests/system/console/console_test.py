#!/usr/bin/env python3
"""The console (docs/console.md) in a real browser: headless Chromium driven
by Selenium against `gtmesh demo`.

  1. the page loads from the demo's --http listener with no console errors
     and fetches nothing from outside the listener (air-gapped);
  2. it shows the three DCs up, with their metrics and agents;
  3. after `touch DIR/down-fra` it shows fra down within seconds, by itself
     (polling), and the health timeline records the fall;
  4. the explain view shows the decision trace of www.demo.example: the
     question, every candidate DC and the answer;
  5. the drain button drains a DC through the Raft log (and undrain brings
     it back); a POST without the console's header is refused;
  6. the last `gtmeshctl push --dry-run` shows with the answers it would
     change.
Screenshots go to $GTMESH_ARTIFACTS (build/test-artifacts); with
GTMESH_UPDATE_SCREENSHOT=1 the healthy one also replaces docs/console.png.
"""
import json
import re
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

SRC = os.environ.get("GTMESH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(SRC, "build", "tools", "gtmesh"))
ARTIFACTS = os.environ.get("GTMESH_ARTIFACTS", os.path.join(SRC, "build", "test-artifacts"))
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def wait_for(fn, seconds, step=0.2):
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        try:
            last = fn()
        except Exception as e:  # the page is still rendering
            last = None
        if last:
            return last
        time.sleep(step)
    return last


def main():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
    except ImportError:
        print("skip: python3-selenium missing (tools/setup.sh installs it)")
        return 77
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        print("skip: chromium / chromium-driver missing (tools/setup.sh installs them)")
        return 77
    work = tempfile.mkdtemp(prefix="gtmesh-console-")
    os.makedirs(ARTIFACTS, exist_ok=True)
    ports = os.path.join(work, "ports")
    data = os.path.join(work, "demo")
    demo = subprocess.Popen([GTMESH, "demo", "--dns-port", "0", "--mesh-port", "0", "--http", "127.0.0.1:0",
                             "--data-dir", data, "--port-file", ports],
                            stdout=open(os.path.join(work, "demo.out"), "w"), stderr=subprocess.STDOUT)
    driver = None
    try:
        if not check(wait_for(lambda: os.path.exists(ports), 30), "the demo starts"):
            return 1
        info = dict(line.split() for line in open(ports))
        url = "http://%s/" % info["http"]
        out = open(os.path.join(work, "demo.out")).read()
        check(url in out, "the demo prints the console URL")

        opts = webdriver.ChromeOptions()
        opts.binary_location = shutil.which("chromium")
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--window-size=1400,1000", "--no-first-run", "--disable-extensions"):
            opts.add_argument(a)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
        driver.set_page_load_timeout(30)
        driver.get(url)

        # Read and click inside the page's own JS turn: the table is rebuilt
        # every 2 s, so element handles kept across calls go stale.
        def states():
            return driver.execute_script(
                "const o = {}; for (const r of document.querySelectorAll('#dcs > tbody > tr'))"
                "  o[r.dataset.dc] = r.querySelector('td.state').textContent; return o;")

        def click_action(dc):
            driver.execute_script("document.querySelector('#dcs tbody tr[data-dc=\"%s\"] button.action').click()" % dc)

        got = wait_for(lambda: states() if states() == {"fra": "up", "iad": "up", "sin": "up"} else None, 30)
        check(got, "the page shows three DCs up: %s" % states())
        check("healthyBackends" in driver.find_element(By.ID, "dcs").text, "with their metrics")

        # Traffic over the last minute (/api/traffic): 12 answers of www, by DC.
        host, port = info["dns"].rsplit(":", 1)
        for _ in range(12):
            subprocess.run(["dig", "@" + host, "-p", port, "+short", "+time=2", "+tries=1", "www.demo.example", "A"],
                           capture_output=True, timeout=10)

        def traffic():
            return driver.execute_script(
                "const o = {}; for (const id of ['traffic-top', 'traffic-dcs', 'traffic-rcodes'])"
                "  for (const r of document.querySelectorAll('#' + id + ' > tbody > tr'))"
                "    if (r.cells.length === 2) o[id + ' ' + r.cells[0].textContent] = +r.cells[1].textContent;"
                "  return o;")
        t = wait_for(lambda: traffic() if traffic().get("traffic-top www.demo.example. A", 0) >= 12 else None, 20)
        check(t and t.get("traffic-dcs fra", 0) >= 12 and t.get("traffic-rcodes NOERROR", 0) >= 12,
              "the traffic panel counts the 12 answers of www, fra's and NOERROR: %s" % traffic())

        # Each DC's metrics are a table of value with its unit and age.
        def metric_rows(dc):
            return driver.execute_script(
                "const o = {}; for (const r of document.querySelectorAll("
                "  '#dcs tbody tr[data-dc=\"' + arguments[0] + '\"] table.metrics tbody tr'))"
                "  o[r.dataset.metric] = [r.cells[1].textContent, r.cells[2].textContent, r.className];"
                " return o;", dc)
        import re
        rows = wait_for(lambda: metric_rows("fra") if "cpu" in metric_rows("fra") else None, 20) or {}
        number = r"-?[0-9]+(\.[0-9]+)?"
        check(re.fullmatch(number + " %", rows.get("cpu", ["?"])[0]) and
              re.fullmatch(number + " %", rows.get("mem", ["?"])[0]) and
              re.fullmatch(number + " Mbit/s", rows.get("bw", ["?"])[0]) and
              rows.get("status", ["?"])[0] == "up" and rows.get("web/healthyBackends", ["?"])[0] == "2 backends" and
              all(re.fullmatch(number + " (ms|s|min)", v[1]) for v in rows.values()),
              "fra's metrics show as a table with units and ages: %s" % rows)
        # A stale value is marked (the page's own renderer, fed one).
        marked = driver.execute_script(
            "const t = metricsTable([{metric: 'cpu', service: '', value: 12.345, unit: '%', unit_text: 'percent',"
            " age_seconds: 95, fresh: false}]); const r = t.tBodies[0].rows[0];"
            " return [r.className, r.cells[1].textContent, r.cells[3].textContent];")
        check(marked == ["stale", "12.35 %", "stale"], "a stale metric is marked stale: %s" % marked)
        trace = wait_for(lambda: driver.find_element(By.ID, "explain-outcome").text
                         if "NOERROR" in driver.find_element(By.ID, "explain-outcome").text else None, 20)
        steps = driver.find_element(By.ID, "explain-steps").text
        check(trace and "www.demo.example" in trace and all(dc in steps for dc in ("fra", "iad", "sin")) and
              "picked" in steps,
              "the explain view shows www.demo.example's trace: every candidate DC, the pick, the answer")
        check(trace and re.search(r"failover budget: \d+ s = detect ", trace) is not None,
              "and the record's failover budget: %s" % (trace or "").splitlines()[-1:])
        check(wait_for(lambda: driver.execute_script("return typeof Chart === 'function' && "
                                                     "document.getElementById('series').options.length > 0"), 15),
              "Chart.js (Debian libjs-chart.js) loads from the listener and the metric chart has series")
        time.sleep(2.5)  # a few samples in the chart for the screenshot
        shot = os.path.join(ARTIFACTS, "console.png")
        driver.save_screenshot(shot)
        check(os.path.getsize(shot) > 10000, "screenshot saved: %s" % shot)
        if os.environ.get("GTMESH_UPDATE_SCREENSHOT") == "1":
            shutil.copy(shot, os.path.join(SRC, "docs", "console.png"))

        open(os.path.join(data, "down-fra"), "w").close()
        t0 = time.monotonic()
        got = wait_for(lambda: states().get("fra") == "down", 20)
        check(got, "after touch down-fra the page shows fra down by itself (%.1f s)" % (time.monotonic() - t0))
        check(states().get("iad") == "up", "iad stays up")
        hist = wait_for(lambda: "up → down" in driver.find_element(By.ID, "history").text, 20)
        check(hist, "the health timeline shows the fall")
        driver.save_screenshot(os.path.join(ARTIFACTS, "console-fra-down.png"))
        # The metric history in RocksDB: fra's healthy web backends, 2 and
        # then 0 (sampled every 15 s, stored on change). A page loaded now
        # sees only 0 live, so a 2 in its chart comes from the stored history.
        def stored_fra():
            h = json.loads(urllib.request.urlopen("http://%s/api/metric-history?dc=fra&metric=web/healthyBackends" %
                                                  info["http"], timeout=5).read())
            values = [v for _, v in h["samples"]]
            return values if 2 in values and values[-1] == 0 else None
        check(wait_for(stored_fra, 30), "the stored metric history has fra's healthy web backends going from 2 to 0: "
              "%s" % stored_fra())
        driver.refresh()
        wait_for(lambda: states().get("fra") == "down", 15)
        series = "fra web/healthyBackends"
        charted = wait_for(lambda: driver.execute_script(
            "const s = document.getElementById('series'); if (s.value !== arguments[0]) {"
            "  s.value = arguments[0]; s.dispatchEvent(new Event('change')); }"
            "const c = Chart.getChart('chart'); return !!c && c.data.datasets[0].label === arguments[0] &&"
            " c.data.datasets[0].data.includes(2) && c.data.datasets[0].data.includes(0);", series), 15)
        check(charted, "a page loaded after the fall charts fra's healthy web backends from the stored history "
              "(2, then 0)")

        # Drain from the page: committed through the Raft log, shown by itself.
        click_action("iad")
        got = wait_for(lambda: states().get("iad") == "drained", 15)
        check(got and "committed at log index" in driver.find_element(By.ID, "action-result").text,
              "the drain button drains iad (committed, shown as drained): %s" %
              driver.find_element(By.ID, "action-result").text)
        click_action("iad")
        check(wait_for(lambda: states().get("iad") == "up", 15), "and undrain brings it back")
        ctl = os.path.join(os.path.dirname(GTMESH), "gtmeshctl")
        # Over plain HTTP the X-Gtmesh-Operator header is anybody's text: the
        # history names the unauthenticated loopback client, never the header.
        req = urllib.request.Request("http://%s/api/drain?dc=sin" % info["http"], data=b"", method="POST",
                                     headers={"X-Gtmesh-Operator": "alice"})
        code = urllib.request.urlopen(req, timeout=10).status
        status = lambda: subprocess.run([ctl, "--decider", info["mesh"], "status"], capture_output=True, text=True,
                                        timeout=30).stdout
        line = wait_for(lambda: next((l for l in status().splitlines() if "override: sin drained" in l), None), 15)
        check(code == 200 and line and "unauthenticated loopback client 127.0.0.1" in line and "alice" not in line,
              "a plain-HTTP drain is recorded as an unauthenticated loopback client's, not the header's: %s" % line)
        req = urllib.request.Request("http://%s/api/undrain?dc=sin" % info["http"], data=b"", method="POST",
                                     headers={"X-Gtmesh-Operator": "alice"})
        urllib.request.urlopen(req, timeout=10)
        check(wait_for(lambda: states().get("sin") == "up", 15), "and the undrain brings sin back")
        # The answer diff of the last dry run, as the console shows it.
        cfg = open(os.path.join(data, "demo.yaml")).read()
        candidate = os.path.join(work, "candidate.yaml")
        open(candidate, "w").write(cfg.replace("198.51.100.10", "198.51.100.11"))  # www answers iad now
        r = subprocess.run([ctl, "--decider", info["mesh"], "push", "--dry-run", candidate], capture_output=True,
                           text=True, timeout=30)
        got = wait_for(lambda: "valid" in driver.find_element(By.ID, "dry-run-head").text and
                       "198.51.100.11" in driver.find_element(By.ID, "dry-run").text, 20)
        check(r.returncode == 0 and got, "the console shows the last dry run and the answers it would change: %s" %
              driver.find_element(By.ID, "dry-run-head").text)
        # Without the console's header (a form on another site), nothing happens.
        req = urllib.request.Request("http://%s/api/drain?dc=sin" % info["http"], data=b"", method="POST")
        try:
            code = urllib.request.urlopen(req, timeout=5).status
        except urllib.error.HTTPError as e:
            code = e.code
        time.sleep(2.5)
        check(code == 403 and states().get("sin") == "up", "a POST without the operator header is refused (%s)" % code)

        logs = driver.get_log("browser")
        severe = [l for l in logs if l.get("level") == "SEVERE"]
        check(not severe, "no console errors: %s" % severe)
        hosts = set()
        for entry in driver.get_log("performance"):
            msg = json.loads(entry["message"])["message"]
            if msg.get("method") == "Network.requestWillBeSent":
                u = msg["params"]["request"]["url"]
                if u.startswith("http"):
                    hosts.add(u.split("/")[2])
        check(hosts == {info["http"]}, "every request went to the listener itself: %s" % sorted(hosts))
    finally:
        if driver:
            driver.quit()
        demo.send_signal(signal.SIGTERM)
        try:
            demo.wait(timeout=30)
        except subprocess.TimeoutExpired:
            demo.kill()
        if failures:
            print(open(os.path.join(work, "demo.out")).read()[-3000:])
        shutil.rmtree(work, ignore_errors=True)
    print("%d check(s) failed" % len(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
