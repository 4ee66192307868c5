#include "tools/gtmeshctl/command_table.hpp"

namespace gtmesh::cli {

namespace {

// Options several commands share, worded once.
const option_spec dry_run{"--dry-run", "", "validate and print which answers would change; change nothing"};
const option_spec if_match{"--if-match", "VERSION",
                           "refused (HTTP 412) unless the config is still at VERSION; without it a change "
                           "another overtook is made again from the newer version"};
const option_spec message{"--message", "TEXT", "recorded with the new version (gtmeshctl configs shows it)"};
const option_spec json{"--json", "", "print JSON instead of text"};
const option_spec ca_dir{"--dir", "DIR", "the folder of the cluster CA and the certificates (default tls)"};
const option_spec zone_config{"--config", "FILE", "the config whose zone names the keys", true};
const option_spec import_zone{"--zone", "ZONE",
                               "the zone the records go in (default: azure-tm trafficmanager.net, octodns the file "
                               "name, route53 the SOA record set's name)"};
const option_spec import_out{"--output", "OUT", "write the config to OUT instead of stdout ('-': stdout)", false,
                             false, "-o"};
const option_spec import_geo{"--geo-database", "PATH",
                             "the geo database the config names when a geographic profile comes out (made "
                             "absolute; default GeoLite2-Country.mmdb next to the config)"};
const option_spec import_resolver{"--resolver", "ADDR[:PORT]",
                                  "a recursive resolver the deciders ask for ALIAS targets' addresses (resolver.servers, "
                                  "at most 8); without it a config with ALIAS gets the placeholder 127.0.0.1:53, "
                                  "reported",
                                  false, true};

program_spec make_program() {
  program_spec p;
  p.name = "gtmeshctl";
  p.summary = "The operator's tool of gtmesh: push and change configs, drain DCs, explain answers and watch the "
              "deciders over the mesh (mutual TLS with an operator certificate), and local tools for "
              "certificates, DNSSEC keys, query logs and imports. The node roles are gtmesh's.";
  p.global_options = {
    {"--decider", "HOST:PORT",
     "a decider to ask; with several, each in turn (default $GTMESH_DECIDER, else 127.0.0.1:7400)", false, true},
    {"--tls-ca", "FILE", "the cluster CA; with --tls-cert and --tls-key the link is mutual TLS (all three or none)"},
    {"--tls-cert", "FILE", "an operator certificate (gtmeshctl ca issue NAME --role operator)"},
    {"--tls-key", "FILE", "its private key"},
    {"--tls-crl", "FILE", "a CRL: a decider whose certificate it lists is refused"},
    {"--timeout", "DURATION", "how long to wait for one decider's answer (default 5s; changes wait longer)"},
    {"--retry-for", "DURATION",
     "how long a change that failed for a reason a retry can overcome (no leader yet, the leader changed) is "
     "retried, against every --decider in turn (default 15s)"},
  };
  p.notes = "A push carries an id the cluster applies once, so a retry never makes a second version. Exit "
            "codes: 0 done, 1 rejected or failed (nothing changed), 2 usage error, 3 not acknowledged (the "
            "outcome is unknown: it may still be applied; check gtmeshctl configs). Docs: docs/mesh.md, "
            "docs/api.md.";
  p.commands = {
    {.path = "push",
     .args = "FILE",
     .summary = "validate a config locally, then commit it through the deciders' Raft log",
     .options = {dry_run,
                 {"--force", "", "push even if the config API changed the config after the version FILE is "
                                 "based on"},
                 {"--base", "VERSION", "the version FILE is based on (default: its gtmeshctl export header, else "
                                       "the last pushed file)"},
                 {"--no-local-check", "", "send FILE without loading it here: the decider checks it and names "
                                          "file, line and field as here (a config too large for this machine)"},
                 {"--local-check", "", "load FILE here first even above 8 MiB (by default a file that large is "
                                       "checked by the deciders alone, in proportion to what it changed)"},
                 message},
     .examples = {"gtmeshctl push gtmesh.yaml --dry-run",
                  "gtmeshctl --decider 10.0.0.11:7400 push gtmesh.yaml --message \"more weight for fra\""},
     .details = "Prints \"accepted as version N\" once a majority of the deciders has it on disk. A config "
                "with errors is refused here with file, line and field, before anything is sent (with "
                "--no-local-check or above 8 MiB, by the decider, which checks every push anyway)."},
    {.path = "get",
     .args = "KIND [NAME]",
     .summary = "one object of the running config, or a list of them, as JSON",
     .examples = {"gtmeshctl get profiles", "gtmeshctl get zones/example.com/records www A"},
     .details = "KIND: zones, profiles, services, datacenters, probes, or zones/ZONE/records (NAME TYPE, or "
                "zones/ZONE/records/NAME/TYPE). The per-object config API over the mesh (docs/api.md)."},
    {.path = "apply",
     .args = "FILE",
     .summary = "commit the objects of a partial config (YAML or JSON) as one new version",
     .options = {dry_run, if_match, message},
     .examples = {"gtmeshctl apply objects.yaml --dry-run", "gtmeshctl apply objects.yaml --if-match 12 "
                                                            "--message \"add lb\""}},
    {.path = "delete",
     .args = "KIND NAME",
     .summary = "delete one object of the running config as one new version",
     .options = {dry_run, if_match, message},
     .examples = {"gtmeshctl delete zones/example.com/records www A --if-match 12"},
     .details = "KIND NAME as for get: profiles api-eu, zones/ZONE/records NAME TYPE."},
    {.path = "export",
     .summary = "the running config as canonical YAML; its first line names its version",
     .examples = {"gtmeshctl export > running.yaml"},
     .details = "Edit it and push it: the push is refused if the config API changed the config since (docs/api.md)."},
    {.path = "status",
     .summary = "per decider: config version, consensus, peers, DC health with ages, agents, counters",
     .options = {{"--json", "", "{\"decider\": {...}, \"consensus\": \"...\"}, as the console's /api/status"}},
     .examples = {"gtmeshctl status", "gtmeshctl --decider 10.0.0.11:7400 status --json"}},
    {.path = "configs",
     .summary = "the committed config history: VERSION SHA256 LOG-INDEX FILE BY AT_MS SOURCE [MESSAGE]",
     .examples = {"gtmeshctl configs"}},
    {.path = "explain",
     .args = "NAME [TYPE]",
     .summary = "a live decision trace: why the cluster answers NAME as it does",
     .options = {{"--client", "IP", "the resolver's address"},
                 {"--ecs", "PREFIX", "an EDNS Client Subnet (decides instead of --client)"},
                 {"--json", "", "print the trace as JSON"}},
     .examples = {"gtmeshctl explain www.example.com A --client 198.51.100.7"},
     .details = "TYPE defaults to A. The trace gtmesh explain prints, with the cluster's live measurements "
                "(docs/explain.md)."},
    {.path = "drain",
     .args = "DC",
     .summary = "take a DC out of every answer: an operator override committed through the Raft log",
     .examples = {"gtmeshctl drain fra"}},
    {.path = "undrain",
     .args = "DC",
     .summary = "end a drain: the DC answers again as its health says",
     .examples = {"gtmeshctl undrain fra"}},
    {.path = "member",
     .summary = "the deciders of the cluster, listed and changed online, one change at a time",
     .details = "A new decider is started with --join first; changes keep a majority (docs/mesh.md, "
                "\"Changing the deciders\")."},
    {.path = "member list",
     .summary = "the deciders: ADDRESS ROLE [leader] [in contact, match N | UNREACHABLE]",
     .examples = {"gtmeshctl member list"}},
    {.path = "member add",
     .args = "HOST:PORT",
     .summary = "add a decider started with --join: a spare until it has caught up with the log, then a voter",
     .examples = {"gtmeshctl member add 10.0.0.14:7400"},
     .details = "Returns when the promotion is committed; a decider that never catches up fails the command "
                "and stays a spare without a vote (remove it with member remove)."},
    {.path = "member remove",
     .args = "HOST:PORT",
     .summary = "remove a decider (the leader too): standby first, then removed",
     .examples = {"gtmeshctl member remove 10.0.0.13:7400"}},
    {.path = "member replace",
     .args = "OLD NEW",
     .summary = "add NEW (started with --join), then remove OLD: the majority never shrinks",
     .examples = {"gtmeshctl member replace 10.0.0.13:7400 10.0.0.14:7400"}},
    {.path = "history",
     .summary = "the health transition timeline, one line per change, in UTC",
     .options = {{"--since", "WHEN", "from a duration ago (10m, 2h), a UTC time (2026-12-01T04:00:00Z) or "
                                     "Unix ms (default: all kept)"},
                 {"--limit", "N", "at most N transitions, 1-100000 (default 100)"}},
     .examples = {"gtmeshctl history --since 10m"}},
    {.path = "backup",
     .args = "FILE",
     .summary = "the cluster's committed state (configs and their history, drains, membership) from the leader, "
                "into one checked file",
     .examples = {"gtmeshctl backup gtmesh-2026-12-01.backup"},
     .details = "Restore it with gtmesh decider ... --restore FILE on every decider of a new cluster "
                "(docs/mesh.md, \"Backup and restore\")."},
    {.path = "show-backup",
     .args = "FILE",
     .summary = "what a backup holds, checked as a restore checks it; local",
     .examples = {"gtmeshctl show-backup gtmesh.backup"}},
    {.path = "fault",
     .args = "[LINK SPEC]",
     .summary = "the fault hooks of the decider asked (one started with --faults): show them, or set one link's",
     .examples = {"gtmeshctl fault 127.0.0.1:7401 drop=0.3,delay=100ms", "gtmeshctl fault '*' none"},
     .details = "LINK: a peer's advertised address, an agent's name, or * for all. SPEC: "
                "drop=0.3,dup=0.1,reorder=0.2,reorder_window=50ms,delay=100ms, partition, or none. Local to "
                "that decider, never replicated (docs/mesh.md, \"Fault injection\")."},
    {.path = "signed-only",
     .args = "on|off",
     .summary = "the cluster's signed-only policy: with it on, only operator actions gtmeshctl signs apply",
     .examples = {"gtmeshctl --tls-ca tls/ca.pem --tls-cert tls/alice.pem --tls-key tls/alice.key signed-only on"},
     .details = "Committed through the log, and signed itself (it needs --tls-cert and --tls-key). With it on, the "
                "console, the HTTP API and the external-dns webhook change nothing (docs/mesh.md, \"Who did "
                "it\")."},
    {.path = "ca",
     .summary = "the cluster CA and role certificates for mutual TLS",
     .details = "Every mesh link is mutual TLS with a certificate whose role (decider, agent of a DC, "
                "operator) says what the link may do (docs/mesh.md, \"Mutual TLS and roles\")."},
    {.path = "ca init",
     .summary = "create the cluster CA (ca.pem, ca.key); local, never overwrites",
     .options = {ca_dir, {"--cluster", "NAME", "the CA's name (default gtmesh)"}},
     .examples = {"gtmeshctl ca init --dir tls --cluster prod"},
     .details = "Keep ca.key off the nodes."},
    {.path = "ca issue",
     .args = "NODE",
     .summary = "a certificate and key for NODE (NODE.pem, NODE.key) with its role; local",
     .options = {{"--role", "decider|agent|operator", "what the certificate may do", true},
                 {"--dc", "DC", "an agent's DC (agents only, and required for them)"},
                 {"--instance", "I", "an agent's instance (default NODE)"},
                 ca_dir},
     .examples = {"gtmeshctl ca issue decider1 --role decider --dir tls",
                  "gtmeshctl ca issue fra-agent --role agent --dc fra --dir tls",
                  "gtmeshctl ca issue alice --role operator --dir tls"}},
    {.path = "ca revoke",
     .args = "NODE|SERIAL",
     .summary = "revoke a certificate through the deciders' log: every decider closes links using it and "
                "refuses it",
     .options = {{"--dir", "DIR", "where ca issue wrote NODE.pem (default tls); else give the serial"}},
     .examples = {"gtmeshctl ca revoke mallory --dir tls"},
     .details = "SERIAL as openssl x509 -noout -serial prints it (docs/mesh.md, \"Rotating and revoking "
                "certificates\")."},
    {.path = "dnssec",
     .summary = "DNSSEC keys of the zones a config signs; local, no decider is asked",
     .details = "Keys are files on every node that answers DNS, never in the pushed config (docs/dnssec.md)."},
    {.path = "dnssec keygen",
     .args = "ZONE",
     .summary = "make a signing key (PEM, mode 0600) and print its DNSKEY and DS records",
     .options = {{"--algorithm", "ecdsap256sha256|ed25519", "the key's algorithm (default ecdsap256sha256)"},
                 {"--dir", "DIR", "write it into DIR, named after its key tag: Kzone.+013+TAG.pem (default .)"},
                 {"--out", "PATH", "write it to PATH exactly (parent folders are made), e.g. the path a "
                                   "config's dnssec.key names; not with --dir"}},
     .examples = {"gtmeshctl dnssec keygen example.com --dir /etc/gtmesh/dnssec",
                  "gtmeshctl dnssec keygen example.com --out configs/examples/keys/example.com.pem"},
     .details = "A key file is never overwritten. Copy it to every decider and gtmesh serve node, out of band."},
    {.path = "dnssec ds",
     .args = "ZONE",
     .summary = "the DS records for the parent and the DNSKEY trust anchors of a zone's keys",
     .options = {zone_config},
     .examples = {"gtmeshctl dnssec ds example.com --config gtmesh.yaml"}},
    {.path = "dnssec rollover-plan",
     .args = "ZONE",
     .summary = "the steps of a pre-publication key rollover, with the waits this zone's TTLs need",
     .options = {zone_config},
     .examples = {"gtmeshctl dnssec rollover-plan example.com --config gtmesh.yaml"}},
    {.path = "dnssec dump-static",
     .args = "ZONE",
     .summary = "the static part of the signed zone with an NSEC chain, for dnssec-verify and "
                "ldns-verify-zone",
     .options = {zone_config},
     .examples = {"gtmeshctl dnssec dump-static example.com --config gtmesh.yaml > zone.signed"},
     .details = "Names with dynamic answers are left out: a check, not a zone to serve."},
    {.path = "tap",
     .args = "FILE|unix:PATH",
     .summary = "dnstap query logs with gtmesh's decisions, from a file or a socket it listens on; local",
     .options = {{"--json", "", "one JSON object a line, the decision as a map"},
                 {"--limit", "N", "stop after N messages"},
                 {"--for", "DURATION", "a socket: stop listening after this long (default: until interrupted)"}},
     .examples = {"gtmeshctl tap /var/log/gtmesh/dnstap.tap", "gtmeshctl tap unix:/run/dnstap.sock --json "
                                                                "--limit 10"},
     .details = "docs/dns.md, \"Query logs: dnstap\"."},
    {.path = "import",
     .summary = "another traffic manager's export as a gtmesh config, with a report of what did not map 1:1; "
                "local",
     .details = "The config goes to stdout (or -o OUT) as canonical YAML; one line per field that did not map "
                "1:1 goes to stderr, prefixed \"import: \". Exit 0 a config came out, 1 nothing usable, 2 usage "
                "(docs/migrate.md)."},
    {.path = "import azure-tm",
     .args = "FILE",
     .summary = "an Azure Traffic Manager profile (ARM JSON) as a gtmesh config",
     .options = {import_zone, import_out, import_geo},
     .examples = {"gtmeshctl import azure-tm profile.json --zone example.com -o gtmesh.yaml"}},
    {.path = "import octodns",
     .args = "ZONE.yaml",
     .summary = "an octoDNS zone file as a gtmesh config",
     .options = {import_zone, import_out, import_geo, import_resolver},
     .examples = {"gtmeshctl import octodns example.com.yaml -o gtmesh.yaml"}},
    {.path = "import route53",
     .args = "RRSETS.json [HEALTHCHECKS.json]",
     .summary = "Route 53 record sets (and their health checks) as a gtmesh config",
     .options = {import_zone, import_out, import_geo, import_resolver},
     .examples = {"gtmeshctl import route53 rrsets.json healthchecks.json --zone example.com -o gtmesh.yaml",
                  "gtmeshctl import route53 rrsets.json --resolver 10.0.0.2 --resolver 10.0.1.2 -o gtmesh.yaml"}},
    {.path = "enroll",
     .args = "DC",
     .summary = "on a new machine, as root: install and start the agents of DC (gtmesh-agent@DC)",
     .options = {{"--http", "ADDR", "the agents' /metrics listener (default 127.0.0.1:9465; \"\" for none)"},
                 {"--etc", "DIR", "install into DIR instead of /etc/gtmesh"},
                 {"--no-start", "", "write the files only, and print the command that starts the agents"}},
     .examples = {"gtmeshctl --decider 10.0.0.11:7400 --tls-ca ca.pem --tls-cert fra-agent.pem --tls-key "
                  "fra-agent.key enroll fra"},
     .details = "With --decider (every decider the agents report to) and the agent certificate of DC as "
                "--tls-*: it fetches the cluster's config with that certificate, installs it with the TLS "
                "files, then enables and starts the agents (docs/deploy.md)."},
    {.path = "send-garbage",
     .summary = "test aid: send a decider bytes that are no frame and a frame of an unknown version, then ask "
                "its status",
     .examples = {"gtmeshctl send-garbage"},
     .details = "The decider must count and drop both and stay up (tests/system/mesh_cluster)."},
    {.path = "help",
     .args = "[COMMAND [SUBCOMMAND]]",
     .summary = "the usage of gtmeshctl, or of one command (as COMMAND --help)",
     .examples = {"gtmeshctl help member add"}},
  };
  return p;
}

} // namespace

const program_spec& gtmeshctl_program() {
  static const program_spec p = make_program();
  return p;
}

} // namespace gtmesh::cli
