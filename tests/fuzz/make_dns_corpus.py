#!/usr/bin/python3
"""Writes the seed corpus of dns_query_fuzz (corpus/dns_query/): a first byte
(the harness's mode: bit 0 TCP, bit 1 rate limiting, bits 2-3 the source
address, bits 4-6 the clock; 0x70 = no snapshot) and a DNS query.

The seeds reach every branch the fuzzer cannot easily find on its own: every
name and query type of the harness's zone (dns_query_fuzz.cpp), EDNS with ECS
(IPv4 and IPv6, at the prefix lengths that change answers and scopes, and the
malformed variants), cookies and other options, OPT records where they do not
belong, compression pointers, several questions, other opcodes and header
bits, and all four transports/sources. Re-run to regenerate (it replaces the
folder); the files are committed so CI needs no Python for fuzzing. Its
companion is the dictionary dns_query.dict."""

import os
import shutil
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "dns_query")

A, NS, CNAME, SOA, MX, TXT, AAAA, SRV, OPT, IXFR, AXFR, MAILB, MAILA, ANY = \
    1, 2, 5, 6, 15, 16, 28, 33, 41, 251, 252, 253, 254, 255
QTYPES = {"a": A, "ns": NS, "cname": CNAME, "soa": SOA, "mx": MX, "txt": TXT, "aaaa": AAAA, "srv": SRV,
          "any": ANY, "ptr": 12, "caa": 257, "https": 65, "ds": 43}
# Every name of the harness's zones, with what it is.
NAMES = ["example.test", "ns1.example.test", "www.example.test", "alias.example.test", "loop.example.test",
         "out.example.test", "mail.example.test", "txt.example.test", "_sip._tcp.example.test",
         "a.b.c.example.test", "b.c.example.test", "big.example.test", "legacy.example.test",
         "near.example.test", "web.example.test", "api.example.test", "gated.example.test",
         "within.example.test", "near6.example.test", "lossy.example.test", "geo-static.example.test",
         "shop.example.test", "app.example.test", "app-alias.example.test", "perf.example.test",
         "pool.example.test", "mxdc.example.test", "other.test", "mx.other.test", "nope.example.test",
         "www.example.org"]


def name(n):
    return b"".join(bytes([len(l)]) + l.encode() for l in n.rstrip(".").split(".") if l) + b"\0"


def header(qid=1, flags=0x0100, qd=1, an=0, ns=0, ar=0):
    return struct.pack("!HHHHHH", qid, flags, qd, an, ns, ar)


def question(n, qtype=A, klass=1):
    return (name(n) if isinstance(n, str) else n) + struct.pack("!HH", qtype, klass)


def opt_rr(options=b"", udp=1232, version=0, do=False, ext_rcode=0, owner=b"\0"):
    ttl = (ext_rcode << 24) | (version << 16) | (0x8000 if do else 0)
    return owner + struct.pack("!HHIH", OPT, udp, ttl, len(options)) + options


def option(code, data):
    return struct.pack("!HH", code, len(data)) + data


def ecs(family, source, addr, scope=0):
    return option(8, struct.pack("!HBB", family, source, scope) + addr)


def query(n, qtype=A, qid=1, flags=0x0100, opt=None, klass=1, **kw):
    ar = 1 if opt is not None else 0
    return header(qid, flags, ar=ar) + question(n, qtype, klass) + (opt if opt is not None else b"")


