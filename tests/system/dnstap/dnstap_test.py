#!/usr/bin/python3
"""System test: dnstap query logs from `gtmesh serve` read by real receivers
(docs/dns.md, "Query logs: dnstap").

- Debian's `dnstap` tool on a Unix socket and on TCP decodes every AUTH_QUERY
  and AUTH_RESPONSE (UDP, TCP, ECS) with addresses, ports, transport, times.
- `fstrm_capture` keeps the frames; a protobuf decoder written here (not
  gtmesh's) finds the query and response bytes exactly as sent and received,
  and the decision in `extra`, which must agree with `gtmesh explain`.
- A file sink rotates by size; dnstap-ldns, kdig -G and gtmeshctl tap read
  the files, and together they hold every message.
- The receiver is killed and restarted under dnsperf: no query is lost, the
  drops are counted, logging resumes.
- `sample` logs exactly one query in N; a bad sink is a config error.
"""

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dns_lib"))
from gtmesh_dns import Checks, GtmeshServer, UdpClient, _die_with_parent, ecs_option, free_port  # noqa: E402
from gtmesh_dns import make_query, run, wait_until  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ZONE = os.path.join(HERE, "zone.yaml")
STATE = os.path.join(HERE, "state.yaml")
GTMESH = os.environ.get("GTMESH_BIN", "gtmesh")
GTMESHCTL = os.path.join(os.path.dirname(GTMESH), "gtmeshctl")
TOOLS = ("dnstap", "fstrm_capture", "dnstap-ldns", "kdig", "dnsperf", "dig")


# --- an independent reader: Frame Streams files and the dnstap protobuf ------

def frames_of(path):
    """The data frames of a Frame Streams file (control frames skipped)."""
    data = open(path, "rb").read()
    out, at = [], 0
    while at + 4 <= len(data):
        (n,) = struct.unpack("!I", data[at:at + 4])
        at += 4
        if n == 0:  # escape: a control frame follows
            (c,) = struct.unpack("!I", data[at:at + 4])
            at += 4 + c
            continue
        out.append(data[at:at + n])
        at += n
    return out


def fields(buf):
    """(number, value) of a protobuf message: ints for varint/fixed, bytes for
    length-delimited."""
    at = 0

    def varint():
        nonlocal at
        shift = value = 0
        while True:
            b = buf[at]
            at += 1
            value |= (b & 0x7f) << shift
            shift += 7
            if not b & 0x80:
                return value

    while at < len(buf):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            yield number, varint()
        elif wire == 2:
            n = varint()
            yield number, bytes(buf[at:at + n])
            at += n
        elif wire == 5:
            yield number, struct.unpack("<I", buf[at:at + 4])[0]
            at += 4
        elif wire == 1:
            yield number, struct.unpack("<Q", buf[at:at + 8])[0]
            at += 8
        else:
            raise ValueError("wire type %d" % wire)


MESSAGE_FIELDS = {1: "type", 2: "family", 3: "protocol", 4: "query_address", 5: "response_address", 6: "query_port",
                  7: "response_port", 8: "query_time_sec", 9: "query_time_nsec", 10: "query_message",
                  11: "query_zone", 12: "response_time_sec", 13: "response_time_nsec", 14: "response_message"}


def decode(frame):
    top = dict(fields(frame))
    msg = {MESSAGE_FIELDS.get(k, k): v for k, v in fields(top[14])}
    msg["identity"] = top.get(1, b"").decode()
    msg["version"] = top.get(2, b"").decode()
    msg["extra"] = top.get(3, b"").decode()
    return msg


def decision(extra):
    parts = extra.split()
    return dict(p.split("=", 1) for p in parts[1:] if "=" in p) if parts and parts[0] == "gtmesh/1" else None


# --- receivers -----------------------------------------------------------------

