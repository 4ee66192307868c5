#!/usr/bin/env bash
# Builds the DNS query fuzzer with clang (libFuzzer + ASan + UBSan) and runs it
# for a bounded time over the committed seed corpus.
#
#   tests/fuzz/run_dns_fuzz.sh [--build-dir DIR] [--time SECONDS] [--jobs N] [--sources FILE]
#                              [-- LIBFUZZER ARGS...]
#
# The main build uses g++; libFuzzer needs clang, so this script compiles the
# sources the target needs directly, with ccache when installed (objects are
# cached across runs). CTest passes --sources: the source files of the CMake
# targets gtmesh_base, gtmesh_config, gtmesh_routing and gtmesh_dns, one per
# line (tests/fuzz/CMakeLists.txt writes it), so the list follows the build;
# without it the script globs the pure core directories. New inputs the fuzzer finds go to DIR/corpus (never
# into the repository); a crash leaves DIR/crash-* and fails the script.
# The last line printed is "dns_query_fuzz: N executions in T s".
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=${FUZZ_BUILD_DIR:-$root/build/fuzz}
seconds=60
jobs=${FUZZ_JOBS:-2}
extra=()
sources_file=
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    --time) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --sources) sources_file=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: $0 [--build-dir DIR] [--time SECONDS] [--jobs N] [--sources FILE] [-- LIBFUZZER ARGS...]" >&2; exit 2 ;;
  esac
done

cxx=$(command -v clang++-14 || command -v clang++ || true)
[ -n "$cxx" ] || { echo "run_dns_fuzz: clang++ not found (Debian: clang, libclang-rt-14-dev)" >&2; exit 2; }
launcher=$(command -v ccache || true)
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -I"$root" -fsanitize=address,undefined -fno-sanitize-recover=undefined
       -DGTMESH_FUZZING)

mkdir -p "$build_dir/obj" "$build_dir/corpus"
if [ -n "$sources_file" ]; then
  # Absolute paths from CMake, made relative to the repository.
  mapfile -t sources < <(sed -e '/^$/d' -e "s#^$root/##" "$sources_file" | sort -u)
else
  mapfile -t sources < <(cd "$root" && ls core/net/*.cpp core/metrics/*.cpp core/geo/*.cpp core/text/*.cpp \
    core/config/*.cpp core/routing/*.cpp core/routing/*/*.cpp core/dns/wire/*.cpp core/dns/lookup/*.cpp | sort)
fi

# Compile what changed (make-style on mtimes; ccache makes a rebuild cheap,
# and compiling from one fixed directory lets it hit across build dirs).
cd "$root"
compile() { # source
  local src=$1 obj="$build_dir/obj/${1//\//_}.o"
  if [ ! -f "$obj" ] || [ "$root/$src" -nt "$obj" ] || [ -n "$(find "$root/core" -name '*.hpp' -newer "$obj" -print -quit)" ]; then
    $launcher "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$root/$src" -o "$obj"
  fi
}
export -f compile
export root build_dir cxx launcher
export flags_string="${flags[*]}"
printf '%s\n' "${sources[@]}" | xargs -P "$jobs" -I{} bash -c 'flags=($flags_string); compile "$@"' _ {}

objs=()
for s in "${sources[@]}"; do objs+=("$build_dir/obj/${s//\//_}.o"); done
$launcher "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$here/dns_query_fuzz.cpp" -o "$build_dir/obj/dns_query_fuzz.o"
"$cxx" "${flags[@]}" -fsanitize=fuzzer "$build_dir/obj/dns_query_fuzz.o" "${objs[@]}" -lyaml-cpp -lmaxminddb \
  -o "$build_dir/dns_query_fuzz"

cd "$build_dir"
log="$build_dir/fuzz.log"
set +e
./dns_query_fuzz -max_total_time="$seconds" -print_final_stats=1 -max_len=4096 -timeout=10 \
  -artifact_prefix="$build_dir/" "${extra[@]}" "$build_dir/corpus" "$here/corpus/dns_query" 2>&1 | tee "$log" | \
  grep -E '^#[0-9]+ +(INITED|DONE|pulse)|ERROR|SUMMARY|stat::|crash-|==[0-9]+==' || true
status=${PIPESTATUS[0]}
set -e
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
echo "dns_query_fuzz: ${runs:-?} executions in ${seconds} s (corpus $(ls "$build_dir/corpus" | wc -l) entries)"
exit "$status"
