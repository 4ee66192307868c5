"""DNS clients in the client namespace.

- `Answer`: what one query returned: rcode and the sorted A/AAAA addresses,
  or TIMEOUT. Answers compare by value, so expectations are plain sets.
- `query`: one query with a minimal stdlib DNS client over a UDP socket made
  inside the client namespace (no process per query: the query loop costs
  almost no CPU).
- `dig`: the real dig, run in the client namespace, output parsed.
- `QueryLoop`: a background thread that queries every responder at a fixed
  rate, bounded in count and time, and records (time, responder, answer).
  Expectations are set per phase (`expect(t, acceptable)`), and `score()`
  counts sent / answered / wrong; `converged_at()` finds the moment after
  which every responder answered only what a phase expects.
- `dnsperf`: one bounded dnsperf run (-l seconds, -Q rate) per responder,
  its statistics parsed."""
import random
import re
import select
import socket
import struct
import threading
import time

from . import util


class Answer:
    """What one query returned: rcode and sorted addresses, e.g.
    Answer('NOERROR', ['192.0.2.10']), Answer('NXDOMAIN'), TIMEOUT. Compares
    and hashes by value, so expectations are plain sets of Answers."""
    __slots__ = ("key",)

    def __init__(self, rcode, addrs=()):
        self.key = (rcode,) + tuple(sorted(addrs))

    @property
    def rcode(self):
        return self.key[0]

    @property
    def addrs(self):
        return self.key[1:]

    @property
    def answered(self):
        return self.key[0] != "TIMEOUT"

    def __eq__(self, other):
        return isinstance(other, Answer) and self.key == other.key

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.key)

    def __lt__(self, other):
        return self.key < other.key

    def __repr__(self):
        if self.key[0] == "NOERROR":
            return "[" + " ".join(self.key[1:]) + "]" if self.key[1:] else "NODATA"
        return self.key[0]

    __str__ = __repr__


def A(*addrs):
    """An expected NOERROR answer with exactly these addresses."""
    return Answer("NOERROR", addrs)


TIMEOUT = Answer("TIMEOUT")
RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}
QTYPES = {"A": 1, "AAAA": 28, "TXT": 16, "SOA": 6, "NS": 2}


