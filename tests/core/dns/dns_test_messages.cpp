#include "tests/core/dns/dns_test_messages.hpp"

#include <arpa/inet.h>
#include <cctype>
#include <sstream>
#include <stdexcept>

namespace gtmesh::dns::test {

namespace {

void put16(bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v >> 8));
  b.push_back(static_cast<uint8_t>(v));
}

void put32(bytes& b, uint32_t v) {
  put16(b, static_cast<uint16_t>(v >> 16));
  put16(b, static_cast<uint16_t>(v));
}

struct reader {
  const bytes& w;
  size_t pos = 0;

  void need(size_t n) const {
    if (pos + n > w.size())
      throw std::runtime_error("read past end at " + std::to_string(pos));
  }
  uint8_t u8() {
    need(1);
    return w[pos++];
  }
  uint16_t u16() {
    need(2);
    uint16_t v = static_cast<uint16_t>(w[pos] << 8 | w[pos + 1]);
    pos += 2;
    return v;
  }
  uint32_t u32() {
    uint32_t hi = u16();
    return hi << 16 | u16();
  }
  /// Reads a possibly compressed name starting at `at`; returns the text and
  /// sets `end` to the position after the name's in-place bytes.
  std::string name_at(size_t at, size_t& end) const {
    std::string out;
    size_t p = at;
    bool jumped = false;
    int hops = 0;
    for (;;) {
      if (p >= w.size())
        throw std::runtime_error("name past end");
      uint8_t l = w[p];
      if ((l & 0xc0) == 0xc0) {
        if (p + 1 >= w.size())
          throw std::runtime_error("pointer past end");
        size_t target = static_cast<size_t>(l & 0x3f) << 8 | w[p + 1];
        if (target >= p)
          throw std::runtime_error("forward pointer");
        if (!jumped)
          end = p + 2;
        jumped = true;
        if (++hops > 64)
          throw std::runtime_error("pointer loop");
        p = target;
        continue;
      }
      if (l > 63)
        throw std::runtime_error("bad label type");
      if (l == 0) {
        if (!jumped)
          end = p + 1;
        return out.empty() ? "." : out;
      }
      if (p + 1 + l > w.size())
        throw std::runtime_error("label past end");
      for (size_t i = 1; i <= l; ++i)
        out.push_back(static_cast<char>(std::tolower(w[p + i])));
      out.push_back('.');
      p += 1 + l;
    }
  }
  std::string name() {
    size_t end = pos;
    std::string n = name_at(pos, end);
    pos = end;
    return n;
  }
};

std::string decode_rdata(const reader& r, size_t start, uint16_t type, uint16_t length) {
  const bytes& w = r.w;
  std::ostringstream out;
  size_t end = 0;
  switch (type) {
    case 1:
      if (length != 4)
        throw std::runtime_error("A rdlength");
      out << int(w[start]) << '.' << int(w[start + 1]) << '.' << int(w[start + 2]) << '.' << int(w[start + 3]);
      return out.str();
    case 28: {
      if (length != 16)
        throw std::runtime_error("AAAA rdlength");
      char text[INET6_ADDRSTRLEN];
      inet_ntop(AF_INET6, w.data() + start, text, sizeof(text));
      return text;
    }
    case 2:
    case 5: {
      std::string n = r.name_at(start, end);
      if (end != start + length)
        throw std::runtime_error("name rdlength");
      return n;
    }
    case 15: {
      uint16_t pref = static_cast<uint16_t>(w[start] << 8 | w[start + 1]);
      std::string n = r.name_at(start + 2, end);
      if (end != start + length)
        throw std::runtime_error("MX rdlength");
      return std::to_string(pref) + " " + n;
    }
    case 6: {
      std::string m = r.name_at(start, end);
      std::string n = r.name_at(end, end);
      if (end + 20 != start + length)
        throw std::runtime_error("SOA rdlength");
      reader rr{w, end};
      out << m << ' ' << n;
      for (int i = 0; i < 5; ++i)
        out << ' ' << rr.u32();
      return out.str();
    }
    case 16: {
      size_t p = start;
      bool first = true;
      while (p < start + length) {
        uint8_t l = w[p];
        if (p + 1 + l > start + length)
          throw std::runtime_error("TXT string past rdata");
        out << (first ? "" : " ") << '"' << std::string(w.begin() + p + 1, w.begin() + p + 1 + l) << '"';
        first = false;
        p += 1 + l;
      }
      return out.str();
    }
    case 33: {
      reader rr{w, start};
      uint16_t prio = rr.u16(), weight = rr.u16(), port = rr.u16();
      // SRV targets must not be compressed (RFC 2782).
      for (size_t p = rr.pos; p < start + length;) {
        if ((w[p] & 0xc0) == 0xc0)
          throw std::runtime_error("compressed SRV target");
        if (w[p] == 0)
          break;
        p += 1 + w[p];
      }
      std::string n = r.name_at(rr.pos, end);
      if (end != start + length)
        throw std::runtime_error("SRV rdlength");
      out << prio << ' ' << weight << ' ' << port << ' ' << n;
      return out.str();
    }
    default:
      return "";
  }
}

} // namespace

