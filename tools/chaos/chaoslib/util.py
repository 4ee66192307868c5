"""Small helpers every chaos module uses: logging, deadlines, polling and
running commands with a timeout. Standard library only."""
import os
import shutil
import subprocess
import sys
import threading
import time

_log_lock = threading.Lock()
_log_file = None
_t0 = time.monotonic()
verbose = os.environ.get("GTMESH_CHAOS_VERBOSE", "") not in ("", "0")


def set_log_file(path):
    """Every log line also goes to `path` (the run directory's chaos.log)."""
    global _log_file
    with _log_lock:
        if _log_file:
            _log_file.close()
        _log_file = open(path, "a", buffering=1) if path else None


def log(msg, *, quiet=False):
    line = "[%7.2f] %s" % (time.monotonic() - _t0, msg)
    with _log_lock:
        if not quiet or verbose:
            print(line, file=sys.stderr, flush=True)
        if _log_file:
            _log_file.write(line + "\n")


def debug(msg):
    log(msg, quiet=True)


class Deadline:
    """A point in monotonic time; `left()` never goes below zero."""

    def __init__(self, seconds):
        self.at = time.monotonic() + seconds

    def left(self):
        return max(0.0, self.at - time.monotonic())

    def expired(self):
        return time.monotonic() >= self.at


def wait_for(fn, seconds, step=0.1, want=True):
    """Polls fn() until it returns `want` (or a truthy value if want is True)
    or `seconds` pass. Returns (ok, seconds taken, last value). Polling with
    a deadline, never a fixed sleep: it returns as soon as the condition
    holds and fails when it never does."""
    start = time.monotonic()
    last = None
    while True:
        last = fn()
        if (bool(last) if want is True else last == want):
            return True, time.monotonic() - start, last
        if time.monotonic() - start >= seconds:
            return False, time.monotonic() - start, last
        time.sleep(step)


def run(argv, timeout=30, check=False, input=None, env=None):
    """Runs a command, returns CompletedProcess (text). Never hangs longer
    than `timeout`: a command that does is killed and reported as rc 124."""
    debug("$ " + " ".join(argv))
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, input=input, env=env)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        r = subprocess.CompletedProcess(argv, 124, out, err + "\n(timed out after %ss)" % timeout)
    if check and r.returncode != 0:
        raise RuntimeError("%s failed (rc %d): %s%s" % (" ".join(argv), r.returncode, r.stdout, r.stderr))
    return r


def missing_prerequisites(tools=("ip", "nft")):
    """Why the harness cannot run here (None when it can): it needs root,
    network namespaces and nftables."""
    if os.geteuid() != 0:
        return "the chaos harness needs root (network namespaces, nftables, tmpfs mounts)"
    for t in tools:
        if not shutil.which(t):
            return "%s is not installed" % t
    probe = "gtchaos-probe-%d" % os.getpid()
    r = run(["ip", "netns", "add", probe], timeout=10)
    if r.returncode != 0:
        return "cannot create a network namespace: %s" % r.stderr.strip()
    try:
        r = run(["ip", "netns", "exec", probe, "nft", "add", "table", "inet", "gtchaos"], timeout=10)
        if r.returncode != 0:
            return "nftables does not work in a network namespace: %s" % r.stderr.strip()
        r = run(["ip", "-n", probe, "link", "add", "v0", "type", "veth", "peer", "name", "v1"], timeout=10)
        if r.returncode != 0:
            return "cannot create veth pairs: %s" % r.stderr.strip()
        r = run(["ip", "-n", probe, "link", "add", "b0", "type", "bridge"], timeout=10)
        if r.returncode != 0:
            return "cannot create a bridge: %s" % r.stderr.strip()
    finally:
        run(["ip", "netns", "del", probe], timeout=10)
    return None


def fmt_s(seconds):
    return "-" if seconds is None else "%.2f s" % seconds
