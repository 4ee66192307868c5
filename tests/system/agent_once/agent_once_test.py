#!/usr/bin/env python3
"""System test: `gtmesh agent --once --print` against real servers.

Starts nginx (a health page and stub_status) and haproxy (a proxy in front of
nginx, with a stats socket) on loopback, writes a config that points a DC's
access points, service backends, LB stats, process names, an endpoint
monitor and a client prefix at them, runs one agent round twice (nginx up,
then the health page failing), and checks the JSON lines. Exits 77 (skip)
when nginx or haproxy is not installed.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools"))
from free_port import free_port  # noqa: E402

GTMESH = os.environ.get("GTMESH_BIN", "gtmesh")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def wait_for(ready, what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.05)
    raise SystemExit(f"not ready within {timeout} s: {what}")


def connectable(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def haproxy_stat(sock_path):
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(2)
            s.connect(sock_path)
            s.sendall(b"show stat\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
            return data.decode()
    except OSError:
        return ""


def run_agent(config, extra=()):
    out = subprocess.run([GTMESH, "agent", "--config", config, "--dc", "lab", "--once", "--print",
                          "--instance", "sys1", *extra], capture_output=True, text=True, timeout=60)
    print(out.stderr, end="", file=sys.stderr)
    check(out.returncode == 0, f"agent exit code {out.returncode}")
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    return lines


def value(lines, source, key, metric):
    found = [m["value"] for m in lines if m["source"] == source and m["key"] == key and m["metric"] == metric]
    return found[-1] if found else None


def main():
    for tool in ("nginx", "haproxy"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed (tools/setup.sh installs it)")
            return 77
    root = os.geteuid() == 0
    tmp = tempfile.mkdtemp(prefix="gtmesh-agent-once-")
    os.chmod(tmp, 0o755)
    procs = []
    try:
        web, front, closed = free_port(), free_port(), free_port()
        health = os.path.join(tmp, "health.txt")
        with open(health, "w") as f:
            f.write("OK\n")
        os.makedirs(os.path.join(tmp, "tmp"))
        with open(os.path.join(tmp, "nginx.conf"), "w") as f:
            f.write(f"""{'user root root;' if root else ''}
daemon off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ worker_connections 64; }}
http {{
  access_log off;
  client_body_temp_path {tmp}/tmp; proxy_temp_path {tmp}/tmp; fastcgi_temp_path {tmp}/tmp;
  uwsgi_temp_path {tmp}/tmp; scgi_temp_path {tmp}/tmp;
  server {{
    listen 127.0.0.1:{web};
    location = /status {{ stub_status; }}
    location = /health {{ default_type text/plain; alias {health}; }}
    location / {{ return 200 "hello\\n"; }}
  }}
}}
""")
        sock = os.path.join(tmp, "admin.sock")
        with open(os.path.join(tmp, "haproxy.cfg"), "w") as f:
            f.write(f"""global
  stats socket {sock} mode 600 level admin
defaults
  mode http
  timeout connect 500ms
  timeout client 5s
  timeout server 5s
listen shop
  bind 127.0.0.1:{front}
  server s1 127.0.0.1:{web} check inter 100ms fall 1 rise 1
""")
        log = open(os.path.join(tmp, "servers.log"), "w")
        procs.append(subprocess.Popen(["nginx", "-p", tmp, "-e", f"{tmp}/error.log", "-c", f"{tmp}/nginx.conf"],
                                      stdout=log, stderr=log, start_new_session=True))
        wait_for(lambda: connectable(web), "nginx")
        procs.append(subprocess.Popen(["haproxy", "-db", "-f", f"{tmp}/haproxy.cfg"], stdout=log, stderr=log,
                                      start_new_session=True))
        wait_for(lambda: ",s1," in haproxy_stat(sock) and "shop,s1" in haproxy_stat(sock)
                 and any(l.startswith("shop,s1,") and ",UP," in l for l in haproxy_stat(sock).splitlines()),
                 "haproxy with s1 UP")

        config = os.path.join(tmp, "agent.yaml")
        with open(config, "w") as f:
            f.write(f"""
measurement: {{host_interval: 5s, service_interval: 5s, client_interval: 10s, client_prefixes: [127.0.0.1/32]}}
datacenters:
  - {{name: lab, region: europe, access_points: {{wan: ["127.0.0.1:{web}"], lan: ["127.0.0.1:{front}"]}}}}
probes:
  - {{name: ep, protocol: http, port: {web}, path: /health, interval: 5s, timeout: 2s}}
