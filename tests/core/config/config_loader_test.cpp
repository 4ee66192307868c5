#include "core/config/config_loader.hpp"
#include "core/routing/all_methods.hpp"

#include <gtest/gtest.h>

namespace gtmesh {
namespace {

TEST(config_loader, full_example_loads) {
  std::string dir = std::getenv("GTMESH_SOURCE_DIR") ? std::getenv("GTMESH_SOURCE_DIR") : ".";
  auto r = load_config_file(dir + "/configs/full.yaml", routing_methods());
  EXPECT_TRUE(r.ok()) << r.report();
}

} // namespace
} // namespace gtmesh