bytes wire_name(const std::string& name) {
  bytes out;
  std::string n = name;
  if (!n.empty() && n.back() == '.')
    n.pop_back();
  size_t start = 0;
  while (!n.empty() && start <= n.size()) {
    size_t dot = n.find('.', start);
    if (dot == std::string::npos)
      dot = n.size();
    out.push_back(static_cast<uint8_t>(dot - start));
    out.insert(out.end(), n.begin() + start, n.begin() + dot);
    start = dot + 1;
  }
  out.push_back(0);
  return out;
}

bytes make_query(const query_spec& q) {
  bytes b;
  put16(b, q.id);
  put16(b, q.flags);
  put16(b, 1);
  put16(b, 0);
  put16(b, 0);
  put16(b, q.edns ? 1 : 0);
  bytes n = wire_name(q.name);
  b.insert(b.end(), n.begin(), n.end());
  put16(b, q.type);
  put16(b, q.klass);
  if (q.edns) {
    b.push_back(0);
    put16(b, 41);
    put16(b, q.udp_size);
    put32(b, static_cast<uint32_t>(q.edns_version) << 16 | (q.dnssec_ok ? 0x8000u : 0u));
    bytes opts;
    if (q.ecs) {
      put16(opts, 8);
      put16(opts, static_cast<uint16_t>(4 + q.ecs->address.size()));
      put16(opts, q.ecs->family);
      opts.push_back(q.ecs->source);
      opts.push_back(q.ecs->scope);
      opts.insert(opts.end(), q.ecs->address.begin(), q.ecs->address.end());
    }
    put16(b, static_cast<uint16_t>(opts.size()));
    b.insert(b.end(), opts.begin(), opts.end());
  }
  return b;
}

ecs_option ecs_for(const std::string& prefix) {
  ecs_option e;
  auto slash = prefix.find('/');
  std::string addr = prefix.substr(0, slash);
  e.source = static_cast<uint8_t>(std::stoi(prefix.substr(slash + 1)));
  uint8_t buf[16] = {};
  if (addr.find(':') == std::string::npos) {
    e.family = 1;
    inet_pton(AF_INET, addr.c_str(), buf);
  } else {
    e.family = 2;
    inet_pton(AF_INET6, addr.c_str(), buf);
  }
  e.address.assign(buf, buf + (e.source + 7) / 8);
  return e;
}

const record* message::opt() const {
  for (const auto& r : additional)
    if (r.type == 41)
      return &r;
  return nullptr;
}

int message::full_rcode() const {
  const record* o = opt();
  return rcode() | (o ? static_cast<int>(o->ttl >> 24) << 4 : 0);
}

std::optional<ecs_option> message::ecs() const {
  const record* o = opt();
  if (!o)
    return std::nullopt;
  size_t p = 0;
  const bytes& d = o->rdata;
  while (p + 4 <= d.size()) {
    uint16_t code = static_cast<uint16_t>(d[p] << 8 | d[p + 1]);
    uint16_t len = static_cast<uint16_t>(d[p + 2] << 8 | d[p + 3]);
    if (code == 8 && len >= 4 && p + 4 + len <= d.size()) {
      ecs_option e;
      e.family = static_cast<uint16_t>(d[p + 4] << 8 | d[p + 5]);
      e.source = d[p + 6];
      e.scope = d[p + 7];
      e.address.assign(d.begin() + p + 8, d.begin() + p + 4 + len);
      return e;
    }
    p += 4 + len;
  }
  return std::nullopt;
}

std::vector<std::string> message::answer_texts() const {
  std::vector<std::string> out;
  for (const auto& r : answers)
    out.push_back(r.text);
  return out;
}

std::optional<message> parse_message(const bytes& wire, std::string* error) {
  try {
    reader r{wire};
    message m;
    m.id = r.u16();
    m.flags = r.u16();
    m.qdcount = r.u16();
    m.ancount = r.u16();
    m.nscount = r.u16();
    m.arcount = r.u16();
    if (m.qdcount > 1)
      throw std::runtime_error("qdcount > 1");
    if (m.qdcount == 1) {
      m.qname = r.name();
      m.qtype = r.u16();
      m.qclass = r.u16();
    }
    auto section = [&](uint16_t n, std::vector<record>& out) {
      for (uint16_t i = 0; i < n; ++i) {
        record rec;
        rec.owner = r.name();
        rec.type = r.u16();
        rec.klass = r.u16();
        rec.ttl = r.u32();
        uint16_t len = r.u16();
        r.need(len);
        rec.rdata.assign(wire.begin() + r.pos, wire.begin() + r.pos + len);
        rec.text = decode_rdata(r, r.pos, rec.type, len);
        r.pos += len;
        out.push_back(std::move(rec));
      }
    };
    section(m.ancount, m.answers);
    section(m.nscount, m.authority);
    section(m.arcount, m.additional);
    if (r.pos != wire.size())
      throw std::runtime_error("trailing bytes");
    return m;
  } catch (const std::exception& e) {
    if (error)
      *error = e.what();
    return std::nullopt;
  }
}

} // namespace gtmesh::dns::test