class Receiver:
    def __init__(self, argv, log):
        self.log = open(log, "w")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def dnstap_tool(work, name, listen_args):
    """`dnstap` writing JSON lines to NAME.json; waits for it to listen."""
    out = os.path.join(work, name + ".json")
    r = Receiver(["dnstap"] + listen_args + ["-j", "-w", out], os.path.join(work, name + ".log"))
    r.out = out
    if listen_args[0] == "-u":
        wait_until(lambda: os.path.exists(listen_args[1]), 10, "dnstap to create " + listen_args[1])
    else:
        host, port = listen_args[1].rsplit(":", 1)

        def listening():
            try:
                socket.create_connection((host, int(port)), 0.2).close()
                return True
            except OSError:
                return False
        # A probe connection is a stream with no frames; the tool logs and drops it.
        wait_until(listening, 10, "dnstap to listen on " + listen_args[1])
    return r


def json_lines(path):
    try:
        return [json.loads(l) for l in open(path) if l.strip()]
    except (OSError, ValueError):
        return []


def tcp_ask(host, port, query):
    with socket.create_connection((host, port), 5) as s:
        s.sendall(struct.pack("!H", len(query)) + query)
        n = struct.unpack("!H", s.recv(2, socket.MSG_WAITALL))[0]
        return s.getsockname()[1], s.recv(n, socket.MSG_WAITALL)