services:
  - name: web
    probe: {{protocol: http, path: /health, interval: 5s, timeout: 2s, unhealthy_threshold: 1,
            match: {{status: "200-299", body: OK}}}}
    backends: {{lab: ["127.0.0.1:{web}", "127.0.0.1:{closed}"]}}
    lb_stats: {{lab: "nginx:http://127.0.0.1:{web}/status"}}
    processes: {{lab: [nginx]}}
  - name: shop
    backends: {{lab: ["127.0.0.1:{web}"]}}
    lb_stats: {{lab: "haproxy:{sock}"}}
profiles:
  - name: api
    method: weighted
    endpoints:
      - {{name: a, kind: external, target: 127.0.0.1, monitor: ep}}
zones:
  - name: example.test
    soa: {{primary: ns1.example.test., admin: hostmaster.example.test.}}
    ns: [ns1.example.test.]
    records:
      - {{name: ns1, type: A, answers: [192.0.2.53]}}
""")
        started = time.time() * 1000
        lines = run_agent(config)
        now = time.time() * 1000

        # The line format: every field, one origin, increasing seq, fresh timestamps.
        for m in lines:
            check(set(m) == {"dc", "source", "key", "metric", "value", "unit", "at_ms", "origin", "seq"},
                  f"fields of {m}")
            check(m["dc"] == "lab" and m["origin"] == "lab/sys1", f"dc/origin of {m}")
            check(started - 1000 <= m["at_ms"] <= now + 1000, f"at_ms of {m}")
        seqs = [m["seq"] for m in lines]
        check(seqs == sorted(seqs) and len(set(seqs)) == len(seqs), "seq strictly increasing")

        # Host: both access points answer; procfs values in range.
        check(value(lines, "host", "", "status") == 1, "host status up")
        mem = value(lines, "host", "", "mem")
        check(mem is not None and 0 < mem < 100, f"host mem {mem}")
        cpu = value(lines, "host", "", "cpu")
        check(cpu is not None and 0 <= cpu <= 100, f"host cpu {cpu}")
        check(value(lines, "host", "", "bw") is not None, "host bw present")

        # Service web: own probes (one backend up, one port closed), nginx stub_status, nginx processes.
        check(value(lines, "service", f"web/127.0.0.1:{web}", "status") == 1, "web backend up")
        check(value(lines, "service", f"web/127.0.0.1:{closed}", "status") == 0, "web closed backend down")
        check(value(lines, "service", "web", "healthyBackends") == 1, "web healthyBackends 1")
        check(value(lines, "service", "web", "status") == 1, "web status 1")
        conn = value(lines, "service", "web", "connection")
        check(conn is not None and conn >= 1, f"web connection {conn} (stub_status counts its own request)")
        req = value(lines, "service", "web", "request")
        check(req is not None and req > 0, f"web request rate {req}")
        wmem = value(lines, "service", "web", "mem")
        check(wmem is not None and wmem > 0, f"web mem {wmem} (nginx processes)")

        # Service shop: HAProxy decides, keyed by the server address from the stats socket.
        check(value(lines, "service", "shop", "healthyBackends") == 1, "shop healthyBackends 1 (haproxy)")
        check(value(lines, "service", f"shop/127.0.0.1:{web}", "status") == 1, "shop server verdict")
        check(value(lines, "service", "shop", "connection") is not None, "shop connection")

        # Endpoint monitor and client prefix.
        check(value(lines, "endpoint", "api/a", "status") == 1, "endpoint api/a up")
        if value(lines, "client", "127.0.0.1/32", "packetLoss") is not None:
            check(value(lines, "client", "127.0.0.1/32", "packetLoss") == 0, "client loss 0 on loopback")
            check(value(lines, "client", "127.0.0.1/32", "ttl") == 64, "client ttl 64 on loopback")
            check(value(lines, "client", "127.0.0.1/32", "hops") == 0, "client hops 0 on loopback")
        else:
            check(not root, "client metrics missing although running as root")
            print("note: no ICMP permission here; client metrics not checked")

        # The health page starts failing the body match: the probe verdicts follow.
        with open(health, "w") as f:
            f.write("DEGRADED\n")
        lines = run_agent(config)
        check(value(lines, "service", f"web/127.0.0.1:{web}", "status") == 0, "web backend down after body change")
        check(value(lines, "service", "web", "healthyBackends") == 0, "web healthyBackends 0")
        check(value(lines, "service", "web", "status") == 0, "web status 0")
        check(value(lines, "endpoint", "api/a", "status") == 1, "the endpoint probe has no body match")

        # Usage errors.
        bad = subprocess.run([GTMESH, "agent", "--config", config, "--dc", "nowhere", "--once"],
                             capture_output=True, text=True, timeout=30)
        check(bad.returncode == 2 and "nowhere" in bad.stderr, "unknown DC rejected")
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("agent_once: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