def build_query(qid, name, qtype="A"):
    q = struct.pack(">HHHHHH", qid, 0, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack(">HH", QTYPES[qtype], 1)


def _skip_name(msg, off):
    while True:
        n = msg[off]
        if n & 0xC0 == 0xC0:
            return off + 2
        if n == 0:
            return off + 1
        off += 1 + n


def parse_response(msg):
    """(id, Answer) from a response; raises ValueError on garbage."""
    if len(msg) < 12:
        raise ValueError("short")
    qid, flags, qd, an, _, _ = struct.unpack(">HHHHHH", msg[:12])
    if not flags & 0x8000:
        raise ValueError("not a response")
    rcode = RCODES.get(flags & 0xF, "RCODE%d" % (flags & 0xF))
    if flags & 0x0200:
        return qid, Answer("TRUNCATED")
    off = 12
    for _ in range(qd):
        off = _skip_name(msg, off) + 4
    addrs = []
    for _ in range(an):
        off = _skip_name(msg, off)
        rtype, _, _, rdlen = struct.unpack(">HHIH", msg[off:off + 10])
        off += 10
        rdata = msg[off:off + rdlen]
        off += rdlen
        if rtype == 1 and rdlen == 4:
            addrs.append(socket.inet_ntop(socket.AF_INET, rdata))
        elif rtype == 28 and rdlen == 16:
            addrs.append(socket.inet_ntop(socket.AF_INET6, rdata))
    return qid, Answer(rcode, addrs)


class Resolver:
    """Queries responders from one namespace over one UDP socket."""

    def __init__(self, topo, node="client"):
        self.sock = topo.socket_in(node, socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("0.0.0.0", 0))
        self.sock.setblocking(False)
        self._lock = threading.Lock()

    def close(self):
        self.sock.close()

    def query_many(self, servers, name, qtype="A", timeout=0.5):
        """Sends one query to each (addr, port) at once; returns
        {server: Answer} (TIMEOUT for those that did not answer in time)."""
        with self._lock:
            # Drain late answers of earlier rounds.
            while True:
                try:
                    self.sock.recvfrom(4096)
                except (BlockingIOError, InterruptedError):
                    break
            pending = {}
            for srv in servers:
                qid = random.randrange(65536)
                while qid in pending:
                    qid = random.randrange(65536)
                pending[qid] = srv
                try:
                    self.sock.sendto(build_query(qid, name, qtype), srv)
                except OSError:
                    pass
            out = {srv: TIMEOUT for srv in servers}
            deadline = time.monotonic() + timeout
            waiting = set(pending)
            while waiting:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                r, _, _ = select.select([self.sock], [], [], left)
                if not r:
                    break
                try:
                    msg, frm = self.sock.recvfrom(4096)
                    qid, ans = parse_response(msg)
                except (OSError, ValueError, struct.error, IndexError):
                    continue
                srv = pending.get(qid)
                if srv is not None and qid in waiting and frm[0] == srv[0]:
                    out[srv] = ans
                    waiting.discard(qid)
            return out

    def query(self, server, name, qtype="A", timeout=0.5):
        return self.query_many([server], name, qtype, timeout)[server]


def steady(w, timeout_share=0.02):
    """A window of answers (QueryLoop.window) that kept answering right:
    no wrong answer, and timeouts only as the odd lost UDP query (at most 2 %,
    at least 1 allowed: the harness and three deciders share two cores)."""
    return w["wrong"] == 0 and w["timeouts"] <= max(1, int(w["sent"] * timeout_share))


def dig(topo, server, name, qtype="A", node="client", extra=()):
    """The real dig from the client namespace; returns an Answer."""
    host, port = server
    r = topo.run(node, ["dig", "@" + host, "-p", str(port), name, qtype, "+time=1", "+tries=1", "+noall",
                        "+comments", "+answer", *extra], timeout=10)
    if r.returncode == 9 or "connection timed out" in r.stdout or "timed out" in r.stdout:
        return TIMEOUT
    m = re.search(r"status: (\w+)", r.stdout)
    rcode = m.group(1) if m else "UNKNOWN"
    addrs = []
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 5 and not line.startswith(";") and parts[3] in ("A", "AAAA"):
            addrs.append(parts[4])
    return Answer(rcode, addrs)


class QueryLoop:
    """Queries every responder `rate` times per second for at most
    `max_seconds` and `max_rounds` rounds (bounded in count and time)."""

    def __init__(self, resolver, responders, name, qtype="A", rate=10.0, max_seconds=120, max_rounds=5000,
                 timeout=0.4):
        self.resolver = resolver
        self.responders = dict(responders)  # label -> (addr, port)
        self.name = name
        self.qtype = qtype
        self.interval = 1.0 / rate
        self.max_seconds = max_seconds
        self.max_rounds = max_rounds
        self.timeout = min(timeout, max(0.05, self.interval * 0.9))
        self.records = []  # (t, label, Answer)
        self.expectations = []  # (t, label, set(Answer) or None for "anything"), sorted by t
        self.marks = []  # (t, text)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self.started = None
        self.excluded = {}  # label -> [(t0, t1)] windows not scored (a dead responder)
        self.on_mark = []  # callables(text), e.g. Cluster.mark

    def start(self):
        self.started = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="query-loop", daemon=True)
        self._thread.start()
        return self

    def _run(self):
        deadline = self.started + self.max_seconds
        rounds = 0
        servers = {v: k for k, v in self.responders.items()}
        while not self._stop.is_set() and rounds < self.max_rounds and time.monotonic() < deadline:
            t = time.monotonic()
            got = self.resolver.query_many(list(servers), self.name, self.qtype, self.timeout)
            with self._lock:
                for srv, ans in got.items():
                    self.records.append((t, servers[srv], ans))
            rounds += 1
            self._stop.wait(max(0.0, self.interval - (time.monotonic() - t)))

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)

    def running(self):
        return self._thread is not None and self._thread.is_alive()

    # -- phases --------------------------------------------------------------
    def mark(self, text):
        t = time.monotonic()
        with self._lock:
            self.marks.append((t, text))
        util.log("mark: " + text, quiet=True)
        for hook in self.on_mark:
            hook(text)
        return t

    def expect(self, t, acceptable, responders=None, why=None):
        """From monotonic time t on, answers of `responders` (default: all)
        must be in `acceptable` (an Answer or a collection of them; None:
        anything that answers is fine, and `why` says why: such windows are
        printed with the result). It replaces every expectation of those
        responders that starts later than t (a new phase cancels what an
        earlier one planned for its future)."""
        if isinstance(acceptable, Answer):
            acceptable = {acceptable}
        elif acceptable is not None:
            acceptable = set(acceptable)
        elif not why:
            raise ValueError("an expectation that accepts any answer needs a reason (why=...)")
        labels = set(self.responders) if responders is None else set(responders)
        with self._lock:
            self.expectations = [e for e in self.expectations if not (e[0] > t and e[1] in labels)]
            for label in sorted(labels):
                self.expectations.append((t, label, acceptable, why))
            self.expectations.sort(key=lambda e: e[0])

    def unjudged(self):
        """The windows in which a responder's answers were not judged, as
        (label, seconds, why): any answer accepted, or excluded (dead)."""
        with self._lock:
            exps = list(self.expectations)
            end = self.records[-1][0] if self.records else time.monotonic()
        out = []
        for i, (t, label, acc, why) in enumerate(exps):
            if acc is not None:
                continue
            nxt = next((e[0] for e in exps[i + 1:] if e[1] == label), end)
            if nxt > t:
                out.append((label, nxt - t, why))
        for label, windows in self.excluded.items():
            for t0, t1 in windows:
                out.append((label, (t1 if t1 is not None else end) - t0, "excluded (not running)"))
        return out

    def exclude(self, label, t0, t1=None):
        """Do not score label's answers between t0 and t1 (a responder that
        is deliberately dead or paused). Calling it again with the same t0
        closes (or reopens) that window."""
        windows = [w for w in self.excluded.get(label, []) if w[0] != t0]
        windows.append((t0, t1))
        self.excluded[label] = windows

    def _acceptable(self, t, label):
        acc = "unset"
        for te, lab, a, _ in self.expectations:
            if te > t:
                break
            if lab == label:
                acc = a
        return acc

    def _is_excluded(self, t, label):
        for t0, t1 in self.excluded.get(label, []):
            if t >= t0 and (t1 is None or t < t1):
                return True
        return False

    def snapshot(self):
        with self._lock:
            return list(self.records)

    def last(self, label):
        for t, lab, ans in reversed(self.snapshot()):
            if lab == label:
                return ans
        return None

    def score(self):
        """{'sent', 'answered', 'wrong', 'per': {label: {...}}, 'wrong_examples': [...]}"""
        per = {label: {"sent": 0, "answered": 0, "wrong": 0} for label in self.responders}
        examples = []
        for t, label, ans in self.snapshot():
            if self._is_excluded(t, label):
                continue
            p = per[label]
            p["sent"] += 1
            if ans.answered and ans.rcode != "TRUNCATED":
                p["answered"] += 1
                acc = self._acceptable(t, label)
                if acc not in ("unset", None) and ans not in acc:
                    p["wrong"] += 1
                    if len(examples) < 8:
                        examples.append("%s at +%.2fs: %s (expected %s)" % (
                            label, t - self.started, ans, " or ".join(sorted(map(str, acc)))))
        total = {k: sum(p[k] for p in per.values()) for k in ("sent", "answered", "wrong")}
        total["per"] = per
        total["wrong_examples"] = examples
        return total

    def converged_at(self, since, acceptable, labels=None, hold=3):
        """The earliest time T >= since such that from T on every listed
        responder answered only `acceptable` (at least `hold` answers each),
        or None. Timeouts break convergence too."""
        if isinstance(acceptable, Answer):
            acceptable = {acceptable}
        labels = list(self.responders) if labels is None else list(labels)
        worst = since
        for label in labels:
            recs = [(t, a) for t, lab, a in self.snapshot() if lab == label and t >= since]
            if len(recs) < hold:
                return None
            first_good = None
            for t, a in recs:
                if a in acceptable:
                    if first_good is None:
                        first_good = t
                else:
                    first_good = None
            if first_good is None:
                return None
            n_good = sum(1 for t, a in recs if t >= first_good)
            if n_good < hold:
                return None
            worst = max(worst, first_good)
        return worst

    def wait_converged(self, since, acceptable, seconds, labels=None, hold=3):
        """Polls until converged (returns seconds after `since`) or the
        deadline passes (returns None)."""
        deadline = util.Deadline(seconds + hold * self.interval + 1.0)
        while not deadline.expired():
            t = self.converged_at(since, acceptable, labels, hold)
            if t is not None:
                return t - since
            if not self.running():
                break
            time.sleep(self.interval)
        t = self.converged_at(since, acceptable, labels, hold)
        return None if t is None else t - since

    def window(self, label, t0, t1=None, acceptable=None):
        """Counts of one responder's answers between t0 and t1: {'sent',
        'answered', 'timeouts', 'wrong'} where wrong = answered but not in
        `acceptable` (an Answer or a collection; None: nothing is wrong)."""
        if isinstance(acceptable, Answer):
            acceptable = {acceptable}
        out = {"sent": 0, "answered": 0, "timeouts": 0, "wrong": 0}
        for a in self.answers_between(label, t0, t1):
            out["sent"] += 1
            if a.answered and a.rcode != "TRUNCATED":
                out["answered"] += 1
                if acceptable is not None and a not in acceptable:
                    out["wrong"] += 1
            else:
                out["timeouts"] += 1
        return out

    def answers_between(self, label, t0, t1=None):
        return [a for t, lab, a in self.snapshot() if lab == label and t >= t0 and (t1 is None or t < t1)]

    def summary(self, label, t0, t1=None):
        """'[192.0.2.10] x12, TIMEOUT x3' for one responder in a window."""
        counts = {}
        order = []
        for a in self.answers_between(label, t0, t1):
            if a not in counts:
                order.append(a)
                counts[a] = 0
            counts[a] += 1
        return ", ".join("%s x%d" % (a, counts[a]) for a in order) or "nothing"


