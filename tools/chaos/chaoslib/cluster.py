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

CLI differences between today's binaries and the coming ones (Raft,
certificate roles, --advertise, `gtmeshctl configs`) live in one CliProfile,
chosen with GTMESH_CHAOS_CLI=today|raft (or `--cli`)."""
import dataclasses
import hashlib
import os
import re
import shutil

from . import util
from .dns import A, Answer, Resolver
from .procs import Proc, Tmpfs, wait_for_file

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


@dataclasses.dataclass
class CliProfile:
    """What the binaries' command lines look like."""
    name: str
    cert_roles: bool = False          # gtmeshctl ca issue NAME --role decider|agent|operator [--dc DC]
    advertise: bool = False           # gtmesh decider --advertise HOST:PORT
    peers_include_self: bool = False  # every decider gets the full decider set via --peer (Raft membership)
    configs_command: bool = False     # gtmeshctl configs: one line per version, "VERSION HASH ..."
    # Which deciders each decider names with --peer: "earlier" (the ones
    # started before it, like tools/cluster.sh: one connection per pair) or
    # "all". Today "all" makes TLS links flap (see the mesh-stability
    # scenario); Raft membership needs "all".
    peers: str = "earlier"
    # gtmeshctl gets every decider (--decider target --decider other ...) so
    # that it can retry elsewhere (the coming gtmeshctl retries pushes).
    ctl_all_deciders: bool = False


PROFILES = {
    "today": CliProfile("today"),
    "raft": CliProfile("raft", cert_roles=True, advertise=True, peers_include_self=True, configs_command=True,
                       peers="all", ctl_all_deciders=True),
}


def cli_profile(name=None):
    name = name or os.environ.get("GTMESH_CHAOS_CLI", "today")
    if name not in PROFILES:
        raise SystemExit("unknown CLI profile %r (one of %s)" % (name, ", ".join(PROFILES)))
    return PROFILES[name]


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
    tls: bool = True                   # mutual TLS on every mesh link (plain mode: loopback only, soon)
    peers: str = None                  # "all": every decider --peer every other; "earlier": only the ones
                                       # started before it (like tools/cluster.sh); None: the CLI profile's


# The heartbeat and connection timeout every gtmesh process sets
# (core/mesh/node_runtime, docs/mesh.md), and the reconnect backoff ceiling.
HEARTBEAT_S = 0.2
CONNECTION_TIMEOUT_S = 1.0
BACKOFF_MAX_S = 5.0


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
        # All agents of a DC unreachable: the link is declared dead after the
        # connection timeout, the DC down dc-down-after later; or its data
        # goes stale, whichever comes first.
        self.dc_unreachable = min(CONNECTION_TIMEOUT_S + self.dc_down_after,
                                  self.service_stale, self.host_stale) + s.slack_s
        # Back after a heal: the reconnect backoff (at most 5 s), then fresh
        # probe verdicts.
        self.reconnect = BACKOFF_MAX_S + probe * (s.healthy_threshold + 1) + s.slack_s
        self.text = ("failover = probe %.1fs x (threshold %d + 1) + timeout %.1fs + slack %.1fs = %.1fs; "
                     "dc_unreachable = min(conn timeout %.1fs + dc-down-after %.1fs, stale %.1fs) + slack = %.1fs"
                     % (probe, s.unhealthy_threshold, timeout, s.slack_s, self.failover, CONNECTION_TIMEOUT_S,
                        self.dc_down_after, min(self.service_stale, self.host_stale), self.dc_unreachable))

    @staticmethod
    def syn_retransmit_wait(partition_s, syn_retries=6):
        """A connect() that started when a silent partition began retries its
        SYN at 1, 3, 7, 15, 31, 63 s (initial RTO 1 s, doubling); after a
        heal at `partition_s` the next retransmission is at most this far
        away (the kernel gives up after 127 s with 6 retries)."""
        t = 0.0
        rto = 1.0
        for _ in range(syn_retries):
            t += rto
            if t >= partition_s:
                return t - partition_s
            rto *= 2
        return t + rto - partition_s if t + rto > partition_s else 0.0


class PushResult:
    def __init__(self, decider, path, sha, rc, out, err):
        self.decider = decider
        self.path = path
        self.sha = sha
        self.rc = rc
        self.out = out
        self.err = err
        m = re.search(r"accepted as version (\d+)", out)
        self.version = int(m.group(1)) if m else None
        self.acked = rc == 0 and self.version is not None

    def __repr__(self):
        return "<push %s -> %s: %s>" % (os.path.basename(self.path), self.decider,
                                        "v%d" % self.version if self.acked else "rc %d %s" % (self.rc, self.err.strip()[:80]))


