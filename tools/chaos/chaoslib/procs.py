"""Processes in namespaces, tmpfs data folders and clock skew.

A Proc is one binary started in one namespace with `ip netns exec` (which
execs the binary: the pid we hold is the binary's), its stdout and stderr
appended to a log file in the run folder. It can be killed with SIGKILL,
paused with SIGSTOP, resumed, stopped and restarted with the same argv.
Every Proc is registered with the janitor, so nothing outlives the run; the
harness only ever signals pids it started.

Clock skew: `faketime=SPEC` starts the process under libfaketime
(LD_PRELOAD of libfaketimeMT, the thread-safe build, FAKETIME=SPEC, e.g.
'+30s', '-5s', '+1h'), without the `faketime` wrapper, which would fork and
leave us holding the wrapper's pid. DONT_FAKE_MONOTONIC=1: only the wall
clock is skewed (what another host with a wrong clock looks like); timers
and timeouts keep real time. See tools/chaos/README.md for the caveats."""
import glob
import os
import signal
import subprocess
import time

from . import util


def faketime_library():
    for pattern in ("/usr/lib/*/faketime/libfaketimeMT.so.1", "/usr/lib/faketime/libfaketimeMT.so.1",
                    "/usr/local/lib/faketime/libfaketimeMT.so.1"):
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def faketime_env(spec):
    lib = faketime_library()
    if not lib:
        raise RuntimeError("libfaketime is not installed (Debian package faketime)")
    return {"LD_PRELOAD": lib, "FAKETIME": spec, "DONT_FAKE_MONOTONIC": "1"}


class Proc:
    def __init__(self, janitor, topo, node, name, argv, log_path, env=None, faketime=None, cwd=None):
        self.janitor = janitor
        self.topo = topo
        self.node = node
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.env = dict(env or {})
        self.faketime = faketime
        self.cwd = cwd
        self.popen = None
        self.starts = 0
        self._token = None

    @property
    def pid(self):
        return self.popen.pid if self.popen else None

    def command(self):
        extra = dict(self.env)
        if self.faketime:
            extra.update(faketime_env(self.faketime))
        prefix = ["env"] + ["%s=%s" % kv for kv in sorted(extra.items())] if extra else []
        return self.topo.exec_argv(self.node, prefix + self.argv)

    def start(self):
        if self.alive():
            raise RuntimeError("%s is already running (pid %d)" % (self.name, self.pid))
        log = open(self.log_path, "ab")
        log.write(("---- chaos: start %s%s\n" % (" ".join(self.argv),
                                                 " (faketime %s)" % self.faketime if self.faketime else "")).encode())
        log.flush()
        # cwd: the run folder (or the one given), so that relative paths in
        # configs never resolve against wherever the harness was started.
        self.popen = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True,
                                      cwd=self.cwd or os.path.dirname(os.path.abspath(self.log_path)))
        log.close()
        self.starts += 1
        if not self._token:
            self._token = self.janitor.push("process %s" % self.name, self.stop)
        util.debug("started %s (pid %d) in %s" % (self.name, self.pid, self.node))
        return self

    def alive(self):
        return self.popen is not None and self.popen.poll() is None

    def signal(self, sig):
        if self.alive():
            try:
                os.kill(self.popen.pid, sig)
                return True
            except ProcessLookupError:
                pass
        return False

    def kill9(self):
        """kill -9 and reap."""
        if self.signal(signal.SIGKILL):
            util.log("kill -9 %s (pid %d)" % (self.name, self.pid))
            self.popen.wait(timeout=10)

    def pause(self):
        if self.signal(signal.SIGSTOP):
            util.log("SIGSTOP %s (pid %d)" % (self.name, self.pid))

    def resume(self):
        if self.signal(signal.SIGCONT):
            util.log("SIGCONT %s (pid %d)" % (self.name, self.pid))

    def stop(self, timeout=10):
        """SIGTERM (after SIGCONT, in case it is paused), SIGKILL at the deadline."""
        if not self.alive():
            return
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            util.log("%s ignored SIGTERM for %ss: SIGKILL" % (self.name, timeout))
            self.kill9()

    def restart(self, faketime=False):
        """Starts again with the same argv (faketime: keep, or a new spec / None)."""
        self.stop()
        if faketime is not False:
            self.faketime = faketime
        return self.start()

    def log_mark(self, text):
        """A line in the process's log (both append), to line its output up
        with the scenario's steps."""
        try:
            with open(self.log_path, "ab") as f:
                f.write(("---- chaos %s: %s\n" % (time.strftime("%H:%M:%S"), text)).encode())
        except OSError:
            pass

    def exited(self):
        return self.popen is not None and self.popen.poll() is not None

    def returncode(self):
        return self.popen.poll() if self.popen else None

    def tail(self, chars=3000):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, 2)
                size = f.tell()
                f.seek(max(0, size - chars))
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""


