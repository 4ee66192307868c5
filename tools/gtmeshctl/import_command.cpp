// gtmeshctl import: argument handling, reading the input files, the import
// itself (importers/importer.hpp, the gtmesh_importers library), and writing
// the config and the report.

#include "tools/gtmeshctl/import_command.hpp"

#include "core/config/config_json.hpp"
#include "core/config/config_loader.hpp"
#include "core/geo/region.hpp"
#include "core/net/ip_address.hpp"
#include "core/routing/all_methods.hpp"
#include "tools/gtmeshctl/command_table.hpp"
#include "tools/gtmeshctl/importers/importer.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gtmesh::cli {

namespace {

using importing::json;

int usage(const std::string& system, const std::string& why) {
  const bool known = system == "azure-tm" || system == "octodns" || system == "route53";
  return print_usage_error(gtmeshctl_program(), known ? "import " + system : std::string("import"), why);
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw importing::input_error(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw importing::input_error(path + ": cannot read it");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    throw importing::input_error(path + ": read error");
  return ss.str();
}

/// Whether the config the import wrote loads, as the loader of every node
/// reads it; "" when it does, else the loader's first error. The importers
/// keep every value within the loader's rules, and the fuzz targets check
/// that they do (tests/fuzz/import_*_fuzz.cpp); this is the last guard, so
/// the command never writes a config that `gtmesh check-config` refuses.
std::string load_error(const std::string& text, const std::string& out_path, bool placeholder_geo) {
  // Relative paths in the config are resolved against its folder.
  std::string file = out_path.empty() || out_path == "-" ? "imported.yaml" : out_path;
  load_result r = load_config_text(text, file, routing_methods());
  for (const auto& e : r.errors)
    // Without --geo-database the import names a database the operator puts
    // next to the config (reported); everything else must load as it is.
    if (!(placeholder_geo && e.field == "geo.database"))
      return e.to_string();
  return "";
}

} // namespace

int import_command(const std::vector<std::string>& args) {
  // Our own options (gtmeshctl's main reader does not know -o); main
  // refused every option tools/gtmeshctl/command_table.cpp does not list.
  std::vector<std::string> pos;
  importing::options o;
  std::string out_path;
  const std::string system_word = args.size() > 1 ? args[1] : "";
  for (size_t i = 1; i < args.size(); ++i) {
    // --name=value or --name value
    const size_t eq = args[i].starts_with("--") ? args[i].find('=') : std::string::npos;
    const std::string a = args[i].substr(0, eq);
    auto value = [&](std::string& dst) {
      if (eq != std::string::npos) {
        dst = args[i].substr(eq + 1);
        return true;
      }
      if (i + 1 >= args.size())
        return false;
      dst = args[++i];
      return true;
    };
    if (a == "-o" || a == "--output") {
      if (!value(out_path))
        return usage(system_word, a + " needs a value (OUT)");
    } else if (a == "--zone") {
      if (!value(o.zone))
        return usage(system_word, "--zone needs a value (ZONE)");
    } else if (a == "--geo-database") {
      if (!value(o.geo_database))
        return usage(system_word, "--geo-database needs a value (PATH)");
    } else if (a == "--resolver") {
      std::string server;
      if (!value(server))
        return usage(system_word, "--resolver needs a value (ADDR[:PORT])");
      if (!importing::valid_resolver_server(server))
        return usage(system_word, "--resolver '" + server + "': expected ADDRESS, ADDRESS:PORT or [IPv6]:PORT, e.g. "
                                  "127.0.0.1:53");
      if (o.resolvers.size() == importing::max_resolver_servers)
        return usage(system_word, "at most " + std::to_string(importing::max_resolver_servers) +
                                    " --resolver (resolver.servers)");
      o.resolvers.push_back(server);
    } else if (a.size() > 1 && a[0] == '-') {
      return usage(system_word, "unknown option '" + a + "'");
    } else {
      pos.push_back(a);
    }
  }
  const std::string system = pos.empty() ? std::string() : pos[0];
  const size_t max_files = system == "route53" ? 3 : 2;
  if (system != "azure-tm" && system != "octodns" && system != "route53")
    return usage(system, system.empty() ? "needs a SYSTEM: azure-tm, octodns or route53"
                                        : "unknown SYSTEM '" + system + "': azure-tm, octodns or route53");
  if (pos.size() < 2 || pos.size() > max_files)
    return usage(system, system == "route53" ? "expects RRSETS.json [HEALTHCHECKS.json]" : "expects one FILE");
  o.file = pos[1];
  if (pos.size() == 3)
    o.second_file = pos[2];
  if (!o.geo_database.empty()) {
    // The loader resolves a relative path against the config's folder, not
    // the folder the import ran in.
    std::error_code ec;
    auto abs = std::filesystem::absolute(o.geo_database, ec);
    if (!ec)
      o.geo_database = abs.lexically_normal().string();
  }

  importing::report r;
  json doc;
  try {
    auto parse = [&](const std::string& path) {
      return system == "octodns" ? importing::parse_yaml_text(read_file(path), path)
                                 : importing::parse_json_text(read_file(path), path);
    };
    json input = parse(o.file);
    json checks;
    if (!o.second_file.empty())
      checks = parse(o.second_file);
    doc = importing::run_import(system, input, o.second_file.empty() ? nullptr : &checks, o, r);
  } catch (const importing::input_error& e) {
    for (const auto& line : r.lines())
      std::fprintf(stderr, "%s\n", line.c_str());
    std::fprintf(stderr, "gtmeshctl import %s: %s\n", system.c_str(), e.what());
    return 1;
  } catch (const std::exception& e) { // a bug, but never a crash
    std::fprintf(stderr, "gtmeshctl import %s: %s: %s\n", system.c_str(), o.file.c_str(), e.what());
    return 1;
  }

  std::string header = "# imported by gtmeshctl import " + system + " from " +
                       std::filesystem::path(o.file).filename().string() + "\n";
  std::string text = config_json::to_yaml(doc, header, false).text;
  if (std::string why = load_error(text, out_path, o.geo_database.empty()); !why.empty()) {
    for (const auto& line : r.lines())
      std::fprintf(stderr, "%s\n", line.c_str());
    std::fprintf(stderr, "gtmeshctl import %s: %s: the imported config would not load (%s); nothing written. "
                         "This is a gap in the importer: please report it with the input\n",
                 system.c_str(), o.file.c_str(), why.c_str());
    return 1;
  }
  if (out_path.empty() || out_path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::fprintf(stderr, "gtmeshctl import: cannot write %s\n", out_path.c_str());
      return 1;
    }
  }
  for (const auto& line : r.lines())
    std::fprintf(stderr, "%s\n", line.c_str());
  return 0;
}

} // namespace gtmesh::cli
