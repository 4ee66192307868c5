#!/usr/bin/env python3
"""The command lines of gtmesh and gtmeshctl, as a newcomer meets them.

  1. every command and subcommand of both binaries answers `CMD --help` and
     `help CMD` (and, for some, `CMD -h` and --help among other arguments)
     with its own usage
     line and an example on stdout, exit 0, and not the global usage; bare
     `--help`, `-h` and `help` print the global usage, exit 0
  2. the commands the global usage lists are the commands each binary has
  3. help contacts no decider and writes no file, whatever else is given
  4. an unknown command, subcommand or option, or an option without its
     value, is a usage error: exit 2, on stderr, naming the word and
     pointing at help
  5. every option a command's help lists is accepted by that command's
     parser (which also checks, when it is done, that it read exactly the
     options the table lists: exit 70 otherwise)
  6. the shipped configs/examples/dnssec.yaml passes check-config on a clean
     tree (a warning names the missing key and the keygen command); the
     documented keygen command writes the key where the example names it,
     after which the example loads signed; a key file that exists but is
     corrupt is an error; a node (gtmesh serve) refuses the config without
     its key, naming file, line and field; no private key is tracked
  7. huge pages (core/runtime/huge_pages.hpp): where the kernel's THP mode
     is madvise, `gtmesh serve` of 20,000 records holds some (it executed
     itself again with glibc's hugetlb tunable added to what it was given),
     and none with GTMESH_HUGE_PAGES=0 or the operator's hugetlb=0, nor for
     a config under 4 MiB (a second start would cost more than it saves)
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

SRC = os.environ.get("GTMESH_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
BIN = os.environ.get("GTMESH_BINARY_DIR", os.path.join(SRC, "build"))
GTMESH = os.path.join(BIN, "tools", "gtmesh")
GTMESHCTL = os.path.join(BIN, "tools", "gtmeshctl")
failures = []

# What each binary really has (its dispatch code: tools/gtmesh/main.cpp,
# tools/gtmeshctl/main.cpp); groups are the commands with subcommands.
COMMANDS = {
    GTMESH: ["check-config", "schema", "explain", "serve", "agent", "decider", "demo", "backend", "version",
             "help"],
    GTMESHCTL: ["push", "get", "apply", "delete", "export", "status", "configs", "explain", "drain", "undrain",
                "member list", "member add", "member remove", "member replace", "history", "backup", "show-backup",
                "fault", "signed-only", "ca init", "ca issue", "ca revoke", "dnssec keygen", "dnssec ds", "dnssec rollover-plan",
                "dnssec dump-static", "tap", "import azure-tm", "import octodns", "import route53", "enroll",
                "send-garbage", "help"],
}
GROUPS = {GTMESH: [], GTMESHCTL: ["member", "ca", "dnssec", "import"]}


def check(ok, what):
    what = what.replace("\n", " | ")
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def run(argv, cwd=None, env=None):
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=cwd, env=env)


def run_all(argvs, **kw):
    """Many short runs at once (each is a process start and a table lookup)."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(lambda a: run(a, **kw), argvs))


def name(binary):
    return os.path.basename(binary)


def leaf_paths_of_global_usage(text):
    """The command paths the global usage lists: the leading lower-case words
    of each line indented by exactly two spaces in the commands section."""
    paths, inside = [], False
    for line in text.splitlines():
        if line == "commands:":
            inside = True
            continue
        if inside and not line.strip():
            break
        if inside and re.match(r"^  [a-z]", line):
            words = []
            for w in line.split():
                if not re.match(r"^[a-z][a-z0-9-]*$", w):
                    break
                words.append(w)
            paths.append(" ".join(words))
    return paths


