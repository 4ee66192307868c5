"""Hostile clients before authentication: handshake slots held open."""
import errno
import os
import select
import socket
import threading
import time

from .. import util
from ..cluster import www
from ..netns import CLONE_NEWNET, _libc
from ..scenario import scenario
from ..steps import baseline


class SlotHolder(threading.Thread):
    """From `sources` (addresses of the client namespace), holds `per_source`
    TCP connections each open to target:port without sending a byte, and
    opens a new one as soon as the decider closes one (the attack of issue
    24: 20 addresses x 8 half-open connections, reopened as they close).
    One thread, inside the namespace; bounded in time and in connections."""

    def __init__(self, topo, node, sources, per_source, target, port, seconds, max_opens=50000):
        super().__init__(daemon=True)
        self.topo, self.node, self.sources, self.per_source = topo, node, sources, per_source
        self.target, self.port, self.seconds, self.max_opens = target, port, seconds, max_opens
        self.stop = threading.Event()
        self.opened = self.closed_by_peer = 0
        self.error = None

    def _open(self, source):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind((source, 0))
        rc = s.connect_ex((self.target, self.port))
        if rc not in (0, errno.EINPROGRESS):
            s.close()
            return None
        self.opened += 1
        return s

    def run(self):
        fd = os.open("/run/netns/" + self.topo.ns(self.node), os.O_RDONLY)
        try:
            if _libc.setns(fd, CLONE_NEWNET) != 0:
                self.error = "setns failed"
                return
        finally:
            os.close(fd)
        held = {}  # socket -> source
        deadline = time.monotonic() + self.seconds
        try:
            while not self.stop.is_set() and time.monotonic() < deadline and self.opened < self.max_opens:
                for src in self.sources:
                    while sum(1 for v in held.values() if v == src) < self.per_source:
                        s = self._open(src)
                        if s is None:
                            break
                        held[s] = src
                readable, _, _ = select.select(list(held), [], [], 0.05)
                for s in readable:
                    try:
                        gone = s.recv(4096) == b""
                    except (BlockingIOError, InterruptedError):
                        gone = False
                    except OSError:
                        gone = True
                    if gone:
                        self.closed_by_peer += 1
                        del held[s]
                        s.close()
        finally:
            for s in held:
                s.close()


@scenario("preauth-lockout",
          fault="from 20 source addresses, 8 TCP connections each are held open to decider1's mesh port without "
                "sending a byte, each reopened as soon as it is closed (no certificate needed); decider2 is killed "
                "(-9) and restarted during the attack",
          prop="the oldest pending handshakes are closed to make room (counted), so gtmeshctl status on decider1 "
               "answers 10 of 10 during the attack, decider2 links to decider1 again within the reconnect bound, "
               "and every answer stays fra",
          order=96)
def preauth_lockout(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra = www("fra")
    subnet = c.topo.addr("client").rsplit(".", 1)[0]
    sources = ["%s.%d" % (subnet, 150 + i) for i in range(20)]
    for a in sources:
        c.topo.run("client", ["ip", "addr", "add", a + "/24", "dev", "eth0"], check=True)
    before = (c.status("decider1") or None)
    attack = SlotHolder(c.topo, "client", sources, 8, c.topo.addr("decider1"), c.spec.mesh_port, seconds=60)
    q.mark("handshake slots of decider1 held from 20 addresses")
    attack.start()
    ok, _, _ = util.wait_for(lambda: attack.opened >= 160, 10, 0.05)
    ctx.require(ok and attack.error is None, "the attack holds 160 connections (%d opened, %s)"
                % (attack.opened, attack.error or "no error"))
    answered, slowest = 0, 0.0
    for _ in range(10):
        t0 = time.monotonic()
        r = c.ctl("status", decider="decider1", timeout_s=3)
        slowest = max(slowest, time.monotonic() - t0)
        answered += r.returncode == 0 and "decider decider1" in r.stdout
    ctx.check(answered == 10, "gtmeshctl status on decider1 answers %d of 10 during the attack (slowest %.2f s)"
              % (answered, slowest))
    t_kill = q.mark("decider2 killed during the attack")
    q.exclude("decider2", t_kill)
    c.procs["decider2"].kill9()
    c.start_decider("decider2")

    def relinked():
        st = c.status("decider1", attempts=1)
        return st is not None and st.peers.get(c.mesh_addr("decider2")) == "connected"

    ok, secs, _ = util.wait_for(relinked, 2 * b.reconnect, 0.1)
    ctx.converged("decider2 restarted during the attack -> linked to decider1 again", secs if ok else None,
                  b.reconnect)
    ok2, _, _ = util.wait_for(lambda: c.query("decider2") == fra, 15, 0.1)
    t_up = q.mark("decider2 back")
    q.exclude("decider2", t_kill, t_up)
    ctx.check(ok2, "restarted decider2 answers fra")
    st = c.status("decider1")
    attack.stop.set()
    attack.join(10)
    made_room = (st.mesh.get("evicted (the oldest handshake made room)", 0) if st else 0) - \
        (before.mesh.get("evicted (the oldest handshake made room)", 0) if before else 0)
    refused = st.mesh.get("refused (too many handshakes)", 0) if st else 0
    ctx.check(made_room > 0 or refused > 0,
              "decider1 made room by closing pending handshakes: %d evicted, %d refused at accept (%d opened, %d "
              "closed by decider1)" % (made_room, refused, attack.opened, attack.closed_by_peer))
    ctx.note("attack: %d connections opened, %d closed by decider1; status slowest %.2f s"
             % (attack.opened, attack.closed_by_peer, slowest))