class Cluster:
    def __init__(self, janitor, topo, run_dir, tls_dir, spec=None, cli=None, bins=None):
        self.janitor = janitor
        self.topo = topo
        self.dir = run_dir
        self.tls_dir = tls_dir
        self.spec = spec or ClusterSpec()
        self.cli = cli or cli_profile()
        self.gtmesh, self.ctl_bin = bins or binaries()
        self.bounds = Bounds(self.spec)
        self.deciders = ["decider%d" % (i + 1) for i in range(self.spec.deciders)]
        self.procs = {}
        self.tmpfs = {}
        self.config_path = os.path.join(self.dir, "cluster.yaml")
        self.bootstrap_yaml = None
        self.resolver = None
        os.makedirs(self.dir, exist_ok=True)

    # -- topology ------------------------------------------------------------
    @staticmethod
    def hosts(spec):
        h = {"decider%d" % (i + 1): i + 1 for i in range(spec.deciders)}
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

    def backends(self, dc):
        return ["%s:%d" % (self.topo.addr(dc), self.spec.backend_port + i) for i in range(self.spec.backends_per_dc)]

    def down_file(self, dc, i):
        return os.path.join(self.dir, "down-%s-%d" % (dc, i + 1))

    # -- certificates --------------------------------------------------------
    @staticmethod
    def make_ca(tls_dir, ctl_bin, cli, deciders, dcs):
        """The cluster CA and one certificate per node (and the operator)."""
        if os.path.exists(os.path.join(tls_dir, "ca.pem")):
            return
        os.makedirs(tls_dir, exist_ok=True)
        util.run([ctl_bin, "ca", "init", "--dir", tls_dir, "--cluster", "chaos"], timeout=60, check=True)
        issues = [(d, "decider", None) for d in deciders] + [("agent-" + dc, "agent", dc) for dc in dcs] + \
                 [("operator", "operator", None)]
        for name, role, dc in issues:
            argv = [ctl_bin, "ca", "issue", name, "--dir", tls_dir]
            if cli.cert_roles:
                argv += ["--role", role] + (["--dc", dc] if dc else [])
            util.run(argv, timeout=60, check=True)

    def tls_args(self, node_cert):
        if not self.spec.tls:
            return []
        d = self.tls_dir
        return ["--tls-ca", d + "/ca.pem", "--tls-cert", "%s/%s.pem" % (d, node_cert),
                "--tls-key", "%s/%s.key" % (d, node_cert)]

    # -- the config ----------------------------------------------------------
    def config_text(self, marker=1, extra_records=(), cluster_name="chaos", drop_dcs=(), geo=None):
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
    def _proc(self, node, name, argv):
        p = Proc(self.janitor, self.topo, node, name, argv, os.path.join(self.dir, name + ".log"),
                 faketime=self.spec.faketime.get(name))
        self.procs[name] = p
        return p

    def decider_argv(self, d):
        mode = self.spec.peers or self.cli.peers
        if mode == "earlier" and not self.cli.peers_include_self:
            others = self.deciders[:self.deciders.index(d)]
        else:
            others = [x for x in self.deciders if x != d or self.cli.peers_include_self]
        argv = [self.gtmesh, "decider", "--config", self.config_path, "--data-dir", os.path.join(self.dir, d, "data"),
                "--listen", self.mesh_addr(d), "--name", d, "--dns", "%s:%d" % self.dns_server(d),
                "--port-file", os.path.join(self.dir, d + ".ports"), "--dc-down-after", self.spec.dc_down_after]
        if self.spec.faults:
            argv.append("--faults")
        if self.spec.gossip_interval:
            argv += ["--gossip-interval", self.spec.gossip_interval]
        if self.cli.advertise:
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
        return argv + self.tls_args("agent-" + dc) + list(self.spec.agent_args)

    def start(self, wait_answers=True):
        s = self.spec
        os.makedirs(self.dir, exist_ok=True)
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
            self._proc(d, d, self.decider_argv(d))
            self.start_decider(d, wait=False)
        for d in self.deciders:
            self.wait_decider(d)
        for dc in s.dcs:
            self._proc(dc, "agent-" + dc, self.agent_argv(dc)).start()
        self.resolver = Resolver(self.topo, "client")
        self.janitor.push("resolver", self.resolver.close)
        if wait_answers:
            ok, secs, last = util.wait_for(lambda: all(self.query(d, WWW) == www("fra") for d in self.deciders),
                                           45, 0.2)
            if not ok:
                raise RuntimeError("the cluster never answered %s with fra on every responder: %s" % (
                    WWW, {d: self.query(d, WWW) for d in self.deciders}))
            util.log("cluster up: every responder answers %s %s (%.1f s)" % (WWW, www("fra"), secs))
        return self

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
    def _decider_args(self, d, all_deciders=None):
        """--decider d (first), and the others after it when the profile
        lets gtmeshctl retry elsewhere."""
        if all_deciders is None:
            all_deciders = self.cli.ctl_all_deciders
        order = [d] + ([x for x in self.deciders if x != d] if all_deciders else [])
        out = []
        for x in order:
            out += ["--decider", self.mesh_addr(x)]
        return out

    def ctl(self, *args, decider=None, timeout_s=5, node="client", all_deciders=False):
        """gtmeshctl against one decider (status and the like must reach the
        one asked, so no fallback by default)."""
        d = decider or self.deciders[0]
        argv = [self.ctl_bin] + self._decider_args(d, all_deciders) + self.tls_args("operator") + \
               ["--timeout", "%gs" % timeout_s] + list(args)
        return self.topo.run(node, argv, timeout=timeout_s + 20)

    def status(self, decider, attempts=3):
        """`gtmeshctl status` text, or None when the decider did not answer
        (`attempts` tries: a single call can miss under load)."""
        for i in range(attempts):
            r = self.ctl("status", decider=decider)
            if r.returncode == 0:
                return r.stdout
            util.debug("status of %s failed (try %d): %s" % (decider, i + 1, r.stderr.strip()[-200:]))
        return None

    def config_version(self, decider):
        """(version, file) of the active config as status shows it, or None."""
        text = self.status(decider)
        if not text:
            return None
        m = re.search(r"config version (\d+)(?: \(([^)]*)\))?", text)
        return (int(m.group(1)), m.group(2) or "") if m else None

    def write_push_file(self, yaml_text, label):
        sha = hashlib.sha256(yaml_text.encode()).hexdigest()
        path = os.path.join(self.dir, "pushes", "push-%s-%s.yaml" % (label, sha[:16]))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(yaml_text)
        return path, sha

    def push(self, yaml_text, decider=None, label="p", timeout_s=10):
        """Pushes a config (file name carries its sha256 prefix, so that
        today's `status` identifies it); returns a PushResult."""
        path, sha = self.write_push_file(yaml_text, label)
        d = decider or self.deciders[0]
        r = self.ctl("push", path, decider=d, timeout_s=timeout_s, all_deciders=None)
        res = PushResult(d, path, sha, r.returncode, r.stdout, r.stderr)
        util.log("push %s to %s: %s" % (os.path.basename(path), d, res))
        return res

    def push_argv(self, path, decider, timeout_s=10):
        """The command line of a push (to run it in the background)."""
        return self.topo.exec_argv("client", [self.ctl_bin] + self._decider_args(decider) +
                                   self.tls_args("operator") + ["--timeout", "%gs" % timeout_s, "push", path])

    def sha_of_file_name(self, name):
        m = re.search(r"-([0-9a-f]{16})\.yaml$", name or "")
        if m:
            return m.group(1)
        if name and os.path.basename(name) == os.path.basename(self.config_path) and self.bootstrap_yaml:
            return hashlib.sha256(self.bootstrap_yaml.encode()).hexdigest()[:16]
        return None

    def config_history(self, decider):
        """[(version, sha256 prefix or None)], oldest first, of the configs a
        decider holds. With `gtmeshctl configs` (profile raft) that is its
        whole retained history; today only the active version is visible
        (`status`), identified by the pushed file's name. Returns None when
        the decider does not answer."""
        if self.cli.configs_command:
            r = self.ctl("configs", decider=decider)
            if r.returncode != 0:
                return None
            out = []
            for line in r.stdout.splitlines():
                parts = line.split()
                if len(parts) >= 2 and parts[0].isdigit():
                    out.append((int(parts[0]), parts[1].lower()))
            return sorted(out)
        cv = self.config_version(decider)
        if cv is None:
            return None
        return [(cv[0], self.sha_of_file_name(cv[1]))]

    def activated_versions(self, decider):
        """The config versions a decider activated, in order, from its log
        (restores, pushes it accepted, versions it adopted)."""
        out = []
        text = self.procs[decider].log_text()
        for line in text.splitlines():
            m = (re.search(r": config version (\d+) \(([^)]*)\), \d+ measurements restored", line) or
                 re.search(r"accepted config version (\d+) pushed", line) or
                 re.search(r"adopted config version (\d+) from", line))
            if m:
                v = int(m.group(1))
                sha = self.sha_of_file_name(m.group(2)) if m.lastindex and m.lastindex >= 2 else None
                out.append((v, sha))
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
