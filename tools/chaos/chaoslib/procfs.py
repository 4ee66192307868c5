"""A procfs of the harness's own making, for agents started with --procfs.

The host agent reads the CPU as the share of busy ticks between two samples
of `<root>/stat` (agents/host/procfs.hpp). FakeProcfs writes, for each DC,
counters that grow as the integral of a target percentage the scenario sets
(10,000 ticks a second, finer than the kernel's 100, so that one point of CPU is many ticks), so every sample the agent takes, whenever it takes it,
reads the average of the target over its interval. Memory and network files
are written once with fixed values. A thread rewrites the stat files every
50 ms until stop(); each write is atomic (a rename)."""
import os
import threading
import time

from . import util

TICKS_PER_S = 10000.0
MEMINFO = "MemTotal:       16000000 kB\nMemFree:         8000000 kB\nMemAvailable:    8000000 kB\n"
NET_DEV = ("Inter-|   Receive                                                |  Transmit\n"
           " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls"
           " carrier compressed\n"
           "    lo: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
           "  eth0: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0\n")


class FakeProcfs:
    def __init__(self, base, dcs, percent=50.0):
        self.roots = {dc: os.path.join(base, "procfs-" + dc) for dc in dcs}
        self._target = {dc: float(percent) for dc in dcs}
        self._busy = {dc: 0.0 for dc in dcs}
        self._total = {dc: 0.0 for dc in dcs}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._last = time.monotonic()
        for root in self.roots.values():
            os.makedirs(os.path.join(root, "net"), exist_ok=True)
            with open(os.path.join(root, "meminfo"), "w") as f:
                f.write(MEMINFO)
            with open(os.path.join(root, "net", "dev"), "w") as f:
                f.write(NET_DEV)
        self._advance()
        self._thread = threading.Thread(target=self._run, name="fake-procfs", daemon=True)
        self._thread.start()

    def root(self, dc):
        return self.roots[dc]

    def set_cpu(self, **percent_by_dc):
        """From now on the DCs' CPUs run at these percentages (0..100)."""
        with self._lock:
            self._advance_locked()
            for dc, pct in percent_by_dc.items():
                self._target[dc] = float(pct)
        util.log("fake procfs: cpu " + ", ".join("%s %s %%" % kv for kv in sorted(percent_by_dc.items())))

    def _advance(self):
        with self._lock:
            self._advance_locked()

    def _advance_locked(self):
        now = time.monotonic()
        ticks = (now - self._last) * TICKS_PER_S
        self._last = now
        for dc, root in self.roots.items():
            self._total[dc] += ticks
            self._busy[dc] += ticks * self._target[dc] / 100.0
            busy, total = int(self._busy[dc]), int(self._total[dc])
            idle = total - busy
            # user nice system idle iowait irq softirq steal guest guest_nice
            text = "cpu  %d 0 0 %d 0 0 0 0 0 0\ncpu0 %d 0 0 %d 0 0 0 0 0 0\n" % (busy, idle, busy, idle)
            tmp = os.path.join(root, ".stat.tmp")
            with open(tmp, "w") as f:
                f.write(text)
            os.replace(tmp, os.path.join(root, "stat"))

    def _run(self):
        while not self._stop.wait(0.05):
            self._advance()

    def stop(self):
        self._stop.set()
        self._thread.join(2)
