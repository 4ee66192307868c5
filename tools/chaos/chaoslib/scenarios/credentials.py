"""Leaked credentials: certificates revoked through the deciders' log."""
import os
import re
import time

from .. import util
from ..cluster import Cluster, www
from ..procs import faketime_env, faketime_library
from ..scenario import scenario
from ..steps import baseline


def _issue(c, name, role, dc=None):
    """One more certificate of the run's CA, backdated like the others."""
    env = dict(os.environ)
    if faketime_library():
        env.update(faketime_env(Cluster.CERT_BACKDATE))
    if not os.path.exists(os.path.join(c.tls_dir, name + ".pem")):
        util.run([c.ctl_bin, "ca", "issue", name, "--dir", c.tls_dir, "--role", role] + (["--dc", dc] if dc else []),
                 timeout=60, check=True, env=env)


def _agents_of(c, dc):
    """Agents of `dc` connected, summed over every decider (None if one did not answer)."""
    total = 0
    for d in c.deciders:
        st = c.status(d, attempts=1)
        if not st:
            return None
        m = re.search(r"(\d+) agent\(s\) connected", st.dcs.get(dc, ""))
        total += int(m.group(1)) if m else 0
    return total


@scenario("revoke",
          fault="an operator certificate (mallory) and fra's agent certificate revoked with `gtmeshctl ca revoke`, "
                "through the Raft log, while DNS is queried",
          prop="within 1 s every decider refuses mallory's certificate (gtmeshctl with it fails) and fra's agent "
               "link is closed; its reconnects stay refused; fra fails over to iad within the unreachable bound "
               "and no responder answers anything else (never fail_safe)",
          order=95)
def revoke(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    _issue(c, "mallory", "operator")
    mallory = lambda d: c.topo.run("client", [c.ctl_bin, "--decider", c.mesh_addr(d)] + c.tls_args("mallory") +
                                   ["--timeout", "1s", "--retry-for", "0s", "status"], timeout=30)
    ctx.require(all(mallory(d).returncode == 0 for d in c.deciders), "mallory's certificate reads status everywhere")
    r = c.ctl("ca", "revoke", "mallory", "--dir", c.tls_dir, retry_for_s=10)
    t0 = time.monotonic()
    ctx.require(r.returncode == 0, "gtmeshctl ca revoke mallory: %s" % (r.stdout + r.stderr).strip()[-200:])
    refused = {}
    for d in c.deciders:
        ok, _, _ = util.wait_for(lambda: mallory(d).returncode != 0, 5, 0.05)
        refused[d] = time.monotonic() - t0 if ok else None
    ctx.converged("mallory revoked -> refused by every decider",
                  None if None in refused.values() else max(refused.values()), 1.0)
    # fra's agent: its link closes, its reconnects are refused, fra fails over.
    serial = util.run(["openssl", "x509", "-noout", "-serial", "-in", os.path.join(c.tls_dir, "agent-fra.pem")],
                      timeout=10).stdout.strip().partition("=")[2]
    ctx.require(_agents_of(c, "fra") == 1, "fra's agent is connected before its revocation")

    closed = []

    def revoke_agent():
        out = c.ctl("ca", "revoke", serial, retry_for_s=10)
        t_done = time.monotonic()
        ctx.check(out.returncode == 0, "gtmeshctl ca revoke %s (agent-fra): %s" % (serial, out.stdout.strip()[-120:]))
        ok, _, _ = util.wait_for(lambda: _agents_of(c, "fra") == 0, 5, 0.05)
        closed.append(time.monotonic() - t_done if ok else None)

    ctx.phase(q, "agent-fra revoked -> iad", revoke_agent, iad, b.dc_unreachable, before=fra)
    ctx.converged("agent-fra revoked -> its link closed on every decider", closed[0] if closed else None, 1.0)
    util.wait_for(lambda: False, 3, 0.5)  # its reconnects meanwhile
    logs = "".join(c.procs[d].log_text() for d in c.deciders)
    ctx.check(_agents_of(c, "fra") == 0 and "is revoked (gtmeshctl ca revoke)" in logs,
              "agent-fra's reconnects are refused at the handshake")
    ctx.note("refused mallory after: %s" % ", ".join("%s %s" % (d, util.fmt_s(v)) for d, v in refused.items()))

