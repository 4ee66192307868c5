#pragma once

// Paths tests need, from the environment when set, else from the build that
// compiled the test (tests/CMakeLists.txt defines the defaults), so a test
// binary works the same under ctest and when run by hand.

#include <cstdlib>
#include <string>

namespace gtmesh::test {

inline std::string source_dir() {
  const char* e = std::getenv("GTMESH_SOURCE_DIR");
  return e ? e : GTMESH_TEST_SOURCE_DIR;
}

inline std::string binary_dir() {
  const char* e = std::getenv("GTMESH_BINARY_DIR");
  return e ? e : GTMESH_TEST_BINARY_DIR;
}

/// The committed test geo database (tools/geo/make_test_mmdb.pl).
inline std::string test_mmdb() {
  const char* e = std::getenv("TEST_MMDB");
  return e ? e : source_dir() + "/tests/data/test.mmdb";
}

/// The committed test ASN database (tools/geo/make_test_asn_mmdb.pl).
inline std::string test_asn_mmdb() { return source_dir() + "/tests/data/test-asn.mmdb"; }

/// The gtmesh binary under test.
inline std::string gtmesh_bin() {
  const char* e = std::getenv("GTMESH_BIN");
  return e ? e : binary_dir() + "/tools/gtmesh";
}

} // namespace gtmesh::test
