#pragma once

// One answer's value (an address, a host name, TXT strings...) and the pool
// that keeps a config's distinct values compactly: 32 bytes a value, its
// host name or TXT strings out of line only when it has them. A config of
// 100,000 records holds about 150,000 distinct values; 112-byte structs held
// them at 16 MB, the pool at 4.6 MB (docs/benchmarks.md, "Scale").

#include "core/dns/wire/rr_type.hpp"
#include "core/net/ip_address.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gtmesh {

/// One answer as the operator wrote it, typed by the record type.
struct answer_value {
  dns::rr_type type = dns::rr_type::a;
  ip_address address;          ///< A, AAAA
  std::string target;          ///< CNAME, MX exchange, SRV target: absolute, lowercase
  std::vector<std::string> txt; ///< TXT character-strings
  uint16_t preference = 0;     ///< MX
  uint16_t priority = 0;       ///< SRV
  uint16_t srv_weight = 0;     ///< SRV
  uint16_t port = 0;           ///< SRV
  std::string text() const;    ///< presentation form, for traces
  friend bool operator==(const answer_value&, const answer_value&) = default;
};

/// A config's distinct answer values, by index (config::answer_values).
/// Reading one gives an answer_value by value: made when a plan is compiled
/// and for traces, never on the query path.
class answer_value_pool {
public:
  size_t size() const noexcept { return packed_.size(); }
  bool empty() const noexcept { return packed_.empty(); }
  answer_value operator[](uint32_t i) const;
  ip_address address(uint32_t i) const noexcept { return unpack_address(packed_[i]); }
  /// Whether entry `i` holds exactly `v`.
  bool equals(uint32_t i, const answer_value& v) const noexcept;
  /// Stores `v` as entry size() (no check for an equal one: the loader
  /// interns).
  void push_back(answer_value&& v);
  void reserve(size_t n) { packed_.reserve(n); }
  void shrink_to_fit();
  void clear() noexcept;

private:
  static constexpr uint32_t no_text = UINT32_MAX;
  struct packed {
    uint32_t address[4] = {}; ///< ip_address::key(), most significant word first
    uint32_t text = no_text; ///< into texts_: target and TXT strings, when it has any
    dns::rr_type type = dns::rr_type::a;
    uint16_t preference = 0;
    uint16_t priority = 0;
    uint16_t srv_weight = 0;
    uint16_t port = 0;
    bool v4 = false;
  };
  struct host_and_strings {
    std::string target;
    std::vector<std::string> txt;
  };
  static ip_address unpack_address(const packed& p) noexcept;
  std::vector<packed> packed_;
  std::vector<host_and_strings> texts_;
};

} // namespace gtmesh
