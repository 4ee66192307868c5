// libFuzzer target: bytes as a route53 export through gtmeshctl import
// (tests/fuzz/import_fuzz.hpp says what is checked).
// Built and run by run_fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).

#include "tests/fuzz/import_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gtmesh::fuzz::import_one("route53", data, size);
  return 0;
}