def wait_for_file(path, seconds, proc=None):
    """Waits for a non-empty file (a port file); fails early if proc died."""
    deadline = util.Deadline(seconds)
    while not deadline.expired():
        try:
            if os.path.getsize(path) > 0:
                return True
        except OSError:
            pass
        if proc is not None and proc.exited():
            return False
        time.sleep(0.02)
    return False


def wait_for_port(topo, node, address, port, seconds, proc=None):
    """Waits until a TCP connection from node to address:port succeeds."""
    deadline = util.Deadline(seconds)
    while not deadline.expired():
        if topo.tcp_connects(node, address, port, timeout=min(1.0, max(0.1, deadline.left()))):
            return True
        if proc is not None and proc.exited():
            return False
        time.sleep(0.05)
    return False


class Tmpfs:
    """A small tmpfs mounted on a folder (a decider's data folder), and a
    filler that takes every free byte and gives them back."""

    def __init__(self, janitor, path, size_mb=32):
        self.janitor = janitor
        self.path = path
        self.size_mb = size_mb
        self.filler = os.path.join(path, "chaos-filler")
        self._token = None

    def mount(self):
        os.makedirs(self.path, exist_ok=True)
        util.run(["mount", "-t", "tmpfs", "-o", "size=%dm,mode=0755" % self.size_mb, "tmpfs", self.path],
                 timeout=15, check=True)
        self.janitor.note("mounts", self.path)
        self._token = self.janitor.push("tmpfs %s" % self.path, self._umount)
        util.log("tmpfs of %d MB on %s" % (self.size_mb, self.path))
        return self

    def _umount(self):
        util.run(["umount", "-l", self.path], timeout=15)
        self.janitor.forget("mounts", self.path)

    def umount(self):
        if self._token:
            self.janitor.pop(self._token)
            self._token = None

    def free_bytes(self):
        st = os.statvfs(self.path)
        return st.f_bavail * st.f_frsize

    def fill(self, leave_bytes=0):
        """Writes a filler file until the file system is full (ENOSPC) or
        only leave_bytes remain. Returns the bytes written."""
        written = 0
        chunk = b"\0" * (1 << 20)
        with open(self.filler, "ab", buffering=0) as f:
            while True:
                room = self.free_bytes() - leave_bytes
                if room <= 0:
                    break
                try:
                    n = f.write(chunk if room >= len(chunk) else chunk[:room])
                except OSError:
                    break
                written += n or 0
            try:
                os.fsync(f.fileno())
            except OSError:
                pass
        # Small writes until nothing fits: tmpfs accounts in pages.
        if leave_bytes == 0:
            with open(self.filler, "ab", buffering=0) as f:
                for size in (65536, 4096, 512, 1):
                    while True:
                        try:
                            n = f.write(b"\0" * size)
                        except OSError:
                            break
                        if not n:
                            break
                        written += n
        util.log("filled %s: %d bytes written, %d free" % (self.path, written, self.free_bytes()))
        return written

    def free(self):
        try:
            os.remove(self.filler)
        except FileNotFoundError:
            pass
        util.log("freed %s: %d bytes free" % (self.path, self.free_bytes()))
