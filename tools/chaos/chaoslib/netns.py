"""The network: one namespace per node, joined by veth pairs to one Linux
bridge that lives in a hub namespace of its own (so the harness adds
nothing to the host's namespace: no interface, no route, no firewall rule).

    <run>-hub:       bridge br0, one veth end per node (v-<node>)
    <run>-<node>:    lo up, eth0 = 10.77.N.<host>/24

Addresses come from one private /24, 10.77.N.0/24, N chosen so that live runs
never share it. Sockets can be opened inside a namespace from this process
(`socket_in`): a short-lived thread joins the namespace with setns(2), makes
the socket and exits; the socket keeps its namespace."""
import ctypes
import os
import random
import socket
import threading

from . import util
from .janitor import used_subnets

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


class Topology:
    """Namespaces and addresses of one cluster. `hosts` maps node name to the
    last octet of its address."""

    def __init__(self, janitor, hosts, subnet=None, syn_retries=None):
        self.janitor = janitor
        self.run_id = janitor.run_id
        self.hosts = dict(hosts)
        self.subnet = subnet if subnet is not None else self._pick_subnet()
        self.syn_retries = syn_retries
        self.created = []
        self._token = None

    # -- names and addresses -------------------------------------------------
    def ns(self, node):
        return "%s-%s" % (self.run_id, node)

    @property
    def hub(self):
        return self.ns("hub")

    def addr(self, node):
        return "10.77.%d.%d" % (self.subnet, self.hosts[node])

    def node_of(self, address):
        for n in self.hosts:
            if self.addr(n) == address:
                return n
        return None

    def _pick_subnet(self):
        used = used_subnets()
        taken = set()
        r = util.run(["ip", "-4", "-o", "addr"], timeout=10)
        for line in r.stdout.splitlines():
            for word in line.split():
                if word.startswith("10.77."):
                    try:
                        taken.add(int(word.split(".")[2]))
                    except (IndexError, ValueError):
                        pass
        free = [n for n in range(1, 255) if n not in used and n not in taken]
        if not free:
            raise RuntimeError("no free 10.77.N.0/24 for this run")
        return random.choice(free)

    # -- life cycle ----------------------------------------------------------
    def _ip(self, *args, ns=None):
        argv = ["ip"] + (["-n", ns] if ns else []) + list(args)
        return util.run(argv, timeout=15, check=True)

    def create(self):
        self.janitor.note("subnet", self.subnet)
        self._token = self.janitor.push("topology %s" % self.run_id, self.destroy)
        self._add_ns(self.hub)
        self._ip("link", "add", "br0", "type", "bridge", ns=self.hub)
        self._ip("link", "set", "br0", "up", ns=self.hub)
        for node, host in self.hosts.items():
            ns = self.ns(node)
            self._add_ns(ns)
            end = "v-" + node[:12]
            self._ip("link", "add", end, "type", "veth", "peer", "name", "eth0", "netns", ns, ns=self.hub)
            self._ip("link", "set", end, "master", "br0", ns=self.hub)
            self._ip("link", "set", end, "up", ns=self.hub)
            self._ip("addr", "add", "%s/24" % self.addr(node), "dev", "eth0", ns=ns)
            self._ip("link", "set", "eth0", "up", ns=ns)
            if self.syn_retries is not None:
                self.sysctl(node, "net.ipv4.tcp_syn_retries", str(self.syn_retries))
        util.log("topology: %d namespaces on 10.77.%d.0/24 (%s)" % (len(self.hosts) + 1, self.subnet,
                                                                    ", ".join("%s=.%d" % kv for kv in self.hosts.items())))

    def _add_ns(self, ns):
        util.run(["ip", "netns", "add", ns], timeout=15, check=True)
        self.created.append(ns)
        self.janitor.note("namespaces", ns)
        self._ip("link", "set", "lo", "up", ns=ns)

    def destroy(self):
        for ns in reversed(self.created):
            # Any process still inside was started by this harness.
            r = util.run(["ip", "netns", "pids", ns], timeout=10)
            for p in r.stdout.split():
                try:
                    os.kill(int(p), 9)
                except (ProcessLookupError, ValueError):
                    pass
            util.run(["ip", "netns", "del", ns], timeout=15)
            self.janitor.forget("namespaces", ns)
        self.created = []

    def close(self):
        if self._token:
            self.janitor.pop(self._token)
            self._token = None

    # -- inside a namespace --------------------------------------------------
    def exec_argv(self, node, argv):
        """`ip netns exec` replaces itself with argv: the pid is argv's."""
        return ["ip", "netns", "exec", self.ns(node)] + list(argv)

    def run(self, node, argv, timeout=30, check=False, input=None, env=None):
        return util.run(self.exec_argv(node, argv), timeout=timeout, check=check, input=input, env=env)

    def sysctl(self, node, key, value):
        return self.run(node, ["sysctl", "-q", "-w", "%s=%s" % (key, value)], check=True)

    def socket_in(self, node, family=socket.AF_INET, type=socket.SOCK_DGRAM):
        """A socket created inside node's network namespace."""
        result = {}

        def worker():
            fd = os.open("/run/netns/" + self.ns(node), os.O_RDONLY)
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    e = ctypes.get_errno()
                    result["error"] = OSError(e, "setns(%s): %s" % (self.ns(node), os.strerror(e)))
                    return
                result["sock"] = socket.socket(family, type)
            except OSError as e:
                result["error"] = e
            finally:
                os.close(fd)

        t = threading.Thread(target=worker, name="setns-" + node)
        t.start()
        t.join()
        if "error" in result:
            raise result["error"]
        return result["sock"]

    def tcp_connects(self, node, address, port, timeout=1.0):
        """Whether a TCP connection from `node` to address:port succeeds."""
        s = self.socket_in(node, socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect((address, port))
            return True
        except OSError:
            return False
        finally:
            s.close()
