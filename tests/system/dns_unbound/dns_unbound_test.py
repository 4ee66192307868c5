#!/usr/bin/python3
"""System test: unbound (a real recursive resolver, Debian's 1.17) in front of
`gtmesh serve`, with EDNS Client Subnet on both legs. Shows that answers
follow the client subnet through the resolver and that the resolver caches
them per the scope gtmesh returns.
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dns_lib"))
from gtmesh_dns import Checks, GtmeshServer, _die_with_parent, client_subnet, dig, free_port, rdata, status_of  # noqa: E402
from gtmesh_dns import wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def start_unbound(workdir, gtmesh_port):
    """Starts unbound on a free loopback port; returns (process, port)."""
    template = open(os.path.join(HERE, "unbound.conf.in")).read()
    last_log = ""
    for attempt in range(5):
        port = free_port()
        conf = os.path.join(workdir, "unbound.conf")
        with open(conf, "w") as f:
            f.write(template.replace("@DIR@", workdir).replace("@GTMESH_PORT@", str(gtmesh_port))
                    .replace("@PORT@", str(port)))
        check = subprocess.run(["unbound-checkconf", conf], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if check.returncode != 0:
            raise RuntimeError("unbound-checkconf: " + check.stdout)
        log_path = os.path.join(workdir, f"unbound.{attempt}.log")
        log = open(log_path, "w")
        proc = subprocess.Popen(["unbound", "-d", "-c", conf], stdout=log, stderr=subprocess.STDOUT,
                                preexec_fn=_die_with_parent)

        def ready():
            if proc.poll() is not None:
                return "exited"
            out = dig("127.0.0.1", port, "example.test", "SOA", "+rec", "+time=1", "+tries=1")
            return "ready" if status_of(out) == "NOERROR" else None

        state = wait_until(ready, 20, "unbound to answer")
        if state == "ready":
            return proc, port, log_path
        last_log = open(log_path).read()
    raise RuntimeError("unbound did not start:\n" + last_log)


def main():
    t = Checks("dns_unbound")
    workdir = tempfile.mkdtemp(prefix="gtmesh-dns-unbound-")
    server = None
    unbound = None
    try:
        server = GtmeshServer(workdir, os.path.join(HERE, "zone.yaml"), extra=["--udp-threads", "1"]).start()
        unbound, port, unbound_log = start_unbound(workdir, server.port)
        t.check(True, f"unbound on 127.0.0.1:{port} with a stub zone to gtmesh on 127.0.0.1:{server.port}")

        def ask(subnet=None):
            args = ["geo.example.test", "A", "+rec"] + ([f"+subnet={subnet}"] if subnet else [])
            return dig("127.0.0.1", port, *args)

        before = server.counters()
        out = ask("198.51.100.0/24")
        t.equal(rdata(out), ["192.0.2.30"], "via unbound, client subnet 198.51.100.0/24: the fra answer")
        t.equal(client_subnet(out), "198.51.100.0/24/24", "unbound passes on gtmesh's scope /24")
        out = ask("203.0.113.0/24")
        t.equal(rdata(out), ["198.51.100.30"], "via unbound, client subnet 203.0.113.0/24: the iad answer")
        out = ask(None)
        t.equal(rdata(out), ["192.0.2.99"],
                "via unbound without ECS: unbound sends its client's subnet (127.0.0.0/24): the lo answer")
        first = server.counters()
        upstream = first["udp_queries"] - before["udp_queries"]
        t.equal(upstream, 3, "three client networks: three queries reached gtmesh")
        t.equal(first["ecs"] - before["ecs"], upstream, "every query unbound sent carried ECS")

        # Cached per scope: the same networks again, in another order, and
        # another address inside the /24: same answers, no new upstream query.
        for _ in range(2):
            t.equal(rdata(ask(None)), ["192.0.2.99"], "again without ECS: lo (from unbound's cache)")
            t.equal(rdata(ask("203.0.113.0/24")), ["198.51.100.30"], "again 203.0.113.0/24: iad")
            t.equal(rdata(ask("198.51.100.0/24")), ["192.0.2.30"], "again 198.51.100.0/24: fra")
        t.equal(rdata(ask("198.51.100.77/32")), ["192.0.2.30"], "198.51.100.77/32 is inside the cached /24 scope")
        t.equal(rdata(ask("198.51.101.0/24")), ["198.51.100.30"], "198.51.101.0/24 is outside it: iad")
        after = server.counters()
        t.equal(after["udp_queries"] - first["udp_queries"], 1,
                "only the new network (198.51.101.0/24, outside every cached scope) went upstream")
        t.equal(after["servfail"] + after["formerr"], 0, "no errors at gtmesh")
        code, _ = server.stop()
        t.equal(code, 0, "gtmesh exits cleanly")
    except Exception as e:  # report, then fail
        t.check(False, f"unexpected error: {e}")
    finally:
        if unbound and unbound.poll() is None:
            unbound.terminate()
            try:
                unbound.wait(10)
            except subprocess.TimeoutExpired:
                unbound.kill()
        if server:
            server.kill()
        if t.failed:
            for path in [server.log_path if server else None] + [os.path.join(workdir, f) for f in os.listdir(workdir)
                                                                   if f.startswith("unbound.") and f.endswith(".log")]:
                if path and os.path.exists(path):
                    print(f"--- {path}\n{open(path).read()[-3000:]}")
        shutil.rmtree(workdir, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