def main():
    missing = [t for t in TOOLS if not shutil.which(t)]
    if missing:
        print("skip: not installed: " + ", ".join(missing))
        sys.exit(77)
    t = Checks("dnstap")
    work = tempfile.mkdtemp(prefix="gtmesh-dnstap-")
    servers, receivers = [], []

    def serve(*extra, config=ZONE, name="gtmesh"):
        s = GtmeshServer(work, config, STATE, extra=["--udp-threads", "1"] + list(extra), name=name).start()
        servers.append(s)
        return s

    try:
        # 1. The dnstap tool on a Unix socket: UDP, TCP, ECS, NXDOMAIN, NODATA.
        sock = os.path.join(work, "tap.sock")
        tool = dnstap_tool(work, "unix", ["-u", sock])
        receivers.append(tool)
        srv = serve("--dnstap", "unix:" + sock, name="unix")
        client = UdpClient(srv.host, srv.port)
        q = make_query("web.example.test", qid=0x1001)
        client.ask(q)
        raw_port = client.sock.getsockname()[1]
        client.close()
        run(["dig", "@127.0.0.1", "-p", str(srv.port), "+tcp", "web.example.test", "A"])
        run(["dig", "@127.0.0.1", "-p", str(srv.port), "legacy.example.test", "A", "+subnet=198.51.100.0/24"])
        run(["dig", "@127.0.0.1", "-p", str(srv.port), "nope.example.test", "A"])
        run(["dig", "@127.0.0.1", "-p", str(srv.port), "nowhere.example.test", "A"])
        try:
            wait_until(lambda: len(json_lines(tool.out)) >= 10, 15, "10 messages from the dnstap tool")
        except TimeoutError:
            pass
        msgs = [m["message"] for m in json_lines(tool.out)]
        t.equal(len(msgs), 10, "the dnstap tool decoded 10 messages for 5 queries")
        t.equal([m["type"] for m in msgs], ["AUTH_QUERY", "AUTH_RESPONSE"] * 5,
                "each query is an AUTH_QUERY followed by its AUTH_RESPONSE")
        t.check(all(m.get("query_address") == "127.0.0.1" and m.get("response_address") == "127.0.0.1"
                    and m.get("response_port") == srv.port for m in msgs),
                "every message names the client 127.0.0.1 and the server 127.0.0.1:%d" % srv.port,
                json.dumps(msgs[:2])[:600])
        t.equal([m.get("socket_protocol") for m in msgs[::2]], ["UDP", "TCP", "UDP", "UDP", "UDP"],
                "transport: UDP, TCP (dig +tcp), UDP...")
        t.equal(msgs[0].get("query_port"), raw_port, "the query port is the client's port")
        t.check(all(m["query_time"] <= m["response_time"] for m in msgs[1::2]),
                "every response carries its query time and a response time not before it")
        t.check("192.0.2.1" in msgs[1].get("response_message", "") and "status: NOERROR" in msgs[1]["response_message"],
                "the tool decodes the response: web answered 192.0.2.1 (fra, the lowest CPU)")
        t.check("CLIENT-SUBNET" in msgs[4].get("query_message", "") or "198.51.100.0/24" in msgs[4].get("query_message", ""),
                "the ECS query is logged with its Client Subnet option", msgs[4].get("query_message", "")[:400])
        t.check("NXDOMAIN" in msgs[7].get("response_message", ""), "the NXDOMAIN is logged as sent")
        t.check(all(m.get("query_zone") == "example.test." for m in msgs),
                "query_zone names the zone, NXDOMAIN included", str([m.get("query_zone") for m in msgs]))
        tool.stop()

        # 2. fstrm_capture keeps the frames: bytes and decisions, checked here.
        sock2 = os.path.join(work, "cap.sock")
        cap_file = os.path.join(work, "cap.fstrm")
        cap = Receiver(["fstrm_capture", "-t", "protobuf:dnstap.Dnstap", "-u", sock2, "-w", cap_file],
                       os.path.join(work, "fstrm_capture.log"))
        receivers.append(cap)
        wait_until(lambda: os.path.exists(sock2), 10, "fstrm_capture to listen")
        srv2 = serve("--dnstap", "unix:" + sock2, name="capture")
        asked = []  # (name, query bytes, response bytes, client port, tcp)
        client = UdpClient(srv2.host, srv2.port)
        port = None
        for i, (name, opt) in enumerate([("web.example.test", None),
                                          ("legacy.example.test", ecs_option(1, 24, bytes([198, 51, 100]))),
                                          ("degraded.example.test", None), ("nowhere.example.test", None),
                                          ("nope.example.test", None), ("a.wild.example.test", None),
                                          ("alias.example.test", None), ("away.example.test", None)]):
            q = make_query(name, qid=0x2000 + i, opt=opt)
            asked.append((name, q, client.ask(q), client.sock.getsockname()[1], False))
        client.close()
        q = make_query("web.example.test", qid=0x2100)
        port, answer = tcp_ask(srv2.host, srv2.port, q)
        asked.append(("web.example.test", q, answer, port, True))
        try:
            wait_until(lambda: srv2.counters().get("dnstap_messages", 0) >= 18, 15, "18 frames written")
        except TimeoutError:
            pass
        srv2.stop()
        cap.stop()
        frames = [decode(f) for f in frames_of(cap_file)]
        t.equal(len(frames), 18, "fstrm_capture holds 18 frames for 9 queries")
        queries = [f for f in frames if f["type"] == 1]
        responses = [f for f in frames if f["type"] == 2]
        for name, q, a, cport, tcp in asked:
            fq = [f for f in queries if f.get("query_message") == q]
            fr = [f for f in responses if f.get("response_message") == a]
            t.check(len(fq) == 1 and len(fr) == 1,
                    "%s (%s): the query and the response are logged byte for byte" % (name, "TCP" if tcp else "UDP"))
            if fr:
                f = fr[0]
                t.check(f.get("query_port") == cport and f.get("response_port") == srv2.port
                        and f.get("query_address") == bytes([127, 0, 0, 1]) and f.get("protocol") == (2 if tcp else 1)
                        and f.get("family") == 1,
                        "%s: addresses, ports, family and transport" % name, str({k: f.get(k) for k in (
                            "query_port", "response_port", "query_address", "protocol", "family")}))
        by_name = {}
        for name, q, a, cport, tcp in asked:
            fr = [f for f in responses if f.get("response_message") == a]
            if fr and not tcp:
                by_name[name] = decision(fr[0]["extra"])
        want = {"web.example.test": {"record": "web.example.test.", "mode": "dc", "dc": "fra", "reason": "picked"},
                "legacy.example.test": {"record": "legacy.example.test.", "mode": "static", "dc": "fra",
                                        "reason": "picked", "scope": "24"},
                "degraded.example.test": {"mode": "dc", "reason": "fail_safe", "dc": "-"},
                "nowhere.example.test": {"reason": "nodata_policy"},
                "nope.example.test": {"reason": "nxdomain", "record": "-"},
                "a.wild.example.test": {"record": "*.wild.example.test.", "reason": "plain", "wildcard": "1"},
                # A CNAME chain logs the target's decision and the name asked.
                "alias.example.test": {"record": "web.example.test.", "asked": "alias.example.test.", "dc": "fra",
                                       "reason": "picked"},
                # A target outside our zones: the CNAME itself, answered here.
                "away.example.test": {"record": "away.example.test.", "reason": "plain"}}
        for name, expected in want.items():
            got = by_name.get(name) or {}
            t.check(all(got.get(k) == v for k, v in expected.items()) and got.get("cfg") == "1",
                    "%s: the decision in extra says %s" % (name, expected), str(got))
        # The same decision as gtmesh explain for the same config and state.
        for name, client_ip in (("web.example.test", None), ("legacy.example.test", "198.51.100.7")):
            argv = [GTMESH, "explain", "--config", ZONE, "--state", STATE, name, "A"]
            if client_ip:
                argv += ["--client", client_ip]
            text = run(argv)
            picked = [l.split()[1] for l in text.splitlines() if l.strip().startswith("*")]
            record = [l.split()[1] for l in text.splitlines() if l.strip().startswith("record ")]
            got = by_name.get(name) or {}
            t.check(picked[:1] == [got.get("dc")] and record[:1] == [got.get("record")],
                    "%s: explain picks %s for %s, as logged (%s in %s)" % (
                        name, picked[:1], record[:1], got.get("dc"), got.get("record")), text[:600])
        # gtmeshctl tap reads the same file and prints the decisions.
        lines = run([GTMESHCTL, "tap", cap_file]).splitlines()
        t.check(len(lines) == 18 and any("web.example.test. A NOERROR -> 192.0.2.1 | picked record=web.example.test."
                                         " mode=dc dc=fra" in l for l in lines),
                "gtmeshctl tap prints 18 lines with the decisions", "\n".join(lines[:4]))
        js = [json.loads(l) for l in run([GTMESHCTL, "tap", cap_file, "--json"]).splitlines() if l.startswith("{")]
        t.check(len(js) == 18 and any(j.get("decision", {}).get("dc") == "fra" and j.get("answers") == ["192.0.2.1"]
                                      for j in js), "gtmeshctl tap --json: 18 objects with answers and decisions")

        # 3. TCP to the dnstap tool.
        tport = free_port()
        ttool = dnstap_tool(work, "tcp", ["-l", "127.0.0.1:%d" % tport])
        receivers.append(ttool)
        srv3 = serve("--dnstap", "tcp:127.0.0.1:%d" % tport, name="tcp")
        for name in ("web", "www", "legacy"):
            run(["dig", "@127.0.0.1", "-p", str(srv3.port), name + ".example.test", "A"])
        try:
            wait_until(lambda: len(json_lines(ttool.out)) >= 6, 15, "6 messages over TCP")
        except TimeoutError:
            pass
        tm = [m["message"] for m in json_lines(ttool.out)]
        t.check(len(tm) == 6 and all(m.get("response_port") == srv3.port for m in tm),
                "over a TCP sink the dnstap tool gets all 6 messages (%d)" % len(tm))
        srv3.stop()
        ttool.stop()

        # 4. A file sink rotated by size (config: file_max_size 1 MB, keep 3).
        log = os.path.join(work, "files", "log.tap")
        os.makedirs(os.path.dirname(log))
        cfg = os.path.join(work, "file.yaml")
        with open(cfg, "w") as f:
            f.write(open(ZONE).read() + "dnstap: {sink: file:%s, file_max_size: 1, file_keep: 3, identity: ns-test}\n" % log)
        srv4 = serve(config=cfg, name="file")
        qfile = os.path.join(work, "queries.txt")
        with open(qfile, "w") as f:
            for i in range(4000):
                f.write(("web.example.test A\n", "www.example.test A\n", "legacy.example.test A\n", "x%d.example.test A\n" % i)[i % 4])
        perf = subprocess.run(["dnsperf", "-s", "127.0.0.1", "-p", str(srv4.port), "-d", qfile, "-n", "1", "-Q", "4000",
                               "-l", "20"], capture_output=True, text=True, timeout=60)
        completed = int(next((l.split()[2] for l in perf.stdout.splitlines() if "Queries completed:" in l), "0"))
        # The writer thread may still hold the last messages when dnsperf
        # ends (once, 7,994 of 8,000 were counted at the SIGTERM): wait until
        # it has counted them all, then stop.
        try:
            wait_until(lambda: srv4.counters().get("dnstap_messages", 0) >= 2 * completed, 10,
                       "the dnstap writer to write every message")
        except TimeoutError:
            pass  # judged below
        _, final = srv4.stop()
        files = sorted(os.listdir(os.path.dirname(log)))
        t.check("log.tap" in files and "log.tap.1" in files, "the file rotated past 1 MB: %s" % files)
        total = 0
        for name in files:
            n = len(run([GTMESHCTL, "tap", os.path.join(os.path.dirname(log), name)]).splitlines())
            total += n
        t.check(completed == 4000 and total == 2 * completed == final.get("dnstap_messages"),
                "the files hold every message: %d for %d answered queries (writer: %s)" % (
                    total, completed, final.get("dnstap_messages")))
        ldns = run(["dnstap-ldns", "-r", log + ".1", "-q"]).splitlines()
        t.check(len(ldns) > 1000 and all(" AQ " in l or " AR " in l for l in ldns[:50]),
                "dnstap-ldns reads the rotated file (%d messages)" % len(ldns))
        k = run(["kdig", "-G", log])
        t.check("status: NOERROR" in k or "status: NXDOMAIN" in k, "kdig -G reads the current file", k[:300])
        ident = json.loads(run([GTMESHCTL, "tap", log, "--json", "--limit", "1"]).splitlines()[0]).get("identity")
        t.equal(ident, "ns-test", "the config's identity is sent")

        # 5. The receiver killed and restarted under dnsperf: nothing lost.
        sock5 = os.path.join(work, "restart.sock")
        r1 = dnstap_tool(work, "before", ["-u", sock5])
        receivers.append(r1)
        srv5 = serve("--dnstap", "unix:" + sock5, name="restart")
        perf = subprocess.Popen(["dnsperf", "-s", "127.0.0.1", "-p", str(srv5.port), "-d", qfile, "-l", "8",
                                 "-Q", "1000"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                preexec_fn=_die_with_parent)
        time.sleep(2)  # load before the kill (dnsperf runs 8 s; the steps are timed against it, not synchronised)
        r1.stop(signal.SIGKILL)
        os.unlink(sock5) if os.path.exists(sock5) else None
        time.sleep(2)
        r2 = dnstap_tool(work, "after", ["-u", sock5])
        receivers.append(r2)
        out, _ = perf.communicate(timeout=60)
        lost = next((l.split()[2] for l in out.splitlines() if "Queries lost:" in l), None)
        sent = next((l.split()[2] for l in out.splitlines() if "Queries sent:" in l), None)
        t.check(lost == "0" and sent and int(sent) > 4000, "dnsperf: %s queries, %s lost while the receiver died and came back" % (sent, lost))
        try:
            wait_until(lambda: len(json_lines(r2.out)) > 0, 15, "logging to resume")
        except TimeoutError:
            pass
        c = srv5.counters()
        t.check(c.get("dnstap_dropped_sink_down", 0) > 0, "drops while the receiver was gone are counted: %s" %
                c.get("dnstap_dropped_sink_down"))
        t.check(len(json_lines(r1.out)) > 0 and len(json_lines(r2.out)) > 0 and c.get("dnstap_sink_opened", 0) >= 2,
                "logging resumed on the new receiver (%d before, %d after, %d opens)" % (
                    len(json_lines(r1.out)), len(json_lines(r2.out)), c.get("dnstap_sink_opened", 0)))
        srv5.stop()
        r2.stop()

        # 6. sample: 10 logs exactly one query in ten (one UDP thread).
        sock6 = os.path.join(work, "sample.sock")
        r6 = dnstap_tool(work, "sample", ["-u", sock6])
        receivers.append(r6)
        cfg6 = os.path.join(work, "sample.yaml")
        with open(cfg6, "w") as f:
            f.write(open(ZONE).read() + "dnstap: {sink: unix:%s, sample: 10}\n" % sock6)
        srv6 = serve(config=cfg6, name="sample")
        client = UdpClient(srv6.host, srv6.port)
        for i in range(100):
            client.ask(make_query("www.example.test", qid=i))
        client.close()
        try:
            wait_until(lambda: len(json_lines(r6.out)) >= 20, 10, "20 sampled messages")
        except TimeoutError:
            pass
        c = srv6.counters()
        t.check(len(json_lines(r6.out)) == 20 and c.get("dnstap_captured") == 10,
                "sample: 10 logs 10 of 100 queries (%d messages, %s captured)" % (len(json_lines(r6.out)),
                                                                                 c.get("dnstap_captured")))
        srv6.stop()
        r6.stop()

        # 7. A decider's responder logs too (--dnstap file:): a lone plain
        # decider, no agent, answers and logs what it answers.
        dlog = os.path.join(work, "decider.tap")
        dports = os.path.join(work, "decider.ports")
        dout = open(os.path.join(work, "decider.log"), "w")
        decider = subprocess.Popen([GTMESH, "decider", "--config", ZONE, "--data-dir", os.path.join(work, "d1"),
                                    "--listen", "127.0.0.1:0", "--advertise", "d1:1", "--dns", "127.0.0.1:0",
                                    "--port-file", dports, "--dnstap", "file:" + dlog],
                                   stdout=dout, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        try:
            wait_until(lambda: os.path.exists(dports) and os.path.getsize(dports) > 0, 30, "the decider's port file")
            dns = [l.split()[1] for l in open(dports) if l.startswith("dns")][0]
            dhost, dport = dns.rsplit(":", 1)
            outs = [run(["dig", "@" + dhost, "-p", dport, "+time=2", "+tries=1", "www.example.test", "A"])
                    for _ in range(3)]
        finally:
            decider.send_signal(signal.SIGTERM)
            try:
                decider.wait(20)
            except subprocess.TimeoutExpired:
                decider.kill()
                decider.wait()
            dout.close()
        dl = [json.loads(l) for l in run([GTMESHCTL, "tap", dlog, "--json"]).splitlines() if l.startswith("{")]
        answered = sum(1 for o in outs if "status:" in o)
        t.check(answered == 3 and len(dl) == 6 and all(j.get("type") in ("AUTH_QUERY", "AUTH_RESPONSE") for j in dl)
                and all("reason" in j.get("decision", {}) for j in dl if j["type"] == "AUTH_RESPONSE"),
                "gtmesh decider --dnstap file: logs its 3 answers as 6 messages with decisions (%d)" % len(dl),
                str(dl[:2])[:400])

        # 8. A bad sink is an error naming file, line and field.
        bad = os.path.join(work, "bad.yaml")
        with open(bad, "w") as f:
            f.write(open(ZONE).read() + "dnstap: {sink: syslog:local0}\n")
        line = len(open(ZONE).read().splitlines()) + 1
        r = subprocess.run([GTMESH, "check-config", bad], capture_output=True, text=True, timeout=30)
        t.check(r.returncode == 1 and ("bad.yaml:%d:" % line) in r.stderr and "dnstap.sink" in r.stderr,
                "check-config rejects a bad sink at its line", r.stderr.strip()[:300])
    finally:
        for s in servers:
            s.kill()
        for r in receivers:
            r.stop(signal.SIGKILL)
    if not t.failed:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print("logs: " + work)
    t.finish()


if __name__ == "__main__":
    main()
