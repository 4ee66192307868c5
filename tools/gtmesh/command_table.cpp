#include "tools/gtmesh/command_table.hpp"

namespace gtmesh::cli {

namespace {

// Options several commands share, worded once.
const option_spec config_option{"--config", "FILE", "the config (docs/config.md), checked as `gtmesh check-config` does",
                                true};
const option_spec tls_ca{"--tls-ca", "FILE", "the cluster CA: with --tls-cert and --tls-key, every mesh link is "
                                            "mutual TLS (default: the config's cluster.tls)"};
const option_spec tls_cert{"--tls-cert", "FILE", "this node's certificate (gtmeshctl ca issue)"};
const option_spec tls_key{"--tls-key", "FILE", "this node's private key"};
const option_spec tls_crl{"--tls-crl", "FILE", "a CRL: certificates it lists are refused (re-read on SIGHUP)"};
const option_spec http_option{"--http", "ADDR:PORT",
                              "serve Prometheus /metrics, /healthz and /readyz here (docs/metrics.md)"};
const option_spec cookie_secret{"--cookie-secret", "FILE",
                                "the cluster's DNS Cookie secret: 32 hex digits, a second line while rotating "
                                "(docs/dns.md)"};
const option_spec dnstap_option{"--dnstap", "unix:PATH|tcp:HOST:PORT|file:PATH",
                                "log every query and response as dnstap here, overriding the config's sink "
                                "(docs/dns.md)"};

program_spec make_program() {
  program_spec p;
  p.name = "gtmesh";
  p.summary = "One binary for every node role of the gtmesh global traffic manager: deciders, agents, "
              "standalone DNS responders and the demo cluster, and the local tools that check, explain and "
              "describe a config. The operator's tool is gtmeshctl.";
  p.global_options = {
    {"--log-format", "text|json", "log lines as text (default) or one JSON object per line"},
    {"--log-level", "debug|info|warn|error", "the least severe level logged (default info)"},
  };
  p.notes = "Exit codes: 0 done, 1 failed (a config error names file, line, column and field), 2 usage "
            "error. Docs: README.md and docs/*.md.";
  p.commands = {
    {.path = "check-config",
     .args = "FILE",
     .summary = "validate a config as a node would before accepting it (exit 1 with file:line:field errors)",
     .options = {{"--budget", "", "also print every record's worst-case failover time and warn above the "
                                  "config's failover_budget (default 120 s)"},
                 {"--require-keys", "",
                  "treat a DNSSEC key file that does not exist here as an error, as a node serving the zone "
                  "does (without it: a warning that prints the keygen command)"}},
     .examples = {"gtmesh check-config configs/full.yaml",
                  "gtmesh check-config --budget configs/full.yaml",
                  "gtmesh check-config --require-keys /etc/gtmesh/gtmesh.yaml   # on a node that serves it"},
     .details = "Runs what a decider or `gtmesh serve` runs before accepting a config: load, validate and "
                "compile (which opens the geo database and the DNSSEC keys). Exit 0: it would be accepted.\n\n"
                "DNSSEC key files are local to the nodes that answer DNS, so a key this machine does not have "
                "(CI, a laptop) is a warning naming the file and the `gtmeshctl dnssec keygen` command that "
                "makes it; a key file that exists but is unreadable, corrupt or of another algorithm is an "
                "error (docs/dnssec.md)."},
    {.path = "schema",
     .summary = "print the config's JSON Schema, made from the loader's table of fields",
     .examples = {"gtmesh schema > gtmesh-config.schema.json"},
     .details = "Editors validate with it, e.g. yaml-language-server: "
                "`# yaml-language-server: $schema=gtmesh-config.schema.json` (docs/api.md)."},
    {.path = "explain",
     .args = "NAME [TYPE]",
     .summary = "show why one query gets its answer, from a config and a hand-written measurement state",
     .options = {config_option,
                 {"--state", "STATE.yaml", "the measurements to decide with (docs/explain.md); default: none"},
                 {"--client", "IP", "the resolver's address (default 192.0.2.1)"},
                 {"--ecs", "PREFIX", "an EDNS Client Subnet, e.g. 198.51.100.0/24 (decides instead of --client)"},
                 {"--now", "TIME", "the clock: 2026-11-29T12:00:00Z or Unix ms (default: the state's now, else "
                                   "the current time)"},
                 {"--seed", "N", "seed the random methods, for a repeatable pick"},
                 {"--json", "", "print the decision trace as JSON"},
                 {"--dnssec", "", "add what a DO=1 response carries for a signed zone (docs/dnssec.md)"}},
     .examples = {"gtmesh explain --config configs/full.yaml --state configs/states/full-healthy.yaml "
                  "www.example.com A --client 198.51.100.7"},
     .details = "TYPE defaults to A. Every DC or endpoint is listed with its evidence and why it was picked "
                "or excluded, then the outcome and the record's failover budget (docs/explain.md)."},
    {.path = "serve",
     .summary = "run a standalone authoritative DNS responder from a config (and a measurement state)",
     .options = {config_option,
                 {"--listen", "ADDR:PORT",
                  "answer UDP and TCP here: 127.0.0.1:53, [::1]:53, 0.0.0.0:5353; port 0 lets the kernel pick",
                  true, true},
                 {"--state", "STATE.yaml", "the measurements to decide with (the format of gtmesh explain)"},
                 {"--port-file", "FILE", "once answering, write the bound ADDR:PORT here, one a line in --listen order"},
                 {"--udp-threads", "N", "UDP threads per listen address (default: the number of cores)"},
                 {"--udp-batch", "N", "datagrams per recvmmsg/sendmmsg call, 1-1024 (default 32)"},
                 {"--max-udp-size", "N", "the largest UDP response and the EDNS size advertised, 512-4096 "
                                         "(default 1232)"},
                 {"--no-tcp", "", "answer UDP only"},
                 {"--dot", "ADDR:PORT", "also answer DNS over TLS here (RFC 7858; transfers on it are XoT): "
                                        "0.0.0.0:853", false, true},
                 {"--dot-cert", "FILE", "the certificate chain DoT clients check (PEM)"},
                 {"--dot-key", "FILE", "the private key of --dot-cert"},
                 {"--dot-client-ca", "FILE", "ask DoT clients for a certificate this CA verifies (XoT's mutual "
                                             "TLS: transfer.allow tls_client)"},
                 {"--tcp-idle-timeout", "DURATION", "close a TCP connection idle this long (default 10s)"},
                 {"--tcp-pressure-idle-timeout", "DURATION",
                  "the idle timeout while over half of --tcp-max-connections are open (default 1s)"},
                 {"--tcp-max-connections", "N", "open TCP connections at most (default 256)"},
                 {"--tcp-max-connections-per-client", "N",
                  "open TCP connections per client prefix at most (default 0: a sixteenth of the maximum)"},
                 {"--tcp-client-ipv4-prefix", "N", "the IPv4 prefix length of one TCP client (default 24)"},
                 {"--tcp-client-ipv6-prefix", "N", "the IPv6 prefix length of one TCP client (default 56)"},
                 {"--rrl-rate", "N", "responses per client prefix and second before rate limiting (default 200; "
                                     "0: off)"},
                 {"--rrl-slip", "N", "every N-th limited response is sent truncated (default 2; 0: drop all)"},
                 {"--rrl-ipv4-prefix", "N", "the IPv4 prefix length rate limiting counts per (default 24)"},
                 {"--rrl-ipv6-prefix", "N", "the IPv6 prefix length rate limiting counts per (default 56)"},
                 {"--rrl-loopback", "", "rate-limit loopback clients too (exempt by default)"},
                 cookie_secret,
                 http_option,
                 dnstap_option},
     .examples = {"gtmesh serve --config configs/full.yaml --listen 127.0.0.1:5353 "
                  "--state configs/states/full-healthy.yaml"},
     .details = "SIGHUP reloads the config and the state without dropping a query (a bad one keeps the "
                "running one, and is reported with file, line and field), SIGUSR1 prints the counters, "
                "SIGTERM or SIGINT exit (docs/dns.md)."},
    {.path = "agent",
     .summary = "run the host, service, probe and client agents of one DC",
     .options = {config_option,
                 {"--dc", "DC", "the datacenter these agents measure, as the config names it", true},
                 {"--decider", "HOST:PORT", "send measurements to this decider over the mesh", false, true},
                 {"--once", "", "one round of every measurement, printed as JSON lines; then exit"},
                 {"--print", "", "print every batch as JSON lines on stdout (the default without --decider)"},
                 {"--quiet", "", "leave out probe transitions and notes on stderr"},
                 {"--instance", "ID", "this instance's name: its measurements come from DC/ID (default: the "
                                      "host name)"},
                 {"--client-prefix", "PREFIX", "also probe the paths to this client network", false, true},
                 {"--client-rate", "N", "ICMP echo requests a second to client paths, 1-10000 (default: the "
                                        "config's measurement.client_probe_rate)"},
                 {"--icmp", "datagram|raw", "force one kind of ICMP socket"},
                 {"--procfs", "DIR", "read host counters from DIR instead of /proc (an agent in a container)"},
                 http_option,
                 tls_ca,
                 tls_cert,
                 tls_key,
                 tls_crl},
     .examples = {"gtmesh agent --config /etc/gtmesh/gtmesh.yaml --dc fra --decider 10.0.0.11:7400",
                  "gtmesh agent --config configs/full.yaml --dc fra --once"},
     .details = "With --decider, batches go to the deciders over the mesh and the agents follow the "
                "cluster's config versions; without it they are printed (docs/agents.md). Exit 2 also for a "
                "DC the config does not have."},
    {.path = "decider",
     .summary = "run a decider: the Raft log of configs and drains, gossip, RocksDB state, and DNS",
     .options = {{"--config", "FILE", "the bootstrap config, until the cluster's log holds one", true},
                 {"--data-dir", "DIR", "where its RocksDB state and Raft log live", true},
                 {"--listen", "HOST:PORT", "the mesh listener (port 0: the kernel picks)", true},
                 {"--advertise", "HOST:PORT",
                  "the address the other deciders use, and its identity in the Raft log (default --listen)"},
                 {"--peer", "HOST:PORT", "another decider of the first cluster", false, true},
                 {"--join", "", "start as a new decider of a running cluster (then gtmeshctl member add)"},
                 {"--restore", "BACKUP", "start a new cluster from a gtmeshctl backup file (empty data folders)"},
                 {"--name", "NAME", "its name in status and logs (default decider@ADVERTISE; under TLS the "
                                    "certificate's)"},
                 {"--dns", "ADDR:PORT", "also answer DNS here, from live snapshots", false, true},
                 {"--dns-threads", "N", "UDP threads per --dns address (default 1)"},
                 {"--dot", "ADDR:PORT", "also answer DNS over TLS here (RFC 7858; transfers on it are XoT)", false,
                  true},
                 {"--dot-cert", "FILE", "the certificate chain DoT clients check (PEM)"},
                 {"--dot-key", "FILE", "the private key of --dot-cert"},
                 {"--dot-client-ca", "FILE", "ask DoT clients for a certificate this CA verifies (XoT's mutual "
                                             "TLS: transfer.allow tls_client)"},
                 {"--port-file", "FILE", "once up, write the bound addresses here: 'mesh ...', 'dns ...', "
                                         "'http ...' lines"},
                 {"--faults", "", "enable fault hooks (gtmeshctl fault; tests and chaos runs)"},
                 {"--dc-down-after", "DURATION", "a DC with no measurement this long counts as down"},
                 {"--keep-configs", "N", "committed config versions kept, 1-10000 (default 10)"},
                 {"--gossip-interval", "DURATION", "how often measurements are gossiped, at least 10ms"},
                 {"--election-timeout", "DURATION", "the Raft election timeout, 200ms-60s (default 1s)"},
                 cookie_secret,
                 http_option,
                 {"--http-cert", "FILE", "serve --http over HTTPS with this certificate chain (a web PKI "
                                         "certificate browsers trust: the RUM tag and collector, the console)"},
                 {"--http-key", "FILE", "the private key of --http-cert"},
                 dnstap_option,
                 tls_ca,
                 tls_cert,
                 tls_key,
                 tls_crl},
     .examples = {"gtmesh decider --config gtmesh.yaml --data-dir /var/lib/gtmesh --listen 10.0.0.11:7400 "
                  "--peer 10.0.0.12:7400 --peer 10.0.0.13:7400 --dns 0.0.0.0:53"},
     .details = "The first deciders name each other with --peer; one added later starts with --join "
                "(docs/mesh.md, \"Changing the deciders\"). It answers DNS from live snapshots once it is "
                "current, SERVFAIL before."},
    {.path = "demo",
     .summary = "a whole 3-DC cluster in one process on loopback, with its own backends",
     .options = {{"--dns-port", "PORT", "the DNS responder's port on 127.0.0.1 (default 5353; 0: the kernel "
                                        "picks)"},
                 {"--mesh-port", "PORT", "the decider's mesh port (default 7400)"},
                 {"--http", "ADDR:PORT|off", "the console and /metrics (default 127.0.0.1:9464)"},
                 {"--data-dir", "DIR", "the decider's state and the down-DC files (default gtmesh-demo)"},
                 {"--port-file", "FILE", "once up, write the bound ports here"}},
     .examples = {"gtmesh demo", "gtmesh demo --dns-port 5354 --http off"},
     .details = "Three DCs (fra, iad, sin) with two HTTP backends each, their agents, one decider and a DNS "
                "responder. It prints the dig commands to try; `touch DIR/down-fra` fails fra's backends."},
    {.path = "backend",
     .summary = "a tiny HTTP backend for demos and tests: /health fails while a file exists",
     .options = {{"--listen", "HOST:PORT", "where it listens (port 0: the kernel picks)", true},
                 {"--name", "TEXT", "what it answers on every path but /health (default 'gtmesh backend')"},
                 {"--down-file", "FILE", "/health answers 503 while FILE exists, 200 OK otherwise"},
                 {"--port-file", "FILE", "write the bound port here once listening"}},
     .examples = {"gtmesh backend --listen 127.0.0.1:8080 --down-file /tmp/down"},
     .details = "Runs until SIGTERM or SIGINT."},
    {.path = "version",
     .summary = "this build's version, the mesh protocols it speaks, its capabilities and formats",
     .examples = {"gtmesh version"},
     .details = "For an operator in the middle of a rolling upgrade (docs/deploy.md)."},
    {.path = "help",
     .args = "[COMMAND]",
     .summary = "the usage of gtmesh, or of one command (as COMMAND --help)",
     .examples = {"gtmesh help serve"}},
  };
  return p;
}

} // namespace

const program_spec& gtmesh_program() {
  static const program_spec p = make_program();
  return p;
}

int usage_error(std::string_view command, const std::string& why) {
  return print_usage_error(gtmesh_program(), command, why);
}

} // namespace gtmesh::cli
