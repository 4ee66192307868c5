"""Helpers for the system tests that run a cluster with tools/cluster.sh:
the binaries, gtmeshctl against one decider, cluster.env, one UDP query's
rcode and A answers, the leader, the committed config history."""

import base64
import os
import re
import socket
import struct
import subprocess
import time

import gtmesh_dns

SRC = os.environ.get("GTMESH_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
GTMESH = os.environ.get("GTMESH_BIN", os.path.join(SRC, "build", "tools", "gtmesh"))
GTMESHCTL = os.path.join(os.path.dirname(GTMESH), "gtmeshctl")
CLUSTER = os.path.join(SRC, "tools", "cluster.sh")
FRA, IAD = "192.0.2.10", "198.51.100.10"


def cluster(*args, check=True, timeout=120):
    """tools/cluster.sh ARGS with our binaries."""
    return subprocess.run([CLUSTER, *args], check=check, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, env=dict(os.environ, GTMESH_BIN=GTMESH))


def query(server, name, timeout=1):
    """(rcode, sorted A answers) of one UDP query, or (None, []) on timeout."""
    host, port = server.rsplit(":", 1)
    q = gtmesh_dns.make_query(name)
    client = gtmesh_dns.UdpClient(host, int(port))
    r = client.ask(q, timeout=timeout)
    client.close()
    if r is None:
        return None, []
    _, flags, _, an, _, _ = gtmesh_dns.response_header(r)
    pos, out = len(q), []  # the question is echoed
    for _ in range(an):
        pos += 2 if r[pos] & 0xC0 == 0xC0 else r.index(0, pos) + 1 - pos
        rtype, _, _, rdlen = struct.unpack(">HHIH", r[pos:pos + 10])
        pos += 10
        if rtype == 1:
            out.append(socket.inet_ntoa(r[pos:pos + 4]))
        pos += rdlen
    return flags & 0x0F, sorted(out)


def wait_for(fn, seconds, step=0.1):
    """fn()'s first truthy value within `seconds`, else its last value."""
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(step)
    return last


def ctl(mesh, *args, timeout=90):
    return subprocess.run([GTMESHCTL, "--decider", mesh, *args], capture_output=True, text=True, timeout=timeout)


def read_env(path):
    env = {}
    for line in open(path):
        k, _, v = line.strip().partition("=")
        env[k] = v.strip('"')
    return env


def decider_addresses(work):
    """tools/cluster.sh's three deciders started in `work`: ({n: mesh
    address}, {n: [DNS host, DNS port]})."""
    env = read_env(os.path.join(work, "cluster.env"))
    return ({n: env["MESH%d" % n] for n in (1, 2, 3)}, {n: env["DNS%d" % n].rsplit(":", 1) for n in (1, 2, 3)})


# demo.example's ns line in configs/cluster.yaml.in: tests add zone settings after it.
DEMO_NS_LINE = "    ns: [ns1.demo.example.]\n"


def leader_of(mesh):
    out = ctl(mesh, "member", "list").stdout
    m = re.search(r"^(\S+) voter leader", out, re.M)
    return m.group(1) if m else None


def history(mesh):
    """The committed config history as (version, sha256) pairs."""
    out = ctl(mesh, "configs").stdout
    return [tuple(line.split()[:2]) for line in out.splitlines() if re.match(r"^\d+ [0-9a-f]{64} ", line)]


def with_record(text, name, address):
    """A config text with one more A record in the demo zone (before `api`)."""
    return text.replace("      - {name: api,", "      - {name: %s, type: A, ttl: 5, answers: [%s]}\n"
                        "      - {name: api," % (name, address), 1)


def with_random_comments(text, path, megabytes):
    """Writes `text` and then `megabytes` MB of random comment lines to
    `path`: a config that loads as fast as `text` but compresses only about
    4:3, so that its log entry and frames are as large as a config of
    1,000,000 records (issue 42) without the cost of loading one."""
    with open(path, "w") as f, open("/dev/urandom", "rb") as rnd:
        f.write(text)
        for _ in range(megabytes * 1024 * 1024 // 1026):
            f.write("# " + base64.b64encode(rnd.read(768)).decode() + "\n")