def help_is_own(binary, path, r, how):
    """`r` is the help of `path`: exit 0, on stdout, its usage line, an
    example of it, and not the global usage."""
    out = r.stdout
    prog = name(binary)
    own_usage = re.search(r"^usage: %s %s( |$)" % (re.escape(prog), re.escape(path)), out, re.M)
    example = re.search(r"^examples?:\n(  .*\n)+", out, re.M)
    example_of_it = example and re.search(r"^  %s (.* )?%s( |$)" % (re.escape(prog), re.escape(path)),
                                          example.group(0), re.M)
    global_usage = "\ncommands:\n" in out
    return check(r.returncode == 0 and own_usage and example_of_it and not global_usage and not r.stderr,
                 "%s %s: %s prints its own usage line and an example, exit 0 (rc %d%s%s%s%s)" % (
                     prog, path, how, r.returncode, "" if own_usage else ", NO USAGE LINE OF IT",
                     "" if example_of_it else ", NO EXAMPLE OF IT", ", THE GLOBAL USAGE" if global_usage else "",
                     (": " + r.stderr.strip()[:200]) if r.stderr else ""))


def placeholder_value(option, value):
    """A plausible value for an option's placeholder, so that the option is
    judged by the parser and not refused as a malformed value first."""
    if option == "--max-udp-size":
        return "1232"
    v = value.split("|")[0] if "|" in value and ":" not in value.split("|")[0] else value
    if v in ("text", "debug", "datagram", "ecdsap256sha256", "decider"):
        return {"debug": "info", "decider": "operator"}.get(v, v)
    if "DURATION" in value:
        return "10s"
    if "ADDR:PORT" in value or "HOST:PORT" in value:
        return "127.0.0.1:0"
    if value in ("N", "PORT", "VERSION"):
        return "1"
    if value == "WHEN":
        return "10m"
    return "nonexistent/x"  # relative to the scratch folder, which must stay empty


def options_of_help(text):
    """(name, placeholder) of the options section of a command's help."""
    found, inside = [], False
    for line in text.splitlines():
        if line == "options:":
            inside = True
            continue
        if inside and not line.strip():
            break
        m = re.match(r"^  (?:(-\w), )?(--[a-z0-9-]+)(?: (\S+))?", line)
        if inside and m:
            found.append((m.group(2), m.group(3) or ""))
            if m.group(1):
                found.append((m.group(1), m.group(3) or ""))
    return found


