#!/usr/bin/python3
"""Writes the seed corpora of the text-input fuzz targets:

  corpus/config_yaml/    every config under configs/ (relative paths made to
                         work from configs/examples/, where the harness puts
                         its file) and the malformed shapes of
                         tests/core/config/config_loader_test.cpp
  corpus/state_file/     configs/states/*.yaml and malformed states
  corpus/http_response/  two mode bytes (see http_response_fuzz.cpp) + a response
  corpus/lb_stats/       a mode byte (see lb_stats_fuzz.cpp) + a stats page

Re-run to regenerate (it replaces those four folders); the files are
committed so CI needs no Python for fuzzing. The DNS and mesh seeds have their
own generators (make_dns_corpus.py, make_mesh_envelope_corpus.cpp)."""

import glob
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def reset(target):
    out = os.path.join(HERE, "corpus", target)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    return out


def write(out, name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# --- config_yaml -------------------------------------------------------------

out = reset("config_yaml")
for path in sorted(glob.glob(os.path.join(ROOT, "configs", "*.yaml")) +
                   glob.glob(os.path.join(ROOT, "configs", "*.yaml.in")) +
                   glob.glob(os.path.join(ROOT, "configs", "examples", "*.yaml"))):
    text = open(path).read()
    # The harness's file is configs/examples/fuzz.yaml: full.yaml's
    # ../tests/data/test.mmdb is one level further up from there.
    text = text.replace("database: ../tests/", "database: ../../tests/")
    text = text.replace("@MMDB@", "../../tests/data/test.mmdb")
    for port, value in (("@FRA1@", "8081"), ("@FRA2@", "8082"), ("@IAD1@", "8083"), ("@IAD2@", "8084"),
                        ("@SIN1@", "8085"), ("@SIN2@", "8086")):
        text = text.replace(port, value)
    name = os.path.relpath(path, os.path.join(ROOT, "configs")).replace("/", "_")
    write(out, name, text)
write(out, "criterion_typo.yaml", open(os.path.join(ROOT, "tests", "core", "config", "data",
                                                    "criterion_typo.yaml")).read())

BASE = """datacenters:
  - {name: fra}
  - {name: iad}
probes:
  - {name: mon, path: /health}
services:
  - {name: web, backends: {fra: ["10.0.0.1:80"]}}
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records:
      - {name: ns1, type: A, answers: [192.0.2.53]}
"""


def dc(body):
    return BASE + "      - {name: x, type: A, dc: {" + body + "}}\n"


malformed = {
    "typo_gate": dc("source: host, metric: cpu, gate: {source: host, metric: status, criterion: {equal: up}}, "
                    "answers: {fra: [192.0.2.1]}"),
    "typo_within": dc("source: host, metric: cpu, criterion: {within: {target: best, margn: 5}}, "
                      "answers: {fra: [192.0.2.1]}"),
    "within_scalar": dc("source: host, metric: cpu, criterion: {within: 5}, answers: {fra: [192.0.2.1]}"),
    "within_percent": dc("source: host, metric: cpu, criterion: {within: {target: best, margin: 10%}}, "
                         "answers: {fra: [192.0.2.1], iad: [192.0.2.2]}, pick_dc_count: 2, balance: top1"),
    "criterion_list": dc("source: host, metric: cpu, criterion: [lowest], answers: {fra: [192.0.2.1]}"),
    "answers_list": dc("source: host, metric: cpu, answers: [192.0.2.1]"),
    "answers_key_list": dc("source: host, metric: cpu, answers: {[fra]: [192.0.2.1]}"),
    "answers_dup": dc("source: host, metric: cpu, answers: {fra: [192.0.2.1], fra: [192.0.2.2]}"),
    "cluster_list": "cluster: [a, b]\n" + BASE,
    "root_list": "- a\n- b\n",
    "root_scalar": "just text\n",
    "record_scalar": BASE + "      - just-a-scalar\n",
    "ttl_huge": BASE + "      - {name: x, type: A, ttl: 99999999999999999999999, answers: [192.0.2.1]}\n",
    "ttl_map": BASE + "      - {name: x, type: A, ttl: {a: 1}, answers: [192.0.2.1]}\n",
    "lat_nan": "datacenters:\n  - {name: fra, location: {lat: nan, lon: 1e999}}\n" + BASE[BASE.index("probes:"):],
    "interval_huge": BASE.replace("zones:", "  - {name: api, interval: 1e300s, processes: {fra: [[nginx]]}}\nzones:"),
    "self_alias": "zones: &z [*z]\n" + BASE[:BASE.index("zones:")],
    "alias_records": BASE + "      - &r {name: x, type: A, answers: [192.0.2.1]}\n      - *r\n",
    "utf8_bad": BASE + "      - {name: \"\xff\xfe\", type: A, answers: [192.0.2.1]}\n",
    "deep_flow": "[" * 3000,
    "latency_dev_zero": BASE + "latency_table: /dev/zero\n",
    "static_mode": BASE + "      - {name: x, type: A, static: {rules: [{subnet: 10.0.0.0/8, dc: fra}, {dc: iad}], "
                          "answers: {fra: [192.0.2.1], iad: [192.0.2.2]}}}\n",
    "mx_srv_txt_cname": BASE + "      - {name: m, type: MX, answers: [\"10 mx.example.com.\"]}\n"
                               "      - {name: s, type: SRV, answers: [{priority: 1, srv_weight: 2, port: 3, "
                               "target: x.example.com.}]}\n"
                               "      - {name: t, type: TXT, answers: [{text: [a, b]}]}\n"
                               "      - {name: c, type: CNAME, answers: [{target: x.example.org.}]}\n",
}
chain = BASE + "profiles:\n"
for i in range(1, 13):
    chain += "  - {name: p%d, method: priority, endpoints: [" % i
    if i < 12:
        chain += "{name: n, kind: nested, profile: p%d, priority: 1}, " % (i + 1)
    chain += "{name: e, kind: external, target: 192.0.2.1, priority: 2}]}\n"
malformed["nested_chain_12"] = chain
for key, text in malformed.items():
    write(out, "bad_" + key + ".yaml", text.encode("latin-1")) # \xff stays one (invalid UTF-8) byte

# --- state_file ----------------------------------------------------------------

out = reset("state_file")
for path in sorted(glob.glob(os.path.join(ROOT, "configs", "states", "*.yaml"))):
    write(out, os.path.basename(path), open(path).read())
states = {
    "age_without_value": "hosts:\n  fra: {status: {age: 5s}}\n",
    "value_list": "hosts:\n  fra: {cpu: [1, 2]}\n",
    "nan_inf": "hosts:\n  fra: {cpu: nan, mem: inf}\n  iad: {cpu: -1e999}\n",
    "huge_age": "now: 9223372036854775807\nhosts:\n  fra: {status: {value: up, age: 1e300h}}\n",
    "negative_now": "now: -9223372036854775808\nhosts:\n  fra: {status: {value: up, age: 1h}}\n",
    "year_9999": "now: 9999-12-31T23:59:59Z\nendpoints:\n  api-eu/eu-a: {value: down, age: 0ms}\n",
    "non_scalar_keys": "hosts:\n  [fra]: {cpu: 1}\nservices:\n  {web: 1}: {}\n",
    "scalars_for_maps": "hosts: fra\nservices: [web]\nclients: 1\nendpoints: x\ndrained: fra\n",
    "drained_maps": "drained: [{fra: 1}, iad, nope]\n",
    "clients_bad_prefix": "clients:\n  300.1.2.0/24: {fra: {rtt: 1}}\n  2001:db8::/129: {iad: {rtt: 2}}\n",
    "root_list": "- now\n",
    "self_alias": "hosts: &h {fra: *h}\n",
}
for key, text in states.items():
    write(out, "bad_" + key + ".yaml", text)

# --- http_response ---------------------------------------------------------------
# Mode bytes: byte 0 bit 0 = eof, (byte 0 >> 1) % 6 picks max_body from
# {0, 1, 16, 4096, 64 KiB, unlimited}; byte 1 picks the match rules.

out = reset("http_response")
responses = {
    "ok_length": (b"\x09\x03", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK"),
    "chunked": (b"\x09\x03", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             b"2;ext=1\r\nOK\r\n3\r\n!!!\r\n0\r\n\r\n"),
    "chunked_huge_size": (b"\x09\x03", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                       b"fffffffffffffffe\r\nxx\r\n"),
    "chunked_overflow": (b"\x0b\x03", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                      b"10000000000000000\r\nxx\r\n"),
    "continue_then_ok": (b"\x09\x01", b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early\r\n\r\n"
                                      b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
    "no_content": (b"\x08\x00", b"HTTP/1.1 204 No Content\r\n\r\n"),
    "not_modified": (b"\x08\x00", b"HTTP/1.0 304 Not Modified\r\n\r\n"),
    "close_delimited": (b"\x09\x02", b"HTTP/1.0 200 OK\r\nServer: x\r\n\r\nbody until close"),
    "lf_only": (b"\x09\x03", b"HTTP/1.1 503 Busy\nContent-Length: 4\n\nbusy"),
    "truncated_length": (b"\x05\x00", b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"),
    "small_max_body": (b"\x04\x02", b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n" + b"x" * 40),
    "bad_status": (b"\x09\x00", b"HTTP/1.1 2x0 OK\r\n\r\n"),
    "bad_length": (b"\x09\x00", b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"),
    "huge_length": (b"\x09\x00", b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n"),
    "not_http": (b"\x01\x00", b"SSH-2.0-OpenSSH_9.2\r\n"),
    "headers_only": (b"\x00\x00", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"),
    "many_informational": (b"\x09\x00", b"HTTP/1.1 100 Continue\r\n\r\n" * 9 + b"HTTP/1.1 200 OK\r\n\r\n"),
}
for key, (mode, data) in responses.items():
    write(out, key, mode + data)

# --- lb_stats ------------------------------------------------------------------------
# Mode byte: < 128 HAProxy CSV (mode % 4 picks the service: web, api, "",
# the first proxy), >= 128 nginx stub_status.

out = reset("lb_stats")
haproxy_header = ("# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,"
                  "status,weight,act,bck,chkfail,chkdown,lastchg,downtime,qlimit,pid,iid,sid,throttle,lbtot,tracked,"
                  "type,rate,rate_lim,rate_max,check_status,check_code,check_duration,hrsp_1xx,hrsp_2xx,hrsp_3xx,"
                  "hrsp_4xx,hrsp_5xx,hrsp_other,hanafail,req_rate,req_rate_max,req_tot,cli_abrt,srv_abrt,addr\n")
stats = {
    "haproxy_web": b"\x00" + (haproxy_header +
                              "web,FRONTEND,,,4,10,2000,120,5000,9000,0,0,0,,,,,OPEN,,,,,,,,,1,2,0,,,,0,1,0,5,,,,0,"
                              "300,0,0,0,0,,1,5,300,,,\n"
                              "web,s1,0,0,0,1,,60,0,0,,0,,0,0,0,0,UP,1,1,0,0,0,100,0,,1,3,1,,60,,2,0,,1,L7OK,200,1,"
                              "0,60,0,0,0,0,,,,60,0,0,127.0.0.1:8081\n"
                              "web,s2,0,0,0,1,,60,0,0,,0,,0,0,0,0,DOWN 1/2,1,1,0,1,1,100,5,,1,3,2,,60,,2,0,,1,"
                              "L4CON,,0,0,0,0,0,0,0,,,,0,0,0,127.0.0.1:8082\n"
                              "web,BACKEND,0,0,1,2,200,120,5000,9000,0,0,,0,0,0,0,UP,1,1,0,,0,100,0,,1,3,0,,120,,1,"
                              "0,,2,,,,0,250,0,0,0,0,,,,250,0,0,\n").encode(),
    "haproxy_tcp": b"\x01# pxname,svname,scur,stot,bin,bout,status,addr\napi,FRONTEND,2,40,100,200,OPEN,\n"
                   b"api,a1,0,10,0,0,no check,10.0.0.1:9000\napi,BACKEND,0,40,100,200,UP,\n",
    "haproxy_first_proxy": b"\x03# svname,pxname,status\r\nBACKEND,shop,UP\r\ns1,shop,MAINT\r\n",
    "haproxy_no_header": b"\x00Unknown command\n",
    "haproxy_ragged": b"\x02# pxname,svname,scur\n,,\nweb\nweb,FRONTEND,1,2,3,4\n# second,header\nx,y\n",
    "nginx": b"\x80Active connections: 291 \nserver accepts handled requests\n 16630948 16630948 31070465 \n"
             b"Reading: 6 Writing: 179 Waiting: 106 \n",
    "nginx_overflow": b"\x80Active connections: 99999999999999999999\nserver accepts handled requests\n 1 1 1\n"
                      b"Reading: 0 Writing: 1 Waiting: 0\n",
    "nginx_missing": b"\x80Active connections: 1\nReading: 0 Writing: 1 Waiting: 0\n",
    "source_specs": b"\x81haproxy-csv:http://127.0.0.1:8404/stats;csv",
}
for key, data in stats.items():
    write(out, key, data)

print("seeds written:", ", ".join(f"{t} {len(os.listdir(os.path.join(HERE, 'corpus', t)))}"
                                  for t in ("config_yaml", "state_file", "http_response", "lb_stats")))
