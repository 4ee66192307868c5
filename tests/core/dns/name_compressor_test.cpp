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
