"""Backends failing their health probes: one DC, every DC."""
from ..cluster import API, API_ANSWERS, FAIL_SAFE, www
from ..dns import A, dig
from ..scenario import scenario


def baseline(ctx, c, q, dc="fra"):
    t = q.mark("baseline")
    q.expect(t, www(dc))
    secs = q.wait_converged(t, www(dc), 10)
    ctx.require(secs is not None, "baseline: every responder answers %s" % www(dc))
    return t


@scenario("dc-failover",
          fault="one fra backend fails its probe, then every fra backend (down-file); later healthy again",
          prop="every responder answers the DC with the most healthy backends (iad) within the failover "
               "bound derived from probe interval x threshold, and fra again within the recovery bound",
          ctest=True, order=10)
def dc_failover(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad = www("fra"), www("iad")
    ctx.phase(q, "one fra backend down -> iad", lambda: c.backend_down("fra", 0), iad, b.failover, before=fra)
    ctx.phase(q, "fra backend back -> fra", lambda: c.backend_up("fra", 0), fra, b.recover, before=iad)
    ctx.phase(q, "every fra backend down -> iad", lambda: c.dc_down("fra"), iad, b.failover, before=fra)
    # The priority profile follows too, checked with the real dig.
    got = {d: dig(c.topo, c.dns_server(d), API) for d in c.deciders}
    ctx.check(all(a == A(API_ANSWERS["iad"]) for a in got.values()),
              "dig: the priority profile answers its secondary everywhere: %s" % got)
    ctx.phase(q, "fra healthy again -> fra", lambda: c.dc_up("fra"), fra, b.recover, before=iad)
    ctx.note("bounds: " + b.text)


@scenario("all-dcs-down",
          fault="every backend of every DC fails its probe; later all healthy again",
          prop="fail-safe answers (%s) on every responder within the failover bound; live answers "
               "again after recovery" % FAIL_SAFE,
          ctest=True, order=20)
def all_dcs_down(ctx):
    c = ctx.cluster()
    b = c.bounds
    q = ctx.query_loop(c)
    baseline(ctx, c, q)
    fra, iad, sin, safe = www("fra"), www("iad"), www("sin"), www(None)

    def all_down():
        for dc in c.spec.dcs:
            c.dc_down(dc)

    def all_up():
        for dc in c.spec.dcs:
            c.dc_up(dc)

    # While the verdicts come in one by one, any DC may be picked for a moment.
    ctx.phase(q, "every DC down -> fail_safe", all_down, safe, b.failover, before={fra, iad, sin})
    got = {d: dig(c.topo, c.dns_server(d), API) for d in c.deciders}
    ctx.check(all(a == A(FAIL_SAFE) for a in got.values()),
              "dig: the priority profile answers its fail_safe everywhere: %s" % got)
    ctx.phase(q, "every DC healthy -> fra", all_up, fra, b.recover, before={safe, iad, sin})
