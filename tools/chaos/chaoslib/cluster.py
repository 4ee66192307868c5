"""The namespaced cluster: three deciders (each in its own namespace, mesh on
ADDR:7400, DNS on ADDR:53, RocksDB in its own folder, optionally on a small
tmpfs), one namespace per DC holding that DC's agent and its HTTP backends
(`gtmesh backend`, each with its own down-file), and a client namespace
for dig/dnsperf/gtmeshctl. Every mesh link is mutual TLS with certificates
from `gtmeshctl ca`.

The config is generated here from the same numbers the bounds are derived
from (`Cluster.bounds`), so a scenario's deadline is never a guess:

  www.chaos.example  DC mode, service web healthyBackends, highest, gated
                     on host status up; ties go to the first DC (fra);
                     fail_safe 192.0.2.250 when no DC qualifies
  api.chaos.example  priority profile fra > iad > sin
  cfg.chaos.example  a marker address that identifies the pushed config

Every decider is started with --advertise (its own mesh address) and a
--peer for every other decider (the Raft membership); configs are committed
through the deciders' Raft log. Certificates carry roles (decider, agent
with its DC, operator for gtmeshctl)."""
import calendar
import dataclasses
import hashlib
import os
import re
import shutil
import time

from . import util
from .dns import A, Answer, Resolver
from .procs import Proc, Tmpfs, faketime_env, faketime_library, wait_for_file

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

ZONE = "chaos.example"
WWW = "www." + ZONE
API = "api." + ZONE
CFG = "cfg." + ZONE
DC_ANSWERS = {"fra": "192.0.2.10", "iad": "198.51.100.10", "sin": "203.0.113.10"}
API_ANSWERS = {"fra": "192.0.2.30", "iad": "198.51.100.30", "sin": "203.0.113.30"}
FAIL_SAFE = "192.0.2.250"
LOCATIONS = {"fra": (50.1, 8.7), "iad": (38.9, -77.4), "sin": (1.35, 103.8)}


def www(dc):
    return A(FAIL_SAFE) if dc is None else A(DC_ANSWERS[dc])


