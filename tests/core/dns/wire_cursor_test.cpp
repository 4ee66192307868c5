// core/dns/wire/wire_cursor: bounds checks and the latched first error.

#include "core/dns/wire/wire_cursor.hpp"

#include <gtest/gtest.h>

#include <array>

namespace gtmesh::dns {
namespace {

TEST(wire_cursor, reads_big_endian_values_in_order) {
  const std::array<uint8_t, 7> data{0x12, 0x34, 0xde, 0xad, 0xbe, 0xef, 0x7f};
  wire_cursor in{std::span<const uint8_t>(data)};
  EXPECT_EQ(in.read_u16(), 0x1234);
  EXPECT_EQ(in.read_u32(), 0xdeadbeefu);
  EXPECT_EQ(in.read_u8(), 0x7f);
  EXPECT_TRUE(in.ok());
  EXPECT_EQ(in.available(), 0u);
}

TEST(wire_cursor, a_read_past_the_end_latches_and_later_reads_return_zero) {
  const std::array<uint8_t, 3> data{1, 2, 3};
  wire_cursor in{std::span<const uint8_t>(data)};
  EXPECT_EQ(in.read_u16(), 0x0102);
  EXPECT_EQ(in.read_u16(), 0) << "only one byte left";
  EXPECT_EQ(in.error(), wire_error::out_of_bounds);
  EXPECT_EQ(in.position(), 2u) << "a failed access does not move";
  EXPECT_EQ(in.read_u8(), 0) << "latched: even a fitting read fails now";
  EXPECT_TRUE(in.read_span(1).empty());
}

TEST(wire_cursor, writes_stop_at_the_limit_and_latch_no_space) {
  std::array<uint8_t, 8> buf{};
  wire_cursor out{std::span<uint8_t>(buf)};
  out.set_limit(5);
  out.write_u32(0x01020304);
  out.write_u16(0x0506);
  EXPECT_EQ(out.error(), wire_error::no_space);
  EXPECT_EQ(out.position(), 4u);
  EXPECT_EQ(buf[4], 0) << "nothing written past the limit";
  out.clear_error();
  out.set_limit(8);
  out.write_u16(0x0506);
  EXPECT_TRUE(out.ok());
  out.patch_u16(0, 0xaabb);
  EXPECT_EQ(buf[0], 0xaa);
  EXPECT_EQ(buf[1], 0xbb);
  out.patch_u16(5, 1);
  EXPECT_EQ(out.error(), wire_error::out_of_bounds) << "patching beyond what was written";
}

TEST(wire_cursor, a_read_only_cursor_refuses_writes) {
  const std::array<uint8_t, 4> data{};
  wire_cursor in{std::span<const uint8_t>(data)};
  in.write_u8(1);
  EXPECT_EQ(in.error(), wire_error::read_only);
  EXPECT_EQ(in.mutable_data(), nullptr);
}

TEST(wire_cursor, a_limit_below_the_position_leaves_no_room) {
  std::array<uint8_t, 8> buf{};
  wire_cursor out{std::span<uint8_t>(buf)};
  out.skip(6);
  out.set_limit(2);
  EXPECT_EQ(out.available(), 0u);
  out.write_u8(1);
  EXPECT_EQ(out.error(), wire_error::no_space);
}

TEST(wire_cursor, seek_and_skip_are_bounds_checked) {
  std::array<uint8_t, 4> buf{};
  wire_cursor c{std::span<uint8_t>(buf)};
  c.seek(4);
  EXPECT_TRUE(c.ok());
  c.skip(1);
  EXPECT_FALSE(c.ok());
  wire_cursor d{std::span<uint8_t>(buf)};
  d.seek(5);
  EXPECT_FALSE(d.ok());
  wire_cursor empty;
  EXPECT_EQ(empty.read_u8(), 0);
  EXPECT_FALSE(empty.ok());
}

} // namespace
} // namespace gtmesh::dns
