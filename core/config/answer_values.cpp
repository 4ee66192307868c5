#include "core/config/answer_values.hpp"

namespace gtmesh {

std::string answer_value::text() const {
  switch (type) {
    case dns::rr_type::a:
    case dns::rr_type::aaaa:
      return address.to_string();
    case dns::rr_type::cname:
    case dns::rr_type::ns:
    case dns::rr_type::ptr:
      return target;
    case dns::rr_type::mx:
      return std::to_string(preference) + " " + target;
    case dns::rr_type::srv:
      return std::to_string(priority) + " " + std::to_string(srv_weight) + " " + std::to_string(port) + " " + target;
    case dns::rr_type::txt: {
      std::string out;
      for (const auto& t : txt)
        out += (out.empty() ? "\"" : " \"") + t + "\"";
      return out;
    }
    default:
      return "?";
  }
}

ip_address answer_value_pool::unpack_address(const packed& p) noexcept {
  ip_key k = 0;
  for (uint32_t word : p.address)
    k = (k << 32) | word;
  return ip_address::from_key(k, p.v4);
}

answer_value answer_value_pool::operator[](uint32_t i) const {
  const packed& p = packed_[i];
  answer_value v;
  v.type = p.type;
  v.address = unpack_address(p);
  if (p.text != no_text) {
    v.target = texts_[p.text].target;
    v.txt = texts_[p.text].txt;
  }
  v.preference = p.preference;
  v.priority = p.priority;
  v.srv_weight = p.srv_weight;
  v.port = p.port;
  return v;
}

bool answer_value_pool::equals(uint32_t i, const answer_value& v) const noexcept {
  const packed& p = packed_[i];
  if (p.type != v.type || p.v4 != v.address.v4() || unpack_address(p).key() != v.address.key() ||
      p.preference != v.preference || p.priority != v.priority || p.srv_weight != v.srv_weight || p.port != v.port)
    return false;
  if (p.text == no_text)
    return v.target.empty() && v.txt.empty();
  return texts_[p.text].target == v.target && texts_[p.text].txt == v.txt;
}

void answer_value_pool::push_back(answer_value&& v) {
  packed p;
  ip_key k = v.address.key();
  for (int w = 3; w >= 0; --w, k >>= 32)
    p.address[w] = static_cast<uint32_t>(k);
  p.v4 = v.address.v4();
  p.type = v.type;
  p.preference = v.preference;
  p.priority = v.priority;
  p.srv_weight = v.srv_weight;
  p.port = v.port;
  if (!v.target.empty() || !v.txt.empty()) {
    p.text = static_cast<uint32_t>(texts_.size());
    texts_.push_back({std::move(v.target), std::move(v.txt)});
  }
  packed_.push_back(p);
}

void answer_value_pool::shrink_to_fit() {
  packed_.shrink_to_fit();
  texts_.shrink_to_fit();
}

void answer_value_pool::clear() noexcept {
  std::vector<packed>().swap(packed_);
  std::vector<host_and_strings>().swap(texts_);
}

} // namespace gtmesh