def marker_address(n):
    """The cfg record's address for marker n (1..65535)."""
    return "198.18.%d.%d" % (n // 256, n % 256)


def binaries():
    """(gtmesh, gtmeshctl) from GTMESH_BIN / GTMESHCTL_BIN, like tools/cluster.sh."""
    gtmesh = os.environ.get("GTMESH_BIN", os.path.join(SRC, "build", "tools", "gtmesh"))
    ctl = os.environ.get("GTMESHCTL_BIN", os.path.join(os.path.dirname(gtmesh), "gtmeshctl"))
    return os.path.abspath(gtmesh), os.path.abspath(ctl)


def _seconds(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
    if not m:
        raise ValueError("not a duration: " + text)
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m.group(2)]


@dataclasses.dataclass
class ClusterSpec:
    deciders: int = 3
    dcs: tuple = ("fra", "iad", "sin")
    backends_per_dc: int = 2
    mesh_port: int = 7400
    dns_port: int = 53
    backend_port: int = 8081
    host_interval: str = "2s"
    service_interval: str = "2s"
    stale_after: int = 3
    probe_interval: str = "1s"
    probe_timeout: str = "500ms"
    unhealthy_threshold: int = 2
    healthy_threshold: int = 1
    dc_down_after: str = "3s"
    gossip_interval: str = ""          # empty: the decider's default
    faults: bool = True                # --faults (in-process hooks, e.g. delay)
    tmpfs_mb: dict = dataclasses.field(default_factory=dict)      # decider -> MB for its data folder
    faketime: dict = dataclasses.field(default_factory=dict)      # process name -> FAKETIME spec
    decider_args: tuple = ()
    agent_args: tuple = ()
    syn_retries: int = None            # per-namespace net.ipv4.tcp_syn_retries (None: kernel default)
    slack_s: float = 2.0               # scheduling slack on a loaded 2-core machine
    tls: bool = True                   # mutual TLS on every mesh link (plain mode only works on loopback)
    peer_self: bool = False            # also pass a decider its own address with --peer (de-duplicated)
    spare_deciders: int = 0            # namespaces and certificates for deciders that join later (join_decider)
    fake_procfs: bool = False          # agents read CPU from files the harness writes (procfs.FakeProcfs)


# The mesh transport's timings (core/mesh/transport.hpp transport_options,
# agent_link.cpp / decider_actor.cpp backoff): a heartbeat every 300 ms, a
# link that received nothing for 1 s is closed (a hung peer or a silent
# partition is noticed in 1 s), handshakes (TLS + hello) must finish in 3 s,
# connects are asynchronous and give up after 2 s, reconnects back off from
# 200 ms doubling to 5 s. A connect never blocks a node: no SYN
# retransmission terms in any bound.
HEARTBEAT_S = 0.3
IDLE_TIMEOUT_S = 1.0
CONNECTION_TIMEOUT_S = IDLE_TIMEOUT_S  # (old name)
HANDSHAKE_TIMEOUT_S = 3.0
CONNECT_TIMEOUT_S = 2.0
BACKOFF_MIN_S = 0.2
BACKOFF_MAX_S = 5.0
# Raft among the deciders (gtmesh decider --election-timeout, default 1 s;
# the leader's heartbeat, consensus_actor_options::heartbeat_ms, 100 ms).
ELECTION_TIMEOUT_S = 1.0
RAFT_HEARTBEAT_S = 0.1


class Bounds:
    """Deadlines derived from the config and the documented mesh timings."""

    def __init__(self, spec):
        s = spec
        probe = _seconds(s.probe_interval)
        timeout = _seconds(s.probe_timeout)
        svc = max(_seconds(s.service_interval), probe)
        host = _seconds(s.host_interval)
        self.probe_down = probe * s.unhealthy_threshold + timeout
        # A backend going down: threshold failed probes, one more interval
        # for phase, the batch (25 ms), the snapshot (20 ms), gossip.
        self.failover = probe * (s.unhealthy_threshold + 1) + timeout + s.slack_s
        self.recover = probe * (s.healthy_threshold + 1) + s.slack_s
        self.service_stale = svc * s.stale_after
        self.host_stale = host * s.stale_after
        self.dc_down_after = _seconds(s.dc_down_after)
        # All agents of a DC unreachable. The decider(s) they were connected
        # to notice at once (kill -9: the socket closes) or after the idle
        # timeout (a hang, a silent partition) and declare the DC down
        # dc-down-after later; or its data goes stale first. The other
        # deciders never had those agents: they only see the data go stale
        # (docs/mesh.md: "has left a decider"), so every responder agrees
        # only once the staleness bound has passed.
        stale = min(self.service_stale, self.host_stale)
        self.dc_unreachable_own = min(IDLE_TIMEOUT_S + self.dc_down_after, stale) + s.slack_s
        self.dc_unreachable = max(self.dc_unreachable_own, stale + s.slack_s)
        # Back after a heal: a connect pending at the heal fails within the
        # connect timeout (2 s), the next attempt comes at most one backoff
        # ceiling (5 s) later and completes its handshake at once; then
        # fresh probe verdicts reach the deciders.
        self.reconnect = CONNECT_TIMEOUT_S + BACKOFF_MAX_S + probe * (s.healthy_threshold + 1) + s.slack_s
        # A Raft leader lost: an election timeout (randomised up to twice
        # it), one vote round; then gtmeshctl's retry (300 ms) finds it.
        self.new_leader = 2 * ELECTION_TIMEOUT_S + 1.0 + s.slack_s
        # An acknowledged push is committed by a majority and applied by the
        # decider that answered (docs/mesh.md, "A push"); a follower in
        # contact learns the commit from the leader's next AppendEntries (at
        # once, or the next heartbeat) and applies it.
        self.applied_everywhere = RAFT_HEARTBEAT_S + s.slack_s
        self.text = ("failover = probe %.1fs x (threshold %d + 1) + timeout %.1fs + slack %.1fs = %.1fs; "
                     "dc_unreachable on the agents' own decider = min(idle timeout %.1fs + dc-down-after %.1fs, "
                     "stale %.1fs) + slack = %.1fs, on every responder = stale + slack = %.1fs; "
                     "reconnect = connect timeout %.1fs + backoff ceiling %.1fs + probes %.1fs + slack = %.1fs; "
                     "applied_everywhere = Raft heartbeat %.1fs + slack = %.1fs"
                     % (probe, s.unhealthy_threshold, timeout, s.slack_s, self.failover, IDLE_TIMEOUT_S,
                        self.dc_down_after, stale, self.dc_unreachable_own, self.dc_unreachable,
                        CONNECT_TIMEOUT_S, BACKOFF_MAX_S, probe * (s.healthy_threshold + 1), self.reconnect,
                        RAFT_HEARTBEAT_S, self.applied_everywhere))


class PushResult:
    """What one `gtmeshctl push` said. Outcomes:
      acked      "accepted as version N by NAME: committed by a majority of the deciders" (rc 0)
      invalid    refused locally: "gtmeshctl: FILE is invalid; nothing was pushed"
      rejected   a decider's validation refused it: "the config was rejected; the cluster keeps ..."
      no-ack     retried for --retry-for and never committed: "the change was not acknowledged: ..."
                 (it may still be applied later if a majority returns)
      error      anything else (a crash, a timeout of the harness's own bound)"""

    def __init__(self, decider, path, sha, rc, out, err):
        self.decider = decider
        self.path = path
        self.sha = sha
        self.rc = rc
        self.out = out or ""
        self.err = err or ""
        m = re.search(r"accepted as version (\d+) by (\S+): committed by a majority", self.out)
        self.version = int(m.group(1)) if m else None
        self.by = m.group(2) if m else None
        self.acked = rc == 0 and self.version is not None
        if self.acked:
            self.outcome = "acked"
        elif "nothing was pushed" in self.err:
            self.outcome = "invalid"
        elif "the config was rejected" in self.err:
            self.outcome = "rejected"
        elif "the change was not acknowledged" in self.err:
            self.outcome = "no-ack"
        else:
            self.outcome = "error"

    @property
    def clean_failure(self):
        """Not acknowledged and said so, with exit status 1."""
        return not self.acked and self.rc == 1 and self.outcome in ("invalid", "rejected", "no-ack")

    def why(self, limit=160):
        """The first line that says why (for notes)."""
        lines = [l.strip() for l in self.err.splitlines() if l.strip() and "retrying" not in l]
        if self.outcome == "no-ack":
            reasons = [l for l in lines if not l.startswith("gtmeshctl:")]
            return ("not acknowledged: " + (reasons[-1] if reasons else ""))[:limit]
        return (lines[0] if lines else "rc %d" % self.rc)[:limit]

    def __repr__(self):
        return "<push %s -> %s: %s>" % (os.path.basename(self.path), self.decider,
                                        "v%d by %s" % (self.version, self.by) if self.acked
                                        else "%s rc %d %s" % (self.outcome, self.rc, self.why(100)))


@dataclasses.dataclass
class Status:
    """`gtmeshctl status` of one decider, parsed:

    decider NAME: config version N[ (the bootstrap config, not committed yet)][ (FILE)], log index I, ...
      CONFIG NOT APPLIED: ...
      ISOLATED for 3s: ...
      dc fra: host up (age 0ms), web healthyBackends 2 (age 0ms), 1 agent(s) connected
      peers: ADDR (NAME, connected) ADDR (NAME, connected, an older gtmesh without CAPS) ADDR (down)
      consensus: leader|follower|candidate, term T, commit C, applied A, leader ADDR|none[ (NO MAJORITY: ...)]
    """
    text: str
    name: str = None
    version: int = None
    file: str = None
    bootstrap: bool = False
    log_index: int = None
    config_error: str = None
    isolated: str = None
    peers: dict = dataclasses.field(default_factory=dict)   # address -> "connected" / "down"
    role: str = None
    term: int = None
    commit: int = None
    applied: int = None
    leader: str = None
    no_majority: bool = False
    dcs: dict = dataclasses.field(default_factory=dict)     # dc -> its line
    mesh: dict = dataclasses.field(default_factory=dict)    # "idle timeouts" -> n, "failed handshakes" -> n, ...

    @classmethod
    def parse(cls, text):
        st = cls(text)
        m = re.search(r"^decider (\S+): config version (\d+)((?: \([^)]*\))*), log index (\d+)", text, re.M)
        if m:
            st.name = m.group(1)
            st.version = int(m.group(2))
            parens = re.findall(r"\(([^)]*)\)", m.group(3))
            st.bootstrap = any("bootstrap config" in p for p in parens)
            files = [p for p in parens if "bootstrap config" not in p]
            st.file = files[-1] if files else None
            st.log_index = int(m.group(4))
        m = re.search(r"^\s+CONFIG NOT APPLIED: (.*)$", text, re.M)
        st.config_error = m.group(1) if m else None
        m = re.search(r"^\s+(ISOLATED for [^:]*)", text, re.M)
        st.isolated = m.group(1) if m else None
        m = re.search(r"^\s+peers:(.*)$", text, re.M)
        if m:
            for addr, what in re.findall(r"(\S+) \(([^)]*)\)", m.group(1)):
                # "NAME, connected[, an older gtmesh without CAPS]" or "down"
                st.peers[addr] = "connected" if "connected" in what.split(", ") else what
        m = re.search(r"^\s+consensus: (\w+), term (\d+), commit (\d+), applied (\d+), leader (\S+)(.*)$",
                      text, re.M)
        if m:
            st.role = m.group(1)
            st.term, st.commit, st.applied = int(m.group(2)), int(m.group(3)), int(m.group(4))
            st.leader = None if m.group(5) == "none" else m.group(5)
            st.no_majority = "NO MAJORITY" in m.group(6)
        for dc, line in re.findall(r"^\s+dc (\S+): (.*)$", text, re.M):
            st.dcs[dc] = line
        m = re.search(r"^\s+mesh links: (\d+) up; (.*)$", text, re.M)
        if m:
            st.mesh["links up"] = int(m.group(1))
            for n, what in re.findall(r"(\d+) ([a-z][a-z ()]*[a-z)])", m.group(2)):
                st.mesh[what] = int(n)
        return st

    def peers_line(self):
        m = re.search(r"^\s+peers:(.*)$", self.text, re.M)
        return m.group(1).strip() if m else "no peers line"

    def consensus_line(self):
        m = re.search(r"^\s+consensus: (.*)$", self.text, re.M)
        return m.group(1).strip() if m else "no consensus line"


@dataclasses.dataclass
class ConfigRecord:
    """One line of `gtmeshctl configs`: VERSION SHA256 LOG-INDEX FILE BY AT_MS."""
    version: int
    sha: str
    index: int
    file: str
    by: str
    at_ms: int


def parse_configs(text):
    out = []
    for line in text.splitlines():
        parts = line.split()
        # VERSION SHA256 INDEX FILE BY AT_MS, then (since issue 28) SOURCE and
        # the message, which may hold spaces.
        if len(parts) >= 6 and parts[0].isdigit() and re.fullmatch(r"[0-9a-fA-F]{64}", parts[1]):
            out.append(ConfigRecord(int(parts[0]), parts[1].lower(), int(parts[2]), parts[3], parts[4],
                                    int(parts[5])))
    return out


class Cluster:
    def __init__(self, janitor, topo, run_dir, tls_dir, spec=None, bins=None):
        self.janitor = janitor
        self.topo = topo
        self.dir = run_dir
        self.tls_dir = tls_dir
        self.spec = spec or ClusterSpec()
        self.gtmesh, self.ctl_bin = bins or binaries()
        self.bounds = Bounds(self.spec)
        self.deciders = ["decider%d" % (i + 1) for i in range(self.spec.deciders)]
        self.procs = {}
        self.tmpfs = {}
        self.procfs = None  # FakeProcfs when spec.fake_procfs
        self.config_path = os.path.join(self.dir, "cluster.yaml")
        self.bootstrap_yaml = None
        self.resolver = None
        os.makedirs(self.dir, exist_ok=True)

    # -- topology ------------------------------------------------------------
    @staticmethod
    def hosts(spec):
        h = {"decider%d" % (i + 1): i + 1 for i in range(spec.deciders + spec.spare_deciders)}
        for i, dc in enumerate(spec.dcs):
            h[dc] = 11 + i
        h["client"] = 100
        return h

    def mesh_addr(self, decider):
        return "%s:%d" % (self.topo.addr(decider), self.spec.mesh_port)

    def dns_server(self, decider):
        return (self.topo.addr(decider), self.spec.dns_port)

    @property
    def responders(self):
        return {d: self.dns_server(d) for d in self.deciders}

    def decider_dir(self, d):
        """A decider's own folder (its cwd; data/ inside)."""
        return os.path.join(self.dir, d)

    def backends(self, dc):
        return ["%s:%d" % (self.topo.addr(dc), self.spec.backend_port + i) for i in range(self.spec.backends_per_dc)]

    def down_file(self, dc, i):
        return os.path.join(self.dir, "down-%s-%d" % (dc, i + 1))

    # -- certificates --------------------------------------------------------
    # Certificates are made as if it were this long ago (libfaketime on
    # gtmeshctl and the openssl it runs), so that a node whose clock is
    # behind (skew scenarios: -5 s, -1 h) still finds every certificate
    # valid. Without it a clock behind a certificate's notBefore fails
    # every TLS handshake: a test of TLS, not of gtmesh.
    CERT_BACKDATE = "-2h"

    @staticmethod
    def make_ca(tls_dir, ctl_bin, deciders, dcs):
        """The cluster CA and one certificate per node, with its role (and
        an agent's DC), and the operator's for gtmeshctl."""
        os.makedirs(tls_dir, exist_ok=True)
        env = dict(os.environ)
        if faketime_library():
            env.update(faketime_env(Cluster.CERT_BACKDATE))
        if not os.path.exists(os.path.join(tls_dir, "ca.pem")):
            util.run([ctl_bin, "ca", "init", "--dir", tls_dir, "--cluster", "chaos"], timeout=60, check=True, env=env)
        issues = [(d, "decider", None) for d in deciders] + [("agent-" + dc, "agent", dc) for dc in dcs] + \
                 [("operator", "operator", None)]
        for name, role, dc in issues:
            if os.path.exists(os.path.join(tls_dir, name + ".pem")):
                continue  # made for an earlier scenario of this run
            # An agent's certificate binds its instance (a1, as agent_argv runs it).
            argv = [ctl_bin, "ca", "issue", name, "--dir", tls_dir, "--role", role] + \
                (["--dc", dc, "--instance", "a1"] if dc else [])
            util.run(argv, timeout=60, check=True, env=env)

    def cert_not_before(self, name="operator"):
        """notBefore of a certificate, in Unix seconds (None if unknown)."""
        r = util.run(["openssl", "x509", "-noout", "-startdate", "-in", os.path.join(self.tls_dir, name + ".pem")],
                     timeout=10)
        m = re.search(r"notBefore=(.*)", r.stdout)
        if not m:
            return None
        try:
            return calendar.timegm(time.strptime(" ".join(m.group(1).split()), "%b %d %H:%M:%S %Y GMT"))
        except ValueError:
            return None

    def tls_args(self, node_cert):
        if not self.spec.tls:
            return []
        d = self.tls_dir
        return ["--tls-ca", d + "/ca.pem", "--tls-cert", "%s/%s.pem" % (d, node_cert),
                "--tls-key", "%s/%s.key" % (d, node_cert)]

    # -- the config ----------------------------------------------------------
    def config_text(self, marker=1, extra_records=(), cluster_name="chaos", drop_dcs=(), geo=None, www_extra=()):
        s = self.spec
        dcs = [dc for dc in s.dcs if dc not in drop_dcs]
        lines = [
            "# chaos cluster (tools/chaos/chaoslib/cluster.py); marker %d" % marker,
            "cluster: {name: %s}" % cluster_name,
            "measurement: {host_interval: %s, service_interval: %s, client_interval: 2s, stale_after: %d}"
            % (s.host_interval, s.service_interval, s.stale_after),
            "datacenters:",
        ]
        for dc in dcs:
            lat, lon = LOCATIONS.get(dc, (0.0, 0.0))
            b = self.backends(dc)[0]
            lines.append('  - {name: %s, location: {lat: %s, lon: %s}, access_points: {wan: ["%s"], lan: ["%s"]}}'
                         % (dc, lat, lon, b, b))
        lines += [
            "services:",
            "  - name: web",
            "    probe: {protocol: http, path: /health, interval: %s, timeout: %s, unhealthy_threshold: %d,"
            " healthy_threshold: %d, match: {body: OK}}" % (s.probe_interval, s.probe_timeout, s.unhealthy_threshold,
                                                            s.healthy_threshold),
            "    backends:",
        ]
        for dc in dcs:
            lines.append("      %s: [%s]" % (dc, ", ".join('"%s"' % b for b in self.backends(dc))))
        if geo:
            lines.append("geo: {database: %s}" % geo)
        lines += [
            "zones:",
            "  - name: " + ZONE,
            "    soa: {primary: ns1.%s., admin: hostmaster.%s., minimum: 5}" % (ZONE, ZONE),
            "    ns: [ns1.%s.]" % ZONE,
            "    records:",
            "      - {name: ns1, type: A, answers: [%s]}" % self.topo.addr(self.deciders[0]),
            "      - {name: cfg, type: A, ttl: 5, answers: [%s]}" % marker_address(marker),
            "      - name: www",
            "        type: A",
            "        ttl: 5",
            "        dc:",
            "          source: service",
            "          service: web",
            "          metric: healthyBackends",
            "          criterion: highest",
            "          gate: {source: host, metric: status, criterion: {equals: up}}",
            "          answers: {%s}" % ", ".join("%s: [%s]" % (dc, DC_ANSWERS.get(dc, "192.0.2.99")) for dc in dcs),
            "          fail_safe: [%s]" % FAIL_SAFE,
        ]
        lines += ["          " + x for x in www_extra]
        lines += [
            "      - {name: api, type: A, ttl: 5, profile: api}",
        ]
        lines += ["      " + r for r in extra_records]
        lines += [
            "profiles:",
            "  - name: api",
            "    method: priority",
            "    fail_safe: [%s]" % FAIL_SAFE,
            "    endpoints:",
        ]
        for i, dc in enumerate(dcs):
            lines.append("      - {name: %s, kind: dc, dc: %s, service: web, answers: [%s]}"
                         % (dc, dc, API_ANSWERS.get(dc, "192.0.2.98")))
        return "\n".join(lines) + "\n"

    # -- processes -----------------------------------------------------------
    def _proc(self, node, name, argv, cwd=None):
        p = Proc(self.janitor, self.topo, node, name, argv, os.path.join(self.dir, name + ".log"),
                 faketime=self.spec.faketime.get(name), cwd=cwd)
        self.procs[name] = p
        return p

    def decider_argv(self, d):
        # Raft membership: every decider names every other (and, with
        # peer_self, itself too: the binary de-duplicates its own address).
        others = [x for x in self.deciders if x != d or self.spec.peer_self]
        argv = [self.gtmesh, "decider", "--config", self.config_path, "--data-dir", os.path.join(self.dir, d, "data"),
                "--listen", self.mesh_addr(d), "--name", d, "--dns", "%s:%d" % self.dns_server(d),
                "--port-file", os.path.join(self.dir, d + ".ports"), "--dc-down-after", self.spec.dc_down_after]
        if self.spec.faults:
            argv.append("--faults")
        if self.spec.gossip_interval:
            argv += ["--gossip-interval", self.spec.gossip_interval]
        argv += ["--advertise", self.mesh_addr(d)]
        for o in others:
            argv += ["--peer", self.mesh_addr(o)]
        return argv + self.tls_args(d) + list(self.spec.decider_args)

    def agent_argv(self, dc):
        i = list(self.spec.dcs).index(dc)
        n = len(self.deciders)
        order = [self.deciders[(i + k) % n] for k in range(n)]  # fra prefers decider1, iad decider2, ...
        argv = [self.gtmesh, "agent", "--config", self.config_path, "--dc", dc, "--instance", "a1"]
        for d in order:
            argv += ["--decider", self.mesh_addr(d)]
        if self.procfs:
            argv += ["--procfs", self.procfs.root(dc)]
        return argv + self.tls_args("agent-" + dc) + list(self.spec.agent_args)

    def start(self, wait_answers=True):
        s = self.spec
        os.makedirs(self.dir, exist_ok=True)
        if s.fake_procfs and not self.procfs:
            from .procfs import FakeProcfs
            self.procfs = FakeProcfs(self.dir, s.dcs)
        # Backends first: the probes need them.
        for dc in s.dcs:
            for i, b in enumerate(self.backends(dc)):
                name = "backend-%s-%d" % (dc, i + 1)
                pf = os.path.join(self.dir, name + ".port")
                self._proc(dc, name, [self.gtmesh, "backend", "--listen", b, "--name", "%s-%d" % (dc, i + 1),
                                      "--down-file", self.down_file(dc, i), "--port-file", pf])
                if os.path.exists(pf):
                    os.remove(pf)
                self.procs[name].start()
        for dc in s.dcs:
            for i in range(s.backends_per_dc):
                name = "backend-%s-%d" % (dc, i + 1)
                if not wait_for_file(os.path.join(self.dir, name + ".port"), 15, self.procs[name]):
                    raise RuntimeError("%s did not start:\n%s" % (name, self.procs[name].tail()))
        self.bootstrap_yaml = self.config_text()
        with open(self.config_path, "w") as f:
            f.write(self.bootstrap_yaml)
        r = util.run([self.gtmesh, "check-config", self.config_path], timeout=30)
        if r.returncode != 0:
            raise RuntimeError("the generated config does not validate:\n" + r.stdout + r.stderr)
        for d in self.deciders:
            data = os.path.join(self.dir, d, "data")
            if d in s.tmpfs_mb:
                self.tmpfs[d] = Tmpfs(self.janitor, data, s.tmpfs_mb[d]).mount()
            os.makedirs(data, exist_ok=True)
            # Each decider runs in its own folder: a relative path in a pushed
            # config (a geo database) resolves there, so a file can be
            # missing on one decider only (invalid-push).
            self._proc(d, d, self.decider_argv(d), cwd=self.decider_dir(d))
            self.start_decider(d, wait=False)
        for d in self.deciders:
            self.wait_decider(d)
        for dc in s.dcs:
            self._proc(dc, "agent-" + dc, self.agent_argv(dc)).start()
        self.resolver = Resolver(self.topo, "client")
        self.janitor.push("resolver", self.resolver.close)
        self.wait_ready()
        if wait_answers:
            ok, secs, last = util.wait_for(lambda: all(self.query(d, WWW) == www("fra") for d in self.deciders),
                                           45, 0.2)
            if not ok:
                raise RuntimeError("the cluster never answered %s with fra on every responder: %s" % (
                    WWW, {d: self.query(d, WWW) for d in self.deciders}))
            util.log("cluster up: every responder answers %s %s (%.1f s)" % (WWW, www("fra"), secs))
        return self

    def ready(self, deciders=None):
        """Every listed decider (default: all) has a leader, a majority, the
        committed bootstrap config (version >= 1) and every peer connected:
        {decider: Status} when so, else None."""
        out = {}
        for d in deciders or self.deciders:
            st = self.status(d, attempts=1)
            if st is None or st.version is None or st.version < 1 or st.leader is None or st.no_majority or \
                    st.isolated or any(v != "connected" for v in st.peers.values()) or \
                    len(st.peers) < len(self.deciders) - 1:
                return None
            out[d] = st
        return out

    def wait_ready(self, seconds=30, deciders=None):
        """Polls ready() (a leader elected, the bootstrap config committed
        as version 1, every link up) with a deadline."""
        ok, secs, last = util.wait_for(lambda: self.ready(deciders), seconds, 0.2)
        if not ok:
            raise RuntimeError("the deciders never agreed on a leader and config version 1 within %d s: %s" % (
                seconds, {d: (self.status(d, attempts=1) or Status("no answer")).text.splitlines()[:6]
                          for d in (deciders or self.deciders)}))
        util.log("deciders ready in %.1f s: leader %s, config version %s" % (
            secs, next(iter(last.values())).leader, {d: st.version for d, st in last.items()}))
        return last

    def leader(self):
        """The decider that is the Raft leader now (by its own status), or None."""
        for d in self.deciders:
            if not self.procs[d].alive():
                continue
            st = self.status(d, attempts=1)
            if st and st.role == "leader":
                return d
        return None

    def start_decider(self, d, wait=True, seconds=30):
        pf = os.path.join(self.dir, d + ".ports")
        if os.path.exists(pf):
            os.remove(pf)
        self.procs[d].start()
        if wait:
            return self.wait_decider(d, seconds)
        return True

    def wait_decider(self, d, seconds=30, raise_on_failure=True):
        ok = wait_for_file(os.path.join(self.dir, d + ".ports"), seconds, self.procs[d])
        if not ok and raise_on_failure:
            raise RuntimeError("%s did not come up:\n%s" % (d, self.procs[d].tail()))
        return ok

    def join_decider(self, d, seconds=30):
        """Starts spare decider `d` with --join (it names every member as a
        peer); `gtmeshctl member add` then makes it one (it is added to
        self.deciders only then: member_added)."""
        os.makedirs(os.path.join(self.dir, d, "data"), exist_ok=True)
        argv = self.decider_argv(d) + ["--join"]
        self._proc(d, d, argv, cwd=self.decider_dir(d))
        return self.start_decider(d, wait=True, seconds=seconds)

    def member_added(self, d):
        if d not in self.deciders:
            self.deciders.append(d)

    def member_removed(self, d):
        if d in self.deciders:
            self.deciders.remove(d)

    def restart_decider(self, d, seconds=30, raise_on_failure=True):
        p = self.procs[d]
        if p.alive():
            p.stop()
        pf = os.path.join(self.dir, d + ".ports")
        if os.path.exists(pf):
            os.remove(pf)
        p.start()
        return self.wait_decider(d, seconds, raise_on_failure)

    def stop(self):
        for name in list(self.procs):
            if name.startswith("agent-"):
                self.procs[name].stop()
        for name, p in list(self.procs.items()):
            p.stop()
        for t in self.tmpfs.values():
            t.umount()
        if self.procfs:
            self.procfs.stop()

    # -- DC health -----------------------------------------------------------
    def backend_down(self, dc, i):
        open(self.down_file(dc, i), "w").close()

    def backend_up(self, dc, i):
        try:
            os.remove(self.down_file(dc, i))
        except FileNotFoundError:
            pass

    def dc_down(self, dc):
        for i in range(self.spec.backends_per_dc):
            self.backend_down(dc, i)
        util.log("DC %s: every backend fails its health probe" % dc)

    def dc_up(self, dc):
        for i in range(self.spec.backends_per_dc):
            self.backend_up(dc, i)
        util.log("DC %s: backends healthy again" % dc)

    # -- DNS -----------------------------------------------------------------
    def query(self, decider, name=WWW, qtype="A", timeout=0.5):
        return self.resolver.query(self.dns_server(decider), name, qtype, timeout)

    def query_all(self, name=WWW):
        got = self.resolver.query_many(list(self.responders.values()), name)
        return {d: got[self.dns_server(d)] for d in self.deciders}

    # -- gtmeshctl -----------------------------------------------------------
    def _decider_args(self, d, all_deciders=True):
        """--decider d first, then (all_deciders) every other decider, so
        that gtmeshctl retries a push elsewhere when d is gone or no leader."""
        order = [d] + ([x for x in self.deciders if x != d] if all_deciders else [])
        out = []
        for x in order:
            out += ["--decider", self.mesh_addr(x)]
        return out

    def ctl_argv(self, *args, decider=None, timeout_s=5, retry_for_s=None, all_deciders=False):
        d = decider or self.deciders[0]
        argv = [self.ctl_bin] + self._decider_args(d, all_deciders) + self.tls_args("operator") + \
            ["--timeout", "%gs" % timeout_s]
        if retry_for_s is not None:
            argv += ["--retry-for", "%gs" % retry_for_s]
        return argv + list(args)

    def ctl(self, *args, decider=None, timeout_s=5, node="client", all_deciders=False, retry_for_s=None):
        """gtmeshctl (operator certificate) against one decider: status and
        the like must reach the one asked, so no fallback by default."""
        argv = self.ctl_argv(*args, decider=decider, timeout_s=timeout_s, retry_for_s=retry_for_s,
                             all_deciders=all_deciders)
        bound = timeout_s + 20 + (retry_for_s if retry_for_s is not None else 15 if all_deciders else 0)
        return self.topo.run(node, argv, timeout=bound)

    def status(self, decider, attempts=3):
        """A parsed `gtmeshctl status` (Status), or None when the decider did
        not answer (`attempts` tries: a single call can miss under load)."""
        for i in range(attempts):
            r = self.ctl("status", decider=decider)
            if r.returncode == 0 and r.stdout.startswith("decider "):
                return Status.parse(r.stdout)
            util.debug("status of %s failed (try %d): %s" % (decider, i + 1, (r.stderr or r.stdout).strip()[-200:]))
        return None

    def status_text(self, decider):
        st = self.status(decider)
        return st.text if st else ""

    def config_version(self, decider):
        """(version, file) of the config the decider serves, as its status
        shows it (version 0: the bootstrap config, not committed yet), or
        None when it does not answer."""
        st = self.status(decider)
        if st is None or st.version is None:
            return None
        return (st.version, st.file or "")

    def write_push_file(self, yaml_text, label):
        sha = hashlib.sha256(yaml_text.encode()).hexdigest()
        path = os.path.join(self.dir, "pushes", "push-%s-%s.yaml" % (label, sha[:16]))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(yaml_text)
        return path, sha

    def push(self, yaml_text, decider=None, label="p", timeout_s=5, retry_for_s=None, all_deciders=True):
        """Pushes a config through `decider` (gtmeshctl gets every other
        decider too, to retry there, unless all_deciders=False); returns a
        PushResult."""
        path, sha = self.write_push_file(yaml_text, label)
        d = decider or self.deciders[0]
        r = self.ctl("push", path, decider=d, timeout_s=timeout_s, all_deciders=all_deciders, retry_for_s=retry_for_s)
        res = PushResult(d, path, sha, r.returncode, r.stdout, r.stderr)
        util.log("push %s to %s: %s" % (os.path.basename(path), d, res))
        return res

    def push_argv(self, path, decider, timeout_s=5, retry_for_s=None, all_deciders=True):
        """The command line of a push (to run it in the background)."""
        return self.topo.exec_argv("client", self.ctl_argv("push", path, decider=decider, timeout_s=timeout_s,
                                                           retry_for_s=retry_for_s, all_deciders=all_deciders))

    def config_history(self, decider):
        """[ConfigRecord], oldest first: the committed config history a
        decider holds (`gtmeshctl configs`; the bootstrap config is version
        1). None when the decider does not answer."""
        for i in range(3):
            r = self.ctl("configs", decider=decider)
            if r.returncode == 0:
                return sorted(parse_configs(r.stdout), key=lambda c: c.version)
            util.debug("configs of %s failed (try %d): %s" % (decider, i + 1, r.stderr.strip()[-200:]))
        return None

    def activated_versions(self, decider):
        """The config versions a decider activated, in order, from its log:
        the restore line at each start ("config version N (FILE), log index
        I, M measurements restored") and "config version N is active"."""
        out = []
        for line in self.procs[decider].log_text().splitlines():
            m = (re.search(r": config version (\d+) .*, log index \d+, \d+ measurements restored", line) or
                 re.search(r": config version (\d+) is active", line))
            if m:
                out.append(int(m.group(1)))
        return out

    def log_events(self, decider, since_mark=None):
        """Link and consensus events in a decider's log (after the last
        marker line containing since_mark, if given): a list of (kind, line)
        with kind one of peer-down, decider-disconnected, agent-left,
        peer-connected, no-majority, majority-back, consensus-restart."""
        text = self.procs[decider].log_text()
        if since_mark:
            i = text.rfind(since_mark)
            text = text[i:] if i >= 0 else text
        kinds = [("peer-down", r": peer \S+ is down: "), ("decider-disconnected", r": decider \S+ disconnected: "),
                 ("agent-left", r": agent \S+ left: "), ("peer-connected", r": connected to peer "),
                 ("no-majority", r": no majority of deciders reachable"),
                 ("majority-back", r": a majority of deciders is reachable again"),
                 ("consensus-restart", r"the consensus server stopped"),
                 ("persist-failed", r"persisting (the committed )?state failed")]
        out = []
        for line in text.splitlines():
            for kind, pat in kinds:
                if re.search(pat, line):
                    out.append((kind, line.strip()))
                    break
        return out

    def mark(self, text):
        """Writes a timestamped marker line into every decider's and agent's log."""
        for name, p in self.procs.items():
            if not name.startswith("backend-"):
                p.log_mark(text)

    def fault_hook(self, link, spec, decider):
        """In-process fault hooks (delay lives here: no netem)."""
        return self.ctl("fault", link, spec, decider=decider)

    def logs_tail(self, chars=1500):
        out = []
        for name, p in sorted(self.procs.items()):
            if name.startswith("backend-"):
                continue
            out.append("---- %s\n%s" % (name, p.tail(chars)))
        return "\n".join(out)


def copy_if_exists(src, dst):
    if os.path.exists(src):
        shutil.copy(src, dst)
