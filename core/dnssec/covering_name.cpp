#include "core/dnssec/covering_name.hpp"

#include "core/dns/wire/name.hpp"

#include <algorithm>

namespace gtmesh::dnssec {

int canonical_compare(std::span<const uint8_t> a, std::span<const uint8_t> b) noexcept {
  // Label starts, root first.
  std::array<uint8_t, 128> la, lb;
  size_t na = 0, nb = 0;
  for (size_t i = 0; i < a.size() && a[i] != 0 && na < la.size(); i += 1 + a[i])
    la[na++] = static_cast<uint8_t>(i);
  for (size_t i = 0; i < b.size() && b[i] != 0 && nb < lb.size(); i += 1 + b[i])
    lb[nb++] = static_cast<uint8_t>(i);
  for (size_t k = 0; k < na && k < nb; ++k) {
    const uint8_t* x = a.data() + la[na - 1 - k];
    const uint8_t* y = b.data() + lb[nb - 1 - k];
    const size_t n = std::min(x[0], y[0]);
    for (size_t i = 1; i <= n; ++i)
      if (dns::lower(x[i]) != dns::lower(y[i]))
        return dns::lower(x[i]) < dns::lower(y[i]) ? -1 : 1;
    if (x[0] != y[0])
      return x[0] < y[0] ? -1 : 1;
  }
  return na == nb ? 0 : na < nb ? -1 : 1;
}

size_t covering_predecessor(std::span<const uint8_t> name, std::array<uint8_t, 255>& out) noexcept {
  if (name.empty() || name[0] == 0 || name.size() > out.size() || size_t{1} + name[0] >= name.size())
    return 0;
  const size_t n = name[0];
  const uint8_t last = dns::lower(name[n]);
  if (last == 0)
    return 0;
  uint8_t decreased = static_cast<uint8_t>(last - 1);
  if (decreased >= 'A' && decreased <= 'Z')
    decreased = '@';
  const std::span<const uint8_t> parent = name.subspan(1 + n);
  const size_t label = std::min<size_t>(63, out.size() - 1 - parent.size());
  if (label == n) {
    // No room to pad the label: the decreased name itself could be real,
    // so the owner is its last child instead, a label of \255 octets.
    if (name.size() + 2 > out.size())
      return 0;
    const size_t child = std::min<size_t>(63, out.size() - 1 - name.size());
    out[0] = static_cast<uint8_t>(child);
    std::fill(out.begin() + 1, out.begin() + 1 + static_cast<std::ptrdiff_t>(child), uint8_t{0xff});
    for (size_t i = 0; i < name.size(); ++i)
      out[1 + child + i] = dns::lower(name[i]);
    out[1 + child + n] = decreased;
    return 1 + child + name.size();
  }
  out[0] = static_cast<uint8_t>(label);
  for (size_t i = 1; i < n; ++i)
    out[i] = dns::lower(name[i]);
  out[n] = decreased;
  std::fill(out.begin() + static_cast<std::ptrdiff_t>(n) + 1, out.begin() + static_cast<std::ptrdiff_t>(label) + 1,
            uint8_t{0xff});
  for (size_t i = 0; i < parent.size(); ++i)
    out[1 + label + i] = dns::lower(parent[i]);
  return 1 + label + parent.size();
}

size_t covering_successor(std::span<const uint8_t> name, std::array<uint8_t, 255>& out) noexcept {
  if (name.empty() || name[0] == 0 || name.size() > out.size() || size_t{1} + name[0] >= name.size())
    return 0;
  const size_t n = name[0];
  for (size_t i = 0; i < name.size(); ++i)
    out[i] = dns::lower(name[i]);
  if (n < 63 && name.size() < out.size()) {
    // <label>\000: longer by one octet.
    std::copy_backward(out.begin() + static_cast<std::ptrdiff_t>(n) + 1,
                       out.begin() + static_cast<std::ptrdiff_t>(name.size()),
                       out.begin() + static_cast<std::ptrdiff_t>(name.size()) + 1);
    out[0] = static_cast<uint8_t>(n + 1);
    out[n + 1] = 0;
    return name.size() + 1;
  }
  // No room: the label's last octet increased by one (past 'Z' for an
  // upper-case result, which canonical names never hold).
  if (out[n] == 0xff)
    return 0;
  uint8_t increased = static_cast<uint8_t>(out[n] + 1);
  if (increased >= 'A' && increased <= 'Z')
    increased = '[';
  out[n] = increased;
  return name.size();
}

} // namespace gtmesh::dnssec
