# Every dependency comes from a Debian 12 package (tools/setup.sh installs them).
# See ../shared/docs/deps-notes.md for why each block looks the way it does.
find_package(Threads REQUIRED)
find_package(OpenSSL REQUIRED)

# CAF 0.17.6 ships no CMake config and no pkg-config file: import it by hand.
find_path(CAF_INCLUDE_DIR caf/all.hpp REQUIRED)
find_library(CAF_CORE_LIBRARY caf_core REQUIRED)
find_library(CAF_IO_LIBRARY caf_io REQUIRED)
find_library(CAF_OPENSSL_LIBRARY caf_openssl REQUIRED)
add_library(CAF::core UNKNOWN IMPORTED)
set_target_properties(CAF::core PROPERTIES IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}" INTERFACE_LINK_LIBRARIES Threads::Threads)
add_library(CAF::io UNKNOWN IMPORTED)
set_target_properties(CAF::io PROPERTIES IMPORTED_LOCATION "${CAF_IO_LIBRARY}"
  INTERFACE_LINK_LIBRARIES CAF::core)
add_library(CAF::openssl UNKNOWN IMPORTED)
set_target_properties(CAF::openssl PROPERTIES IMPORTED_LOCATION "${CAF_OPENSSL_LIBRARY}"
  INTERFACE_LINK_LIBRARIES "CAF::io;OpenSSL::SSL;OpenSSL::Crypto")

# Asio is header-only (standalone, not Boost.Asio).
find_path(ASIO_INCLUDE_DIR asio.hpp REQUIRED)
add_library(gtmesh_asio INTERFACE)
target_include_directories(gtmesh_asio SYSTEM INTERFACE "${ASIO_INCLUDE_DIR}")
target_compile_definitions(gtmesh_asio INTERFACE ASIO_STANDALONE ASIO_NO_DEPRECATED)
target_link_libraries(gtmesh_asio INTERFACE Threads::Threads)

# msgpack-c: the package is called msgpack, the target msgpackc-cxx.
find_package(msgpack REQUIRED)
add_library(gtmesh_msgpack INTERFACE)
target_link_libraries(gtmesh_msgpack INTERFACE msgpackc-cxx)
target_compile_definitions(gtmesh_msgpack INTERFACE MSGPACK_NO_BOOST)

find_package(RocksDB REQUIRED)
# yaml-cpp: only tools/bench/yaml_parse_bench (the YAML libraries compared, issue 11).
find_package(yaml-cpp REQUIRED)
# The config as JSON (the per-object API, importers, the external-dns webhook).
find_package(nlohmann_json 3 REQUIRED)
# simdjson (libsimdjson-dev): real users' beacons (core/rum/beacon_parse.hpp).
find_package(simdjson REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(MAXMINDDB REQUIRED IMPORTED_TARGET libmaxminddb)
# libyaml: the config reader's fallback for the YAML its fast reader leaves (core/config/yaml_tree.hpp).
pkg_check_modules(LIBYAML REQUIRED IMPORTED_TARGET yaml-0.1)
# libzstd: config texts travel compressed between nodes and in the log (core/mesh/config_compression.hpp).
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
# libraft-dev (C Raft, static library): the deciders' replicated log.
pkg_check_modules(RAFT REQUIRED IMPORTED_TARGET raft)
# cpp-httplib (header-only; the package adds its compiled part): probe
# backends, the demo, every node's --http listener.
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
# prometheus-cpp-dev: metric families and the text exposition format only
# (the --http listener is httplib, so its civetweb "pull" part is unused).
find_package(prometheus-cpp CONFIG REQUIRED COMPONENTS core)

if(GTMESH_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
if(GTMESH_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