def v4(prefix, addr):
    return ecs(1, prefix, bytes(addr[:(prefix + 7) // 8]))


def v6(prefix, addr):
    raw = bytes.fromhex(addr)
    return ecs(2, prefix, raw[:(prefix + 7) // 8])


seeds = {}

# The original seeds (names kept).
seeds.update({
    "a": (0, query("www.example.test")),
    "aaaa_tcp": (1, query("www.example.test", AAAA)),
    "cname": (0, query("alias.example.test")),
    "loop": (0, query("loop.example.test")),
    "mx": (4, query("mail.example.test", MX)),
    "txt": (0, query("txt.example.test", TXT)),
    "srv": (0, query("_sip._tcp.example.test", SRV)),
    "ns": (0, query("example.test", NS)),
    "soa": (0, query("example.test", SOA)),
    "any": (0, query("www.example.test", ANY)),
    "nx": (0, query("nope.example.test")),
    "ent": (0, query("b.c.example.test")),
    "refused": (0, query("www.example.org")),
    "big": (0, query("big.example.test")),
    "big_edns": (0, query("big.example.test", opt=opt_rr())),
    "ecs4": (0, query("legacy.example.test", opt=opt_rr(v4(24, [198, 51, 100])))),
    "ecs6": (8, query("legacy.example.test", opt=opt_rr(v6(56, "20010db8010000")))),
    "ecs0": (0, query("near.example.test", opt=opt_rr(ecs(1, 0, b"")))),
    "ecs_bad": (0, query("www.example.test", opt=opt_rr(ecs(1, 23, bytes([198, 51, 101]))))),
    "badvers": (0, query("www.example.test", opt=opt_rr(version=1))),
    "cookie": (0, query("www.example.test", opt=opt_rr(option(10, b"12345678")))),
    "rrl": (2, query("web.example.test")),
    "notimp": (0, query("www.example.test", flags=4 << 11)),
    "qd2": (0, header(qd=2) + question("www.example.test")),
    "chaos": (0, query("version.bind", TXT, klass=3)),
    "axfr_tcp": (1, query("example.test", AXFR)),
    "pointer": (0, header() + b"\xc0\x0c\x00\x01\x00\x01"),
    "profile": (0, query("api.example.test")),
    "runt": (0, b"\x12\x34\x01"),
    "no_snapshot": (0x70, query("www.example.test")),
})

# Every name x every query type, over UDP from the first source; a few over
# TCP and from the other sources.
for n in NAMES:
    for tname, t in QTYPES.items():
        seeds[f"q_{n.replace('.', '_')}_{tname}"] = (0, query(n, t))
for i, n in enumerate(["www.example.test", "big.example.test", "legacy.example.test", "near.example.test",
                       "api.example.test", "web.example.test", "gated.example.test", "geo-static.example.test",
                       "shop.example.test", "perf.example.test", "pool.example.test", "lossy.example.test"]):
    for mode in (1, 4, 8, 12, 0x10, 0x20, 0x30, 3):
        seeds[f"mode_{mode:02x}_{n.split('.')[0]}"] = (mode, query(n, qid=0x100 + i))
# Case, label and name length edge cases.
seeds["mixed_case"] = (0, query("WwW.ExAmPlE.TeSt"))
seeds["label_63"] = (0, query("x" * 63 + ".example.test"))
seeds["label_64"] = (0, header() + b"\x40" + b"x" * 64 + name("example.test") + struct.pack("!HH", A, 1))
seeds["name_255"] = (0, query(".".join(["a" * 61] * 4)[:253]))
seeds["name_too_long"] = (0, header() + (b"\x3f" + b"a" * 63) * 4 + b"\0" + struct.pack("!HH", A, 1))
seeds["root"] = (0, query(".", NS))
seeds["extended_label"] = (0, header() + b"\x41\x00" + struct.pack("!HH", A, 1))

# EDNS: sizes, DO, versions, ECS at the prefix lengths that matter.
for udp in (0, 511, 512, 1232, 4096, 65535):
    seeds[f"edns_udp_{udp}"] = (0, query("big.example.test", opt=opt_rr(udp=udp)))
seeds["edns_do"] = (0, query("www.example.test", opt=opt_rr(do=True)))
seeds["edns_v255"] = (0, query("www.example.test", opt=opt_rr(version=255)))
seeds["edns_ext_rcode"] = (0, query("www.example.test", opt=opt_rr(ext_rcode=1)))
for prefix in (0, 8, 16, 24, 25, 32):
    for tag, addr in (("doc", [198, 51, 100, 77]), ("other", [192, 0, 2, 200])):
        seeds[f"ecs4_{tag}_{prefix}"] = (0, query("legacy.example.test", opt=opt_rr(v4(prefix, addr))))
        seeds[f"ecs4_near_{tag}_{prefix}"] = (1, query("near.example.test", opt=opt_rr(v4(prefix, addr))))
for prefix in (0, 32, 48, 56, 64, 128):
    seeds[f"ecs6_{prefix}"] = (0, query("legacy.example.test",
                                         opt=opt_rr(v6(prefix, "20010db8010000000000000000000009"))))
    seeds[f"ecs6_api_{prefix}"] = (8, query("api.example.test", AAAA,
                                            opt=opt_rr(v6(prefix, "20010db8010000000000000000000009"))))
for n in ("shop", "geo-static", "perf", "lossy", "gated", "within", "app"):
    for tag, addr in (("de", [198, 51, 100, 1]), ("us_ca", [192, 0, 2, 1]), ("us_ny", [192, 0, 2, 129]),
                      ("ie", [203, 0, 113, 5]), ("au", [100, 64, 1, 1]), ("fr", [100, 70, 0, 1])):
        seeds[f"ecs4_{n}_{tag}"] = (0, query(f"{n}.example.test", opt=opt_rr(v4(24, addr))))
    seeds[f"ecs6_{n}_de"] = (0, query(f"{n}.example.test", opt=opt_rr(v6(48, "20010db80001"))))
seeds["ecs6_near6"] = (0, query("near6.example.test", AAAA, opt=opt_rr(v6(48, "20010db80100"))))
seeds["ecs4_source_33"] = (0, query("www.example.test", opt=opt_rr(ecs(1, 33, bytes(5)))))
seeds["ecs6_source_129"] = (0, query("www.example.test", opt=opt_rr(ecs(2, 129, bytes(17)))))
seeds["ecs_family_3"] = (0, query("www.example.test", opt=opt_rr(ecs(3, 8, b"\x01"))))
seeds["ecs_scope_set"] = (0, query("legacy.example.test", opt=opt_rr(ecs(1, 24, bytes([198, 51, 100]), scope=24))))
seeds["ecs_short"] = (0, query("www.example.test", opt=opt_rr(option(8, b"\x00\x01\x18"))))
seeds["ecs_extra_byte"] = (0, query("www.example.test", opt=opt_rr(ecs(1, 8, b"\xc6\x33"))))
seeds["ecs_twice"] = (0, query("legacy.example.test", opt=opt_rr(v4(24, [198, 51, 100]) + v4(16, [10, 1]))))
# Other options: cookies (client only, client + server, malformed), NSID,
# padding, keepalive, unknown codes, an option running past the OPT.
seeds["cookie_server"] = (0, query("www.example.test", opt=opt_rr(option(10, b"12345678" + b"S" * 16))))
seeds["cookie_short"] = (0, query("www.example.test", opt=opt_rr(option(10, b"1234"))))
seeds["nsid"] = (0, query("www.example.test", opt=opt_rr(option(3, b""))))
seeds["padding"] = (0, query("www.example.test", opt=opt_rr(option(12, bytes(64)))))
seeds["keepalive_tcp"] = (1, query("www.example.test", opt=opt_rr(option(11, b""))))
seeds["options_mix"] = (0, query("legacy.example.test", opt=opt_rr(option(10, b"abcdefgh") + option(3, b"") +
                                                                    v4(24, [198, 51, 100]) + option(65001, b"x"))))
seeds["option_overrun"] = (0, query("www.example.test", opt=opt_rr(b"\x00\x0a\x00\x20abc")))
seeds["option_header_cut"] = (0, query("www.example.test", opt=opt_rr(b"\x00\x0a\x00")))
# OPT where it does not belong: twice, under a non-root owner, in the answer
# section, with rdata cut short, and a non-OPT additional record.
seeds["opt_twice"] = (0, header(ar=2) + question("www.example.test") + opt_rr() + opt_rr())
seeds["opt_owner"] = (0, header(ar=1) + question("www.example.test") + opt_rr(owner=name("example.test")))
seeds["opt_owner_pointer"] = (0, header(ar=1) + question("www.example.test") + opt_rr(owner=b"\xc0\x0c"))
seeds["opt_in_answer"] = (0, header(an=1) + question("www.example.test") + opt_rr())
seeds["opt_in_authority"] = (0, header(ns=1) + question("www.example.test") + opt_rr())
seeds["opt_cut"] = (0, (header(ar=1) + question("www.example.test") + opt_rr(option(10, b"12345678")))[:-5])
seeds["opt_as_qtype"] = (0, query("www.example.test", OPT))
seeds["additional_a"] = (0, header(ar=1) + question("www.example.test") + b"\xc0\x0c" +
                         struct.pack("!HHIH", A, 1, 60, 4) + bytes([192, 0, 2, 1]))
seeds["additional_then_opt"] = (0, header(ar=2) + question("www.example.test") + b"\xc0\x0c" +
                                struct.pack("!HHIH", TXT, 1, 0, 2) + b"\x01x" + opt_rr(v4(24, [198, 51, 100])))
seeds["trailing_bytes"] = (0, query("www.example.test") + b"\x00\x00")
# Compression pointers: in the question (not allowed), looping, forward, in
# an additional owner name.
seeds["pointer_loop"] = (0, header() + b"\xc0\x0c" + struct.pack("!HH", A, 1))
seeds["pointer_forward"] = (0, header() + b"\x03www\xc0\x20" + struct.pack("!HH", A, 1) + name("example.test"))
seeds["pointer_cut"] = (0, header() + b"\x03www\xc0")
seeds["additional_pointer_owner"] = (0, header(ar=1) + question("www.example.test") + b"\xc0\x10" +
                                     struct.pack("!HHIH", A, 1, 0, 0))
# Several questions, none, and counts that lie.
seeds["qd2_full"] = (0, header(qd=2) + question("www.example.test") + question("mail.example.test", MX))
seeds["qd0"] = (0, header(qd=0))
seeds["qd0_opt"] = (0, header(qd=0, ar=1) + opt_rr())
seeds["ar_lies"] = (0, header(ar=3) + question("www.example.test") + opt_rr())
seeds["qd65535"] = (0, header(qd=65535) + question("www.example.test"))
# Opcodes (IQUERY, STATUS, NOTIFY, UPDATE, unassigned) and header bits.
for op, tag in ((1, "iquery"), (2, "status"), (4, "notify"), (5, "update"), (6, "dso"), (15, "op15")):
    seeds[f"opcode_{tag}"] = (0, query("example.test", SOA, flags=(op << 11) | 0x0100))
seeds["notify_aa"] = (0, query("example.test", SOA, flags=(4 << 11) | 0x0400))
seeds["response_qr"] = (0, query("www.example.test", flags=0x8180))
seeds["tc_set"] = (0, query("www.example.test", flags=0x0300))
seeds["no_rd"] = (0, query("www.example.test", flags=0x0000))
seeds["ad_cd"] = (0, query("www.example.test", flags=0x0130))
seeds["z_bit"] = (0, query("www.example.test", flags=0x0140))
seeds["rcode_set"] = (0, query("www.example.test", flags=0x0105))
# Classes and query types the processor refuses or does not implement.
for klass, tag in ((3, "ch"), (4, "hs"), (254, "none"), (255, "any")):
    seeds[f"class_{tag}"] = (0, query("www.example.test", klass=klass))
for t, tag in ((IXFR, "ixfr"), (MAILA, "maila"), (MAILB, "mailb"), (0, "type0"), (65535, "type65535")):
    seeds[f"qtype_{tag}"] = (0, query("example.test", t))
seeds["axfr_udp"] = (0, query("example.test", AXFR))
# Rate limiting from one source, and TCP around the 512/1232-byte limits.
seeds["rrl_big"] = (2, query("big.example.test", opt=opt_rr(udp=512)))
seeds["rrl_edns"] = (6, query("web.example.test", opt=opt_rr(v4(24, [198, 51, 100]))))
seeds["tcp_big"] = (1, query("big.example.test"))
seeds["tcp_any"] = (1, query("big.example.test", ANY, opt=opt_rr(udp=65535)))
seeds["no_snapshot_edns"] = (0x71, query("www.example.test", opt=opt_rr(v4(24, [198, 51, 100]))))

shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
for key, (mode, wire) in seeds.items():
    with open(os.path.join(OUT, key), "wb") as f:
        f.write(bytes([mode]) + wire)
print(f"{len(seeds)} seeds in {OUT}")
