#include "core/dns/transfer/signed_view.hpp"

#include "core/dns/lookup/denial_types.hpp"
#include "core/dns/transfer/zone_transfer.hpp"
#include "core/dns/wire/name.hpp"
#include "core/routing/routing_plan.hpp"
#include "core/dnssec/covering_name.hpp"
#include "core/dnssec/rrset_signer.hpp"

#include <algorithm>
#include <array>
#include <set>

namespace gtmesh::dns {

namespace {

constexpr uint16_t type_ns = 2, type_soa = 6, type_cname = 5, type_ptr = 12, type_mx = 15, type_srv = 33,
                   type_dname = 39;

/// The length of the uncompressed name at `at`, 0 when there is none.
size_t name_length(std::span<const uint8_t> r, size_t at) noexcept {
  const size_t start = at;
  while (at < r.size()) {
    const uint8_t len = r[at];
    if (len == 0)
      return at + 1 - start;
    if (len > max_label)
      return 0;
    at += 1 + len;
  }
  return 0;
}

/// Sorted, unique, and each (owner, type) of one TTL: the smallest.
void one_ttl_per_rrset(std::vector<transfer_record>& records) {
  std::sort(records.begin(), records.end());
  records.erase(std::unique(records.begin(), records.end()), records.end());
  for (size_t i = 0; i < records.size();) {
    size_t end = i;
    uint32_t ttl = records[i].ttl;
    for (; end < records.size() && records[end].owner == records[i].owner && records[end].type == records[i].type; ++end)
      ttl = std::min(ttl, records[end].ttl);
    for (size_t k = i; k < end; ++k)
      records[k].ttl = ttl;
    i = end;
  }
  records.erase(std::unique(records.begin(), records.end()), records.end());
}

void put32(std::vector<uint8_t>& v, size_t at, uint32_t x) {
  v[at] = static_cast<uint8_t>(x >> 24);
  v[at + 1] = static_cast<uint8_t>(x >> 16);
  v[at + 2] = static_cast<uint8_t>(x >> 8);
  v[at + 3] = static_cast<uint8_t>(x);
}

uint32_t get32(std::span<const uint8_t> v, size_t at) {
  return uint32_t{v[at]} << 24 | uint32_t{v[at + 1]} << 16 | uint32_t{v[at + 2]} << 8 | v[at + 3];
}

/// An NSEC type bitmap (RFC 4034 4.1.2): a window per 256 types that has one.
void append_type_bitmap(const std::set<uint16_t>& types, std::vector<uint8_t>& out) {
  for (auto it = types.begin(); it != types.end();) {
    const uint8_t window = static_cast<uint8_t>(*it >> 8);
    std::array<uint8_t, 32> bits{};
    size_t octets = 0;
    for (; it != types.end() && (*it >> 8) == window; ++it) {
      const uint8_t low = static_cast<uint8_t>(*it);
      bits[low / 8] |= static_cast<uint8_t>(0x80 >> (low % 8));
      octets = low / 8 + 1u;
    }
    out.push_back(window);
    out.push_back(static_cast<uint8_t>(octets));
    out.insert(out.end(), bits.begin(), bits.begin() + static_cast<std::ptrdiff_t>(octets));
  }
}

/// The owner names of zone `zone`'s records in the config (lowercase wire
/// form), whatever its view transfers of them.
std::vector<std::vector<uint8_t>> configured_owners(const routing_plan& plan, uint32_t zone) {
  std::vector<std::vector<uint8_t>> out;
  for (const record_plan& r : plan.records) {
    if (r.zone != zone || r.mode == record_mode::plain)
      continue;
    if (auto wire = text_to_wire(r.name)) {
      for (auto& c : *wire)
        c = lower(c);
      out.push_back(std::move(*wire));
    }
  }
  return out;
}

} // namespace

std::pair<size_t, size_t> rdata_names(uint16_t type, std::span<const uint8_t> rdata) noexcept {
  auto name_at = [&](size_t at) -> std::pair<size_t, size_t> {
    const size_t n = at < rdata.size() ? name_length(rdata, at) : 0;
    return n ? std::pair{at, at + n} : std::pair<size_t, size_t>{0, 0};
  };
  switch (type) {
    case type_ns:
    case type_cname:
    case type_ptr:
    case type_dname:
      return name_at(0);
    case type_mx:
      return name_at(2);
    case type_srv:
      return name_at(6);
    case type_soa: {
      const size_t m = name_length(rdata, 0);
      const size_t n = m ? name_length(rdata, m) : 0;
      return n ? std::pair{size_t{0}, m + n} : std::pair<size_t, size_t>{0, 0};
    }
    default:
      return {0, 0};
  }
}

signed_view sign_transfer_view(const routing_snapshot& s, uint32_t zone, std::vector<transfer_record> dynamic,
                               uint32_t serial, uint32_t now_s) {
  const routing_plan& plan = *s.plan;
  const zone_plan& z = plan.zones[zone];
  signed_view out;
  if (!z.keys) {
    out.error = "the zone has no dnssec:";
    return out;
  }
  const dnssec::zone_keys& keys = *z.keys;
  one_ttl_per_rrset(dynamic);

  // Every RRset the secondary gets: the SOA (with the serial this view is
  // served under), the plain records, the dynamic names, the DNSKEY set.
  std::vector<transfer_record> all = plain_records(s, zone);
  transfer_record soa = transfer_soa(plan, zone);
  put32(soa.rdata, soa.rdata.size() - 20, serial);
  all.push_back(std::move(soa));
  all.insert(all.end(), dynamic.begin(), dynamic.end());
  std::vector<transfer_record> made = std::move(dynamic);
  for (std::span<const uint8_t> k : keys.dnskey_set) {
    transfer_record dnskey{keys.apex, type_dnskey, keys.dnskey_ttl, std::vector<uint8_t>(k.begin(), k.end())};
    all.push_back(dnskey);
    made.push_back(std::move(dnskey));
  }
  // Canonical order (RFC 4034 6.1) by owner: the NSEC chain's order.
  std::sort(all.begin(), all.end(), [](const transfer_record& a, const transfer_record& b) {
    if (const int c = dnssec::canonical_compare(a.owner, b.owner); c != 0)
      return c < 0;
    return std::tie(a.type, a.rdata) < std::tie(b.type, b.rdata);
  });
  all.erase(std::unique(all.begin(), all.end(),
                        [](const transfer_record& a, const transfer_record& b) {
                          return a.owner == b.owner && a.type == b.type && a.rdata == b.rdata;
                        }),
            all.end());
  if (all.empty() || all.front().owner != keys.apex) {
    out.error = "a record lies outside the zone";
    return out;
  }
  // Every name the config holds records at has its NSEC, even when the
  // view transfers nothing there (`omit`, a disabled profile, no answer
  // for a client with no location): the chain then says "this name, no
  // such type", never "no such name", so a resolver's aggressive NSEC
  // cache (RFC 8198) never denies a name gtmesh answers.
  auto canonical_less = [](const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    return dnssec::canonical_compare(a, b) < 0;
  };
  std::vector<std::vector<uint8_t>> owners;
  for (const transfer_record& r : all)
    if (owners.empty() || owners.back() != r.owner)
      owners.push_back(r.owner);
  for (std::vector<uint8_t>& owner : configured_owners(plan, zone))
    owners.push_back(std::move(owner));
  std::sort(owners.begin(), owners.end(), canonical_less);
  owners.erase(std::unique(owners.begin(), owners.end()), owners.end());

  dnssec::rrset_signer signer(4);
  auto add_rrsig = [&](std::span<const uint8_t> owner, uint16_t type) {
    const dnssec::signature* sig = signer.finish(now_s);
    if (!sig) {
      out.error = wire_to_text(owner) + " type " + std::to_string(type) +
                  " could not be signed (more than 64 records in one RRset, or the key failed)";
      return false;
    }
    std::vector<uint8_t> rdata(18);
    dnssec::write_rrsig_header(*sig, rdata.data());
    rdata.insert(rdata.end(), keys.apex.begin(), keys.apex.end());
    rdata.insert(rdata.end(), sig->bytes.begin(), sig->bytes.end());
    made.push_back(transfer_record{std::vector<uint8_t>(owner.begin(), owner.end()), type_rrsig, sig->original_ttl,
                                   std::move(rdata)});
    return true;
  };
  size_t name_end = 0;
  for (size_t o = 0; o < owners.size(); ++o) {
    const std::vector<uint8_t>& owner = owners[o];
    const size_t name = name_end;
    while (name_end < all.size() && all[name_end].owner == owner)
      ++name_end;
    std::set<uint16_t> types{type_rrsig, type_nsec};
    for (size_t set = name; set < name_end;) {
      const uint16_t type = all[set].type;
      const uint32_t ttl = all[set].ttl;
      types.insert(type);
      signer.begin(keys, owner, type, ttl);
      for (; set < name_end && all[set].type == type; ++set) {
        if (all[set].ttl != ttl) {
          out.error = wire_to_text(owner) + " type " + std::to_string(type) + " has records of different TTLs";
          out.records.clear();
          return out;
        }
        const auto [from, to] = rdata_names(type, all[set].rdata);
        signer.add_rdata(all[set].rdata, from, to);
      }
      if (!add_rrsig(owner, type))
        return signed_view{{}, out.error};
    }
    // The NSEC: the next name in canonical order, the apex after the last.
    const std::vector<uint8_t>& next = o + 1 < owners.size() ? owners[o + 1] : keys.apex;
    std::vector<uint8_t> nsec(next.begin(), next.end());
    append_type_bitmap(types, nsec);
    signer.begin(keys, owner, type_nsec, z.negative_ttl);
    signer.add_rdata(nsec); // the next name is not lowercased (RFC 6840 5.1); ours are
    if (!add_rrsig(owner, type_nsec))
      return signed_view{{}, out.error};
    made.push_back(transfer_record{owner, type_nsec, z.negative_ttl, std::move(nsec)});
  }
  if (name_end != all.size()) {
    out.error = "the zone's records are not in canonical order";
    return signed_view{{}, out.error};
  }
  std::sort(made.begin(), made.end());
  made.erase(std::unique(made.begin(), made.end()), made.end());
  out.records = std::move(made);
  return out;
}

std::optional<uint32_t> view_expires_at(const routing_plan& plan, uint32_t zone, const packed_records& view) {
  const std::optional<uint32_t> at = view_signed_at(plan, zone, view);
  if (!at)
    return std::nullopt;
  return *at + static_cast<uint32_t>(plan.zones[zone].keys->validity_ms / 1000);
}

bool signed_view_expiring(const routing_plan& plan, uint32_t zone, uint32_t now_s) {
  const zone_plan& z = plan.zones[zone];
  if (!z.signs_transfer || !z.committed_view || !z.keys)
    return false;
  const std::optional<uint32_t> expires = view_expires_at(plan, zone, *z.committed_view);
  return !expires || static_cast<int32_t>(*expires - now_s) < static_cast<int32_t>(z.keys->refresh_ms / 2000);
}

std::optional<uint32_t> view_signed_at(const routing_plan& plan, uint32_t zone, const packed_records& view) {
  const zone_plan& z = plan.zones[zone];
  if (!z.keys)
    return std::nullopt;
  for (size_t i = 0; i < view.size(); ++i) {
    const packed_records::view r = view.at(i);
    if (r.type != type_rrsig || r.rdata.size() < 18)
      continue;
    const uint16_t tag = static_cast<uint16_t>(r.rdata[16] << 8 | r.rdata[17]);
    if (tag != z.keys->signing.tag || r.rdata[2] != z.keys->signing.algorithm)
      return std::nullopt;
    return get32(r.rdata, 8) - static_cast<uint32_t>(z.keys->validity_ms / 1000);
  }
  return std::nullopt;
}

bool signed_view_current(const routing_plan& plan, uint32_t zone, const packed_records& view,
                         std::vector<transfer_record> dynamic, uint32_t now_s) {
  const std::optional<uint32_t> signed_at = view_signed_at(plan, zone, view);
  if (!signed_at)
    return false;
  const auto refresh_s = static_cast<uint32_t>(plan.zones[zone].keys->refresh_ms / 1000);
  const auto skew_s = static_cast<uint32_t>(plan.zones[zone].keys->inception_offset_ms / 1000);
  // RFC 1982-style: a signing time a little ahead of now (another leader's
  // clock) is fresh; one further ahead than the inception offset made
  // signatures that do not validate yet: stale.
  const auto age = static_cast<int32_t>(now_s - *signed_at);
  if (age >= static_cast<int32_t>(refresh_s) || age < -static_cast<int32_t>(skew_s))
    return false;
  one_ttl_per_rrset(dynamic);
  size_t d = 0;
  for (size_t i = 0; i < view.size(); ++i) {
    const packed_records::view r = view.at(i);
    if (r.type == type_rrsig || r.type == type_nsec || r.type == type_dnskey)
      continue;
    if (d == dynamic.size() || compare(r, dynamic[d]) != 0)
      return false;
    ++d;
  }
  return d == dynamic.size();
}

} // namespace gtmesh::dns
