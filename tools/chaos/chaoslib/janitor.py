"""Everything the harness creates is registered here and removed on exit:
normally, on an exception, on SIGINT/SIGTERM/SIGHUP (atexit + signal
handlers), and after a crash by `tools/chaos/cleanup`, which reads the state
files this module keeps in /run/gtchaos/.

Names: every namespace, mount point and state file carries the run prefix
`gtchaos-<6 hex>`; cleanup only ever touches names with that prefix, and only
those of runs whose owning process is gone (unless told otherwise)."""
import atexit
import json
import os
import secrets
import signal
import threading

from . import util

PREFIX = "gtchaos"
STATE_DIR = "/run/gtchaos"


def new_run_id():
    return "%s-%s" % (PREFIX, secrets.token_hex(3))


class Janitor:
    """A stack of undo actions for one run, plus its state file."""

    def __init__(self, run_id, run_dir):
        self.run_id = run_id
        self.run_dir = run_dir
        self._undo = []  # (label, fn)
        self._lock = threading.RLock()
        self._done = False
        self.state = {"run_id": run_id, "pid": os.getpid(), "run_dir": run_dir, "namespaces": [], "mounts": [],
                      "subnet": None}
        os.makedirs(STATE_DIR, exist_ok=True)
        self._save()
        atexit.register(self.cleanup)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            try:
                signal.signal(sig, self._on_signal)
            except ValueError:  # not the main thread
                pass

    @property
    def state_path(self):
        return os.path.join(STATE_DIR, self.run_id + ".json")

    def _save(self):
        tmp = self.state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.state, f)
        os.replace(tmp, self.state_path)

    def note(self, key, value):
        """Records a created resource in the state file (for `cleanup`)."""
        with self._lock:
            if isinstance(self.state.get(key), list):
                if value not in self.state[key]:
                    self.state[key].append(value)
            else:
                self.state[key] = value
            self._save()

    def forget(self, key, value):
        with self._lock:
            if isinstance(self.state.get(key), list) and value in self.state[key]:
                self.state[key].remove(value)
                self._save()

    def push(self, label, fn):
        """Registers an undo action; returns a token for `pop`."""
        with self._lock:
            entry = (label, fn)
            self._undo.append(entry)
            return entry

    def pop(self, token, run=True):
        """Runs (or just drops) one registered undo action now."""
        with self._lock:
            if token in self._undo:
                self._undo.remove(token)
            else:
                return
        if run:
            self._run_one(token)

    def _run_one(self, entry):
        label, fn = entry
        try:
            fn()
        except Exception as e:  # cleanup goes on with the rest
            util.log("cleanup: %s failed: %s" % (label, e))

    def cleanup(self):
        with self._lock:
            if self._done:
                return
            entries = list(reversed(self._undo))
            self._undo.clear()
        for entry in entries:
            self._run_one(entry)
        with self._lock:
            self._done = True
        try:
            os.remove(self.state_path)
        except OSError:
            pass

    def _on_signal(self, signum, frame):
        util.log("signal %d: cleaning up" % signum)
        self.cleanup()
        os._exit(128 + signum)


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _netns_list():
    r = util.run(["ip", "netns", "list"], timeout=10)
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


def _kill_namespace_processes(ns):
    """Processes inside a harness namespace were started by the harness (the
    namespace exists only for it); SIGCONT then SIGKILL them."""
    r = util.run(["ip", "netns", "pids", ns], timeout=10)
    pids = [int(p) for p in r.stdout.split() if p.isdigit()]
    for pid in pids:
        for sig in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
    return pids


def _mounts():
    out = []
    with open("/proc/self/mounts") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3:
                out.append((parts[1].replace("\\040", " "), parts[2]))
    return out


def remove_run(run_id, state=None):
    """Removes every leftover of one run: processes in its namespaces, its
    tmpfs mounts, its namespaces, its state file. Returns what it removed."""
    removed = []
    namespaces = [ns for ns in _netns_list() if ns.startswith(run_id + "-")]
    for ns in namespaces:
        pids = _kill_namespace_processes(ns)
        if pids:
            removed.append("killed %s in %s" % (" ".join(map(str, pids)), ns))
    # Mounts: only tmpfs under a folder carrying the run id.
    for mnt, fstype in reversed(_mounts()):
        if fstype == "tmpfs" and ("/" + run_id) in mnt:
            r = util.run(["umount", "-l", mnt], timeout=10)
            if r.returncode == 0:
                removed.append("unmounted " + mnt)
    for ns in namespaces:
        r = util.run(["ip", "netns", "del", ns], timeout=10)
        if r.returncode == 0:
            removed.append("deleted namespace " + ns)
    try:
        os.remove(os.path.join(STATE_DIR, run_id + ".json"))
        removed.append("removed state of " + run_id)
    except OSError:
        pass
    return removed


def leftovers(force=False):
    """Run ids with leftovers whose owner is gone (or every one with force)."""
    runs = {}
    if os.path.isdir(STATE_DIR):
        for name in os.listdir(STATE_DIR):
            if name.startswith(PREFIX + "-") and name.endswith(".json"):
                try:
                    with open(os.path.join(STATE_DIR, name)) as f:
                        st = json.load(f)
                    runs[st["run_id"]] = st
                except (OSError, ValueError, KeyError):
                    runs[name[:-5]] = {"run_id": name[:-5], "pid": 0}
    for ns in _netns_list():
        if ns.startswith(PREFIX + "-"):
            parts = ns.split("-")
            if len(parts) >= 3:
                rid = parts[0] + "-" + parts[1]
                runs.setdefault(rid, {"run_id": rid, "pid": 0})
    for mnt, fstype in _mounts():
        if fstype == "tmpfs" and "/" + PREFIX + "-" in mnt:
            tail = mnt.split("/" + PREFIX + "-", 1)[1]
            rid = PREFIX + "-" + tail.split("/")[0].split("-")[0]
            runs.setdefault(rid, {"run_id": rid, "pid": 0})
    out = []
    for rid, st in sorted(runs.items()):
        owner = int(st.get("pid") or 0)
        if force or not owner or not _alive(owner):
            out.append(rid)
    return out


def used_subnets():
    """Third octets of 10.77.N.0/24 that live runs use."""
    used = set()
    if os.path.isdir(STATE_DIR):
        for name in os.listdir(STATE_DIR):
            if name.endswith(".json"):
                try:
                    with open(os.path.join(STATE_DIR, name)) as f:
                        st = json.load(f)
                    if st.get("subnet") is not None and _alive(int(st.get("pid") or 0)):
                        used.add(int(st["subnet"]))
                except (OSError, ValueError):
                    pass
    return used
