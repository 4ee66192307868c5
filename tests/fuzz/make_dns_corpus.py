#!/usr/bin/python3
"""Writes the seed corpus of dns_query_fuzz (corpus/dns_query/): a first byte
(the harness's mode: transport, client, clock) and a DNS query. Re-run to
regenerate; the files are committed so CI needs no Python for fuzzing."""

import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "dns_query")


def name(n):
    return b"".join(bytes([len(l)]) + l.encode() for l in n.rstrip(".").split(".") if l) + b"\0"


def query(n, qtype=1, qid=1, flags=0x0100, opt=None, version=0, qdcount=1, klass=1):
    h = struct.pack("!HHHHHH", qid, flags, qdcount, 0, 0, 1 if opt is not None else 0)
    b = name(n) + struct.pack("!HH", qtype, klass)
    if opt is not None:
        b += b"\0" + struct.pack("!HHIH", 41, 1232, (version << 16) | 0x8000, len(opt)) + opt
    return h + b


def ecs(family, source, addr):
    d = struct.pack("!HBB", family, source, 0) + addr
    return struct.pack("!HH", 8, len(d)) + d


seeds = {
    "a": (0, query("www.example.test")),
    "aaaa_tcp": (1, query("www.example.test", 28)),
    "cname": (0, query("alias.example.test")),
    "loop": (0, query("loop.example.test")),
    "mx": (4, query("mail.example.test", 15)),
    "txt": (0, query("txt.example.test", 16)),
    "srv": (0, query("_sip._tcp.example.test", 33)),
    "ns": (0, query("example.test", 2)),
    "soa": (0, query("example.test", 6)),
    "any": (0, query("www.example.test", 255)),
    "nx": (0, query("nope.example.test")),
    "ent": (0, query("b.c.example.test")),
    "refused": (0, query("www.example.org")),
    "big": (0, query("big.example.test")),
    "big_edns": (0, query("big.example.test", opt=b"")),
    "ecs4": (0, query("legacy.example.test", opt=ecs(1, 24, bytes([198, 51, 100])))),
    "ecs6": (8, query("legacy.example.test", opt=ecs(2, 56, bytes.fromhex("20010db8010000")))),
    "ecs0": (0, query("near.example.test", opt=ecs(1, 0, b""))),
    "ecs_bad": (0, query("www.example.test", opt=ecs(1, 23, bytes([198, 51, 101])))),
    "badvers": (0, query("www.example.test", opt=b"", version=1)),
    "cookie": (0, query("www.example.test", opt=struct.pack("!HH", 10, 8) + b"12345678")),
    "rrl": (2, query("web.example.test")),
    "notimp": (0, query("www.example.test", flags=4 << 11)),
    "qd2": (0, query("www.example.test", qdcount=2)),
    "chaos": (0, query("version.bind", 16, klass=3)),
    "axfr_tcp": (1, query("example.test", 252)),
    "pointer": (0, query("www.example.test")[:12] + b"\xc0\x0c\x00\x01\x00\x01"),
    "profile": (0, query("api.example.test")),
    "runt": (0, b"\x12\x34\x01"),
    "no_snapshot": (0x70, query("www.example.test")),
}
os.makedirs(OUT, exist_ok=True)
for key, (mode, wire) in seeds.items():
    with open(os.path.join(OUT, key), "wb") as f:
        f.write(bytes([mode]) + wire)
print(f"{len(seeds)} seeds in {OUT}")
