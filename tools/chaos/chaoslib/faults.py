"""Network faults with nftables, inside the harness's namespaces only.

Each node namespace gets one table owned by the harness, `inet gtchaos`, with
an input and an output chain (policy accept). Packets are only ever dropped
on arrival (input chain of the receiving namespace): a packet dropped in the
sender's output chain makes send()/connect() fail at once with EPERM, which
no real network does; dropped on arrival, it is lost on the wire and the
sender notices nothing (a silent partition, SYNs that vanish). Every fault adds rules tagged
with a comment naming the fault ("f3 partition ..."), so it can be healed on
its own; `heal_all` flushes the chains. The host's ruleset is never touched
(the tables live in the namespaces and vanish with them).

    partition(A, B)            A <-/-> B: each side drops the other's packets
    isolate(node)              node <-/-> every node but the client namespace
    one_way(A, B)              A's packets to B are dropped (B -> A still flows;
                               TCP cannot work either way, UDP/ICMP can)
    loss(node, pct, peers)     `numgen random mod 100 < pct drop` on node's
                               traffic to/from peers (default: every other node
                               except the client namespace)
    syn_blackhole(node, port)  new TCP connections to node:port vanish
                               (`tcp flags & (syn|ack) == syn drop`)

Delay is not here: the kernel has no netem; use the in-process hooks
(`gtmeshctl fault LINK delay=100ms`, Cluster.fault_hook)."""
import itertools
import re

from . import util

TABLE = "gtchaos"
_ids = itertools.count(1)


class Fault:
    def __init__(self, firewall, fid, label, nodes):
        self.firewall = firewall
        self.id = fid
        self.label = label
        self.nodes = nodes  # nodes that carry rules of this fault
        self.active = True

    def heal(self):
        if self.active:
            self.firewall._remove(self)
            self.active = False

    def __repr__(self):
        return "<fault %s %s>" % (self.id, self.label)


class Firewall:
    def __init__(self, topo, client_nodes=("client",)):
        self.topo = topo
        self.client_nodes = set(client_nodes)
        self._ready = set()
        self.faults = []

    def _nft(self, node, script):
        r = self.topo.run(node, ["nft", "-f", "-"], input=script, timeout=15)
        if r.returncode != 0:
            raise RuntimeError("nft in %s failed: %s\n%s" % (node, r.stderr.strip(), script))
        return r

    def _ensure(self, node):
        if node in self._ready:
            return
        self._nft(node, "add table inet %s\n"
                        "add chain inet %s input { type filter hook input priority -10; policy accept; }\n"
                        "add chain inet %s output { type filter hook output priority -10; policy accept; }\n"
                  % (TABLE, TABLE, TABLE))
        self._ready.add(node)

    def _addrs(self, nodes):
        return "{ %s }" % ", ".join(self.topo.addr(n) for n in sorted(nodes))

    def _apply(self, label, rules):
        """rules: [(node, chain, rule text)]; returns the Fault."""
        fid = "f%d" % next(_ids)
        by_node = {}
        for node, chain, rule in rules:
            by_node.setdefault(node, []).append("add rule inet %s %s %s comment \"%s %s\"" %
                                                (TABLE, chain, rule, fid, label[:60].replace('"', "'")))
        for node, lines in by_node.items():
            self._ensure(node)
            self._nft(node, "\n".join(lines) + "\n")
        f = Fault(self, fid, label, sorted(by_node))
        self.faults.append(f)
        util.log("fault %s: %s" % (fid, label))
        return f

    def _remove(self, fault):
        for node in fault.nodes:
            r = self.topo.run(node, ["nft", "-a", "list", "table", "inet", TABLE], timeout=15)
            chain = None
            deletes = []
            for line in r.stdout.splitlines():
                m = re.match(r"\s*chain (\w+) \{", line)
                if m:
                    chain = m.group(1)
                    continue
                if ('comment "%s ' % fault.id) in line:
                    h = re.search(r"# handle (\d+)", line)
                    if h and chain:
                        deletes.append("delete rule inet %s %s handle %s" % (TABLE, chain, h.group(1)))
            if deletes:
                self._nft(node, "\n".join(deletes) + "\n")
        if fault in self.faults:
            self.faults.remove(fault)
        util.log("healed %s: %s" % (fault.id, fault.label))

    # -- the faults ----------------------------------------------------------
    def partition(self, a_nodes, b_nodes):
        """Symmetric: nothing flows between any node of A and any of B."""
        a_nodes, b_nodes = list(a_nodes), list(b_nodes)
        rules = [(a, "input", "ip saddr %s drop" % self._addrs(b_nodes)) for a in a_nodes]
        rules += [(b, "input", "ip saddr %s drop" % self._addrs(a_nodes)) for b in b_nodes]
        return self._apply("partition %s | %s" % (",".join(a_nodes), ",".join(b_nodes)), rules)

    def isolate(self, node, keep=None):
        """node cut from every other node except `keep` (default: the client
        namespace, so that its responder can still be queried)."""
        keep = self.client_nodes if keep is None else set(keep)
        others = [n for n in self.topo.hosts if n != node and n not in keep]
        return self.partition([node], others)

    def one_way(self, src_nodes, dst_nodes):
        """src's packets to dst are lost; dst's packets to src arrive."""
        src_nodes, dst_nodes = list(src_nodes), list(dst_nodes)
        rules = [(d, "input", "ip saddr %s drop" % self._addrs(src_nodes)) for d in dst_nodes]
        return self._apply("one-way %s -> %s dropped" % (",".join(src_nodes), ",".join(dst_nodes)), rules)

    def loss(self, node, percent, peers=None):
        """Random loss of `percent` % of the packets between node and each
        peer, both directions (dropped on arrival at either end)."""
        if peers is None:
            peers = [n for n in self.topo.hosts if n != node and n not in self.client_nodes]
        peers = list(peers)
        pct = int(percent)
        rules = [(node, "input", "ip saddr %s numgen random mod 100 < %d drop" % (self._addrs(peers), pct))]
        rules += [(p, "input", "ip saddr %s numgen random mod 100 < %d drop" % (self._addrs([node]), pct))
                  for p in peers]
        return self._apply("%d%% loss %s <-> %s" % (pct, node, ",".join(peers)), rules)

    def syn_blackhole(self, node, port, from_nodes=None):
        """Connection attempts to node:port are silently dropped (the SYN
        vanishes; established connections keep working)."""
        match = "ip saddr %s " % self._addrs(from_nodes) if from_nodes else ""
        rule = "%stcp dport %d tcp flags & (syn | ack) == syn drop" % (match, port)
        return self._apply("SYNs to %s:%d black-holed" % (node, port), [(node, "input", rule)])

    def probe_acl(self, nodes, ports):
        """A firewall change in front of the backends: every TCP packet to
        `ports` arriving in each node is dropped (the agent's own probes
        included); the backends themselves keep serving."""
        ports = sorted(ports)
        rule = "tcp dport { %s } drop" % ", ".join(str(p) for p in ports)
        return self._apply("probes to %s ports %s dropped" % (",".join(nodes), ",".join(map(str, ports))),
                           [(n, "input", rule) for n in nodes])

    def heal_all(self):
        for node in sorted(self._ready):
            self._nft(node, "flush chain inet %s input\nflush chain inet %s output\n" % (TABLE, TABLE))
        for f in self.faults:
            f.active = False
        self.faults = []
        util.log("healed every network fault")

    def counters(self, node):
        """The table's ruleset (for notes and debugging)."""
        return self.topo.run(node, ["nft", "list", "table", "inet", TABLE]).stdout