def dnsperf(topo, server, names, seconds=5, rate=100, node="client", work_dir="/tmp", clients=1):
    """One dnsperf run against server (addr, port), bounded by -l and -Q.
    Returns a dict of its statistics (sent, completed, lost, rcodes, qps,
    avg_latency_s) or {'error': ...}."""
    import os
    import tempfile
    fd, path = tempfile.mkstemp(prefix="dnsperf-", suffix=".txt", dir=work_dir)
    with os.fdopen(fd, "w") as f:
        for n in names:
            f.write("%s A\n" % n)
    host, port = server
    r = topo.run(node, ["dnsperf", "-s", host, "-p", str(port), "-d", path, "-l", str(seconds), "-Q", str(rate),
                        "-c", str(clients), "-t", "1"], timeout=seconds + 30)
    os.remove(path)
    return parse_dnsperf(r.stdout + r.stderr) if r.returncode == 0 else {"error": (r.stdout + r.stderr)[-500:]}


def parse_dnsperf(text):
    out = {}
    m = re.search(r"Queries sent:\s+(\d+)", text)
    if m:
        out["sent"] = int(m.group(1))
    m = re.search(r"Queries completed:\s+(\d+)", text)
    if m:
        out["completed"] = int(m.group(1))
    m = re.search(r"Queries lost:\s+(\d+)", text)
    if m:
        out["lost"] = int(m.group(1))
    m = re.search(r"Response codes:\s+(.*)", text)
    if m:
        out["rcodes"] = {k: int(v) for k, v in re.findall(r"(\w+) (\d+) \(", m.group(1))}
    m = re.search(r"Queries per second:\s+([\d.]+)", text)
    if m:
        out["qps"] = float(m.group(1))
    m = re.search(r"Average Latency \(s\):\s+([\d.]+)", text)
    if m:
        out["avg_latency_s"] = float(m.group(1))
    if not out:
        out["error"] = text[-500:]
    return out
