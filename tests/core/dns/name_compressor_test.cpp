// core/dns/wire/name_compressor: RFC 1035 4.1.4 pointers on output.

#include "core/dns/wire/name_compressor.hpp"
#include "core/dns/wire/name.hpp"
#include "tests/core/dns/dns_test_messages.hpp"

#include <gtest/gtest.h>

#include <array>

namespace gtmesh::dns {
namespace {

using test::bytes;

bytes lower_name(const std::string& n) {
  bytes b = test::wire_name(n);
  for (auto& c : b)
    c = lower(c);
  return b;
}

TEST(name_compressor, points_at_the_longest_known_suffix) {
  std::array<uint8_t, 128> buf{};
  wire_cursor out{std::span<uint8_t>(buf)};
  name_compressor names;
  out.skip(12);
  names.write(out, lower_name("www.example.test"));
  EXPECT_EQ(out.position(), 12u + 18);
  size_t second = out.position();
  names.write(out, lower_name("mail.example.test"));
  EXPECT_EQ(out.position() - second, 5u + 2) << "\"mail\" + pointer";
  EXPECT_EQ(buf[second + 5], 0xc0);
  EXPECT_EQ(buf[second + 6], 12 + 4) << "to example.test inside www.example.test";
  size_t third = out.position();
  names.write(out, lower_name("a.mail.example.test"));
  EXPECT_EQ(out.position() - third, 2u + 2);
  EXPECT_EQ(buf[third + 3], second) << "to the name written second";
  size_t fourth = out.position();
  names.write(out, lower_name("www.example.test"));
  EXPECT_EQ(out.position() - fourth, 2u) << "a whole name again is one pointer";
  size_t fifth = out.position();
  names.write(out, lower_name("other.net"));
  EXPECT_EQ(out.position() - fifth, 11u) << "only the root in common: written in full";
  size_t sixth = out.position();
  names.write(out, lower_name("."));
  EXPECT_EQ(out.position() - sixth, 1u);
}

TEST(name_compressor, matches_remembered_names_case_insensitively) {
  bytes message(12, 0);
  bytes question = test::wire_name("WWW.Example.TEST");
  message.insert(message.end(), question.begin(), question.end());
  message.resize(128);
  wire_cursor out{std::span<uint8_t>(message)};
  out.seek(12 + question.size());
  name_compressor names;
  names.remember(out, 12);
  EXPECT_EQ(names.size(), 3);
  size_t at = out.position();
  names.write(out, lower_name("ns1.example.test"));
  EXPECT_EQ(out.position() - at, 4u + 2);
}

TEST(name_compressor, never_follows_forward_or_looping_pointers) {
  bytes message(40, 0);
  // A name at 12 that is a pointer to itself: never a valid match target.
  message[12] = 0xc0;
  message[13] = 12;
  wire_cursor out{std::span<uint8_t>(message)};
  out.seek(14);
  name_compressor names;
  names.remember(out, 12); // remembers nothing: it starts with a pointer
  EXPECT_EQ(names.size(), 0);
  names.write(out, lower_name("a.b"));
  EXPECT_EQ(out.position(), 14u + 5);
}

TEST(name_compressor, stops_remembering_when_full_but_keeps_writing) {
  std::array<uint8_t, 4096> buf{};
  wire_cursor out{std::span<uint8_t>(buf)};
  name_compressor names;
  for (int i = 0; i < 100; ++i)
    names.write(out, lower_name("n" + std::to_string(i) + ".x" + std::to_string(i) + ".test"));
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(names.size(), name_compressor::max_entries);
}

TEST(name_compressor, a_name_that_does_not_fit_latches_no_space) {
  std::array<uint8_t, 10> buf{};
  wire_cursor out{std::span<uint8_t>(buf)};
  name_compressor names;
  names.write(out, lower_name("www.example.test"));
  EXPECT_EQ(out.error(), wire_error::no_space);
  EXPECT_EQ(names.size(), 0);
}

} // namespace
} // namespace gtmesh::dns

// core/dns/wire/name: presentation-form names, with RFC 1035 5.1 escapes.
namespace gtmesh::dns {
namespace {

TEST(name_text, escapes_put_dots_and_bytes_inside_a_label_and_bad_text_is_refused) {
  auto w = text_to_wire("dns\\.admin.example.org.");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->size(), 1u + 9 + 1 + 7 + 1 + 3 + 1);
  EXPECT_EQ(w->at(0), 9u);
  EXPECT_EQ(w->at(4), '.');
  EXPECT_EQ(wire_to_text(*w), "dns\\.admin.example.org.");
  auto d = text_to_wire("a\\065b.x");
  ASSERT_TRUE(d);
  EXPECT_EQ(wire_to_text(*d), "aab.x."); // lower-cased like every name
  EXPECT_EQ(text_to_wire("www.example.com"), text_to_wire("WWW.example.com."));
  EXPECT_EQ(text_to_wire("."), std::vector<uint8_t>{0});
  for (const char* bad : {"", "a..b", ".a", "a\\", "a\\25", "a\\256", "a b", "a\\0x1"})
    EXPECT_FALSE(text_to_wire(bad)) << bad;
  EXPECT_FALSE(text_to_wire(std::string(64, 'a')));
  EXPECT_TRUE(text_to_wire(std::string(63, 'a')));
}

} // namespace
} // namespace gtmesh::dns