def main():
    for b in (GTMESH, GTMESHCTL):
        if not os.access(b, os.X_OK):
            print("skip: %s is not built" % b)
            return 77
    work = tempfile.mkdtemp(prefix="gtmesh-cli-")
    try:
        return scenario(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def scenario(work):
    # A listener where a decider would be: help must never connect to it.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.setblocking(False)
    decider = "127.0.0.1:%d" % listener.getsockname()[1]
    env = dict(os.environ, GTMESH_DECIDER=decider)
    quiet = os.path.join(work, "cwd")  # help writes nothing: this folder stays empty
    os.mkdir(quiet)

    for binary in (GTMESH, GTMESHCTL):
        prog = name(binary)
        # 1, bare: the global usage on stdout, exit 0; no arguments: a usage error.
        bare = [run([binary, a], cwd=quiet, env=env) for a in ("--help", "-h", "help")]
        check(all(r.returncode == 0 and "\ncommands:\n" in r.stdout and not r.stderr for r in bare) and
              bare[0].stdout == bare[1].stdout == bare[2].stdout,
              "%s --help, -h and help print the global usage on stdout, exit 0" % prog)
        nothing = run([binary], cwd=quiet, env=env)
        check(nothing.returncode == 2 and "\ncommands:\n" in nothing.stderr and not nothing.stdout,
              "%s without a command: the global usage on stderr, exit 2 (rc %d)" % (prog, nothing.returncode))

        # 2: the global usage lists exactly the commands the binary has.
        listed = leaf_paths_of_global_usage(bare[0].stdout)
        check(sorted(listed) == sorted(COMMANDS[binary]),
              "%s: the global usage lists its %d commands (missing %s, unexpected %s)" % (
                  prog, len(COMMANDS[binary]), sorted(set(COMMANDS[binary]) - set(listed)),
                  sorted(set(listed) - set(COMMANDS[binary]))))

        # 1, per command: every way of asking gives its own help.
        asked = []
        for path in COMMANDS[binary] + GROUPS[binary]:
            words = path.split()
            asked.append((path, "--help", [binary, *words, "--help"]))
            if path in GROUPS[binary] or path in COMMANDS[binary][:3]:
                asked.append((path, "-h", [binary, *words, "-h"]))
            if path != "help":
                asked.append((path, "help " + path, [binary, "help", *words]))
        for (path, how, _), r in zip(asked, run_all([a for _, _, a in asked], cwd=quiet, env=env)):
            help_is_own(binary, path, r, how)
            if path in GROUPS[binary] and how.startswith("help "):
                subs = [c for c in COMMANDS[binary] if c.startswith(path + " ")]
                check(all(re.search(r"^  %s( |$)" % re.escape(s), r.stdout, re.M) for s in subs),
                      "%s help %s lists its subcommands %s" % (prog, path, [s.split()[1] for s in subs]))
        # --help among the arguments, after other options and arguments.
        if binary == GTMESHCTL:
            cases = [
                (["--decider", decider, "--timeout", "1s", "member", "add", "10.0.0.9:7400", "--help"], "member add"),
                (["push", "missing.yaml", "--dry-run", "--help", "--message", "m"], "push"),
                (["ca", "init", "--dir", "tls", "--help"], "ca init"),
                (["dnssec", "keygen", "example.com", "--out", "keys/k.pem", "-h"], "dnssec keygen"),
                (["backup", "backup.file", "--help"], "backup"),
                (["--help", "status", "--json"], "status"),
                (["import", "route53", "r.json", "-o", "out.yaml", "--help"], "import route53"),
                (["--retry-for=0s", "history", "--since", "10m", "--help"], "history"),
            ]
        else:
            cases = [
                (["serve", "--config", "missing.yaml", "--listen", "127.0.0.1:0", "--help"], "serve"),
                (["--log-level", "debug", "check-config", "missing.yaml", "--help"], "check-config"),
                (["decider", "--config", "c.yaml", "--data-dir", "data", "--listen", "127.0.0.1:0", "-h"],
                 "decider"),
            ]
        for (argv, path), r in zip(cases, run_all([[binary, *argv] for argv, _ in cases], cwd=quiet, env=env)):
            help_is_own(binary, path, r, " ".join(argv))

    # 3: nothing reached the decider, nothing was written.
    try:
        conn, _ = listener.accept()
        conn.close()
        contacted = True
    except BlockingIOError:
        contacted = False
    check(not contacted, "help contacted no decider (a listener at --decider and $GTMESH_DECIDER saw no connection)")
    check(os.listdir(quiet) == [], "help wrote no file (%s)" % os.listdir(quiet))
    listener.close()

    # 4: usage errors name the word and point at help.
    errors = [
        ([GTMESH, "bogus"], "'bogus'", "gtmesh help"),
        ([GTMESH, "serve", "--bogus"], "'--bogus'", "gtmesh help serve"),
        ([GTMESH, "check-config", "--budget=yes", "f.yaml"], "'--budget'", "gtmesh help check-config"),
        ([GTMESH, "help", "bogus"], "'bogus'", "gtmesh help"),
        ([GTMESH, "decider", "--config", "c.yaml", "--data-dir", "d", "--listen", "127.0.0.1:0", "--http",
          "127.0.0.1:0", "--http-cert", "web.pem"], "--http-key", "gtmesh help decider"),
        ([GTMESHCTL, "bogus"], "'bogus'", "gtmeshctl help"),
        ([GTMESHCTL, "member", "list", "--help-me"], "'--help-me'", "gtmeshctl help member list"),
        ([GTMESHCTL, "member", "bogus"], "'bogus'", "gtmeshctl help member"),
        ([GTMESHCTL, "member"], "list, add, remove, replace", "gtmeshctl help member"),
        ([GTMESHCTL, "status", "--dry-run"], "'--dry-run'", "gtmeshctl help status"),
        ([GTMESHCTL, "status", "--timeout"], "'--timeout'", "gtmeshctl help"),
        ([GTMESHCTL, "--bogus", "status"], "'--bogus'", "gtmeshctl help status"),
        ([GTMESHCTL, "import", "route53", "r.json", "--bogus"], "'--bogus'", "gtmeshctl help import route53"),
        ([GTMESHCTL, "help", "member", "bogus"], "'bogus'", "gtmeshctl help member"),
    ]
    for (argv, word, hint), r in zip(errors, run_all([e[0] for e in errors], cwd=quiet, env=env)):
        check(r.returncode == 2 and word in r.stderr and hint in r.stderr and not r.stdout,
              "%s: exit 2, stderr names %s and points at '%s' (rc %d: %s)" % (
                  " ".join([name(argv[0])] + argv[1:]), word, hint, r.returncode, r.stderr.strip()[:160]))

    # 5: every option each command's help lists is accepted by its parser:
    # all of them at once, with plausible values, and five extra words that
    # make every command a usage error once its options are read, so nothing
    # runs. An option the parser does not accept says "unknown option"; a
    # table and a parser that disagree exit 70 ("internal error").
    extra = ["w1", "w2", "w3", "w4", "w5"]
    scratch = os.path.join(work, "scratch")
    os.mkdir(scratch)
    for binary in (GTMESH, GTMESHCTL):
        prog = name(binary)
        paths = [p for p in COMMANDS[binary] if p != "help"]
        helps = run_all([[binary, *path.split(), "--help"] for path in paths])
        argvs, listed = [], []
        for path, h in zip(paths, helps):
            options = options_of_help(h.stdout)
            listed.append(options)
            argv = [binary, *path.split()]
            for opt, value in options:
                argv += [opt] + ([placeholder_value(opt, value)] if value else [])
            argvs.append(argv + extra)
        for path, options, r in zip(paths, listed, run_all(argvs, cwd=scratch, env=env)):
            check(r.returncode == 2 and "unknown option" not in r.stderr and "internal error" not in r.stderr
                  and ("%s %s" % (prog, path)) in r.stderr,
                  "%s %s: the parser accepts every option its help lists (%s) (rc %d: %s)" % (
                      prog, path, " ".join(o for o, _ in options) or "none", r.returncode,
                      r.stderr.strip().splitlines()[0][:140] if r.stderr.strip() else ""))
            check(options or binary == GTMESHCTL or path in ("schema", "version"),
                  "%s %s lists its options" % (prog, path))
    check(os.listdir(scratch) == [], "no command wrote anything before refusing its arguments (%s)" %
          os.listdir(scratch))
    r = run([GTMESHCTL, "status", "--limit", "1"], cwd=scratch, env=env)
    check(r.returncode == 2 and "unknown option '--limit'" in r.stderr,
          "control: an option of another command (tap's --limit) is refused for status (rc %d)" % r.returncode)

    dnssec_example(work)
    huge_pages(work)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


def huge_pages(work):
    """Check 7: whether a running `gtmesh serve` of 20,000 records (a 6.9 MB file) holds huge pages."""
    path = "/sys/kernel/mm/transparent_hugepage/enabled"
    mode = open(path).read().strip() if os.path.exists(path) else "unknown"
    if "[madvise]" not in mode:
        print("note: THP mode %s: huge pages are the kernel's choice here, check 7 skipped" % mode)
        return
    gen = os.path.join(work, "s10k")
    subprocess.run([sys.executable, os.path.join(SRC, "tools", "bench", "scale", "gen_config.py"), "--records",
                    "20000", gen], check=True, stdout=subprocess.DEVNULL, timeout=60)
    big = os.path.join(gen, "gtmesh.yaml")
    small = os.path.join(SRC, "configs", "full.yaml")  # under 4 MiB: not worth a second start
    cases = [({}, big, True), ({"GLIBC_TUNABLES": "glibc.malloc.arena_max=4"}, big, True),
             ({"GTMESH_HUGE_PAGES": "0"}, big, False), ({"GLIBC_TUNABLES": "glibc.malloc.hugetlb=0"}, big, False),
             ({}, small, False)]
    for i, (extra, config, want) in enumerate(cases):
        env = {k: v for k, v in os.environ.items() if k not in ("GLIBC_TUNABLES", "GTMESH_HUGE_PAGES")}
        env.update(extra)
        ports = os.path.join(work, "huge%d.ports" % i)
        proc = subprocess.Popen([GTMESH, "serve", "--config", config,
                                 "--listen", "127.0.0.1:0", "--port-file", ports],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not (os.path.exists(ports) and os.path.getsize(ports) > 0) and time.monotonic() < deadline:
                if proc.poll() is not None:
                    break
                time.sleep(0.02)
            huge = None
            if proc.poll() is None:
                m = re.search(r"AnonHugePages:\s+(\d+) kB", open("/proc/%d/smaps_rollup" % proc.pid).read())
                huge = int(m.group(1)) if m else None
            check(huge is not None and (huge > 0) == want,
                  "THP mode madvise, started with %s: serving %s (%.1f MB) with %s kB of huge pages (%s)"
                  % (extra or "nothing set", os.path.basename(config), os.path.getsize(config) / 1e6, huge,
                     "some expected" if want else "none expected"))
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def fresh_configs(dest):
    """configs/ as a fresh checkout has it: the tracked files only (a key made
    in the source tree by following the docs must not count)."""
    tracked = run(["git", "-C", SRC, "ls-files", "configs"])
    if tracked.returncode == 0 and tracked.stdout.strip():
        for rel in tracked.stdout.split():
            os.makedirs(os.path.join(dest, os.path.dirname(rel)), exist_ok=True)
            shutil.copy(os.path.join(SRC, rel), os.path.join(dest, rel))
        return True
    shutil.copytree(os.path.join(SRC, "configs"), os.path.join(dest, "configs"),
                    ignore=shutil.ignore_patterns("keys", "*.pem", "*.private"))
    return False


def dnssec_example(work):
    root = os.path.join(work, "checkout")
    in_git = fresh_configs(root)
    example = os.path.join("configs", "examples", "dnssec.yaml")
    text = open(os.path.join(root, example)).read()
    key_rel = re.search(r"^\s+key: (\S+)", text, re.M).group(1)
    key_path = os.path.normpath(os.path.join(root, os.path.dirname(example), key_rel))
    check(not os.path.isabs(key_rel) and not os.path.exists(key_path),
          "the example names its key relative to itself (%s), and a clean tree has none" % key_rel)

    # The documented first step, the example's own comment and check-config's
    # warning give one and the same command.
    doc = open(os.path.join(SRC, "docs", "dnssec.md")).read()
    turning_on = doc[doc.index("## Turning it on"):]
    doc_cmd = re.search(r"^\s*(gtmeshctl dnssec keygen .*--out \S+)", turning_on, re.M)
    first_cmd = re.search(r"^\s*(gtmeshctl dnssec keygen [^\n#]*?)\s*(#|$)", turning_on, re.M)
    comment_cmd = re.search(r"^#\s+(gtmeshctl dnssec keygen .*--out \S+)", text, re.M)
    check(doc_cmd and first_cmd and doc_cmd.group(1) == first_cmd.group(1).strip(),
          "docs/dnssec.md's first step is the keygen command with --out (%s)" % (
              first_cmd.group(1) if first_cmd else None))

    r = run([GTMESH, "check-config", example], cwd=root)
    warn_cmd = re.search(r"make it with: (gtmeshctl dnssec keygen \S+.*--out \S+)", r.stderr)
    check(r.returncode == 0 and warn_cmd and "dnssec.key" in r.stderr,
          "a clean tree: gtmesh check-config %s passes, warning about the key (rc %d: %s)" % (
              example, r.returncode, r.stderr.strip()[:300]))
    check(doc_cmd and comment_cmd and warn_cmd and
          doc_cmd.group(1) == comment_cmd.group(1) == warn_cmd.group(1).strip(),
          "the docs, the example and check-config's warning name the same command (%s | %s | %s)" % (
              doc_cmd and doc_cmd.group(1), comment_cmd and comment_cmd.group(1), warn_cmd and warn_cmd.group(1)))

    # A node refuses it without the key: check-config --require-keys and
    # gtmesh serve name file, line and field.
    where = re.compile(re.escape(example) + r":\d+:\d+: .*dnssec\.key: .*No such file")
    r = run([GTMESH, "check-config", "--require-keys", example], cwd=root)
    check(r.returncode == 1 and where.search(r.stderr),
          "check-config --require-keys: the missing key is an error naming file:line and dnssec.key (rc %d: %s)" % (
              r.returncode, r.stderr.strip()[:200]))
    r = run([GTMESH, "serve", "--config", example, "--listen", "127.0.0.1:0"], cwd=root)
    check(r.returncode == 1 and where.search(r.stderr),
          "gtmesh serve refuses the config without its key, naming file:line and dnssec.key (rc %d: %s)" % (
              r.returncode, r.stderr.strip()[:200]))

    # The documented command, run as written from the tree's root.
    if doc_cmd:
        argv = doc_cmd.group(1).split()
        r = run([GTMESHCTL] + argv[1:], cwd=root)
        check(r.returncode == 0 and os.path.isfile(key_path) and (os.stat(key_path).st_mode & 0o077) == 0,
              "the documented keygen writes the key where the example names it, mode 0600 (rc %d: %s)" % (
                  r.returncode, (r.stdout + r.stderr).strip()[:160]))
        r = run([GTMESHCTL] + argv[1:], cwd=root)
        check(r.returncode == 1 and "never overwritten" in r.stderr, "keygen again: refused, the key is kept")
    r = run([GTMESH, "check-config", "--require-keys", example], cwd=root)
    check(r.returncode == 0 and "warning" not in r.stderr,
          "with the key: check-config --require-keys passes without a warning (rc %d: %s)" % (
              r.returncode, r.stderr.strip()[:200]))
    r = run([GTMESH, "explain", "--config", example, "--dnssec", "www.example.com", "AAAA"], cwd=root)
    check(r.returncode == 0 and re.search(r"DNSSEC: zone example\.com\. is signed by key tag \d+", r.stdout),
          "with the key: the example loads with signing (explain --dnssec: %s)" % (
              re.search(r"DNSSEC: .*", r.stdout).group(0)[:100] if "DNSSEC" in r.stdout else r.stderr.strip()[:100]))

    # A key file that exists but is corrupt is an error, with or without
    # --require-keys, and a node refuses it.
    os.makedirs(os.path.dirname(key_path), exist_ok=True)
    with open(key_path, "w") as f:
        f.write("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    for flags in ([], ["--require-keys"]):
        r = run([GTMESH, "check-config", *flags, example], cwd=root)
        check(r.returncode == 1 and re.search(re.escape(example) + r":\d+:\d+: .*dnssec\.key: .*neither a PEM",
                                              r.stderr),
              "a corrupt key file: check-config %sis an error naming file:line and dnssec.key (rc %d: %s)" % (
                  " ".join(flags) + " " if flags else "", r.returncode, r.stderr.strip()[:200]))
    r = run([GTMESH, "serve", "--config", example, "--listen", "127.0.0.1:0"], cwd=root)
    check(r.returncode == 1 and "dnssec.key" in r.stderr, "a corrupt key file: gtmesh serve refuses the config")

    # Global options before a local command, and --dir tls named explicitly.
    kg = os.path.join(work, "keygen")
    os.mkdir(kg)
    r = run([GTMESHCTL, "--decider", "127.0.0.1:1", "--timeout", "1s", "dnssec", "keygen", "example.net", "--dir",
             "tls"], cwd=kg)
    made = os.listdir(os.path.join(kg, "tls")) if os.path.isdir(os.path.join(kg, "tls")) else []
    check(r.returncode == 0 and len(made) == 1 and re.match(r"Kexample\.net\.\+013\+\d{5}\.pem$", made[0]),
          "gtmeshctl --decider X --timeout 1s dnssec keygen ZONE --dir tls writes into tls/ (%s; rc %d %s)" % (
              made, r.returncode, r.stderr.strip()[:100]))

    # Never a private key in the repository.
    if in_git:
        keys = run(["git", "-C", SRC, "ls-files", "configs/*.pem", "configs/**/*.pem", "configs/**/*.private"])
        check(keys.returncode == 0 and not keys.stdout.strip(), "no key file is tracked under configs/ (%s)" %
              keys.stdout.split())
        ignored = run(["git", "-C", SRC, "check-ignore", "-q", os.path.join("configs", "examples", key_rel)])
        check(ignored.returncode == 0, "git ignores the example's key path (%s)" % key_rel)


if __name__ == "__main__":
    sys.exit(main())
