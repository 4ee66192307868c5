#!/usr/bin/env bash
# Builds libFuzzer targets with clang (libFuzzer + ASan + UBSan) and runs them
# for a bounded time over their committed seed corpus.
#
#   tests/fuzz/run_fuzz.sh [options] TARGET... | --all
#     --build-dir DIR   objects, binaries, found inputs, logs (default build/fuzz)
#     --manifest FILE   what the targets are made of (default DIR/manifest.txt)
#     --time SECONDS    run each target this long (default 60; 0 = no time bound,
#                       e.g. with -- -runs=10000000)
#     --jobs N          parallel compiles (default 2)
#     --opt LEVEL       optimisation of every object (default -O1; CTest's
#                       short runs build at -O0: a third less compile time,
#                       which matters more than executions in a 10 s run)
#     --build-only      build, do not run (cmake -DGTMESH_FUZZ=ON runs this)
#     --run-only        run what is built (CTest: after the fuzz.build fixture)
#     --make-corpus     build and run tests/fuzz/make_TARGET_corpus.cpp, which
#                       writes the seeds of TARGET into tests/fuzz/corpus/TARGET
#     -- ARGS...        extra libFuzzer arguments for every run
#
# What each target is made of comes from DIR/manifest.txt, which CMake writes
# at configure time (tests/fuzz/CMakeLists.txt, gtmesh_fuzz_target): one line
# per source, "target<TAB>library<TAB>source<TAB>compile flags", plus
# "target<TAB>-link<TAB>-lfoo" and "target<TAB>-option<TAB>libFuzzer flag"
# lines. So the script compiles exactly the sources of the CMake libraries a
# target names, with their definitions, and follows the build as it changes.
#
# The main build uses g++; libFuzzer needs clang, so this script compiles with
# clang++ directly, through ccache when installed. Each source is compiled once
# for all targets, into one static archive per CMake library (the linker then
# takes only what a target uses), and recompiled only when it, one of the
# headers it includes (clang -MMD), or its flags changed.
#
# A run reads tests/fuzz/corpus/TARGET (never written) and DIR/corpus/TARGET
# (new inputs go there), with tests/fuzz/TARGET.dict when present. A crash,
# leak, UBSan report, timeout (-timeout, 10 s) or memory blow-up
# (-rss_limit_mb, 2048) leaves DIR/artifacts/TARGET/crash-* (or leak-, timeout-,
# oom-) and makes the script exit non-zero. The last line of each run is
#   TARGET_fuzz: N executions in T s (E exec/s), cov C ft F, corpus K entries
# with T the measured wall time of the run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=${FUZZ_BUILD_DIR:-$root/build/fuzz}
seconds=60
jobs=${FUZZ_JOBS:-2}
opt=-O1
mode=both
manifest=
make_corpus=0
targets=()
extra=()
usage() {
  echo "usage: $0 [--build-dir DIR] [--manifest FILE] [--time SECONDS] [--jobs N] [--opt LEVEL] [--build-only|--run-only] [--make-corpus]" \
       "TARGET...|--all [-- LIBFUZZER ARGS...]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    --manifest) manifest=$2; shift 2 ;;
    --time) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --opt) opt=$2; shift 2 ;;
    --build-only) mode=build; shift ;;
    --run-only) mode=run; shift ;;
    --make-corpus) make_corpus=1; mode=build; shift ;;
    --all) targets+=(--all); shift ;;
    --) shift; extra=("$@"); break ;;
    -*) usage ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || usage
build_dir=$(mkdir -p "$build_dir" && cd "$build_dir" && pwd)
manifest=${manifest:-$build_dir/manifest.txt}
[ -f "$manifest" ] || { echo "run_fuzz: no $manifest: configure with CMake first (tests/fuzz/CMakeLists.txt writes it)" >&2; exit 2; }
manifest=$(cd "$(dirname "$manifest")" && pwd)/$(basename "$manifest")

mapfile -t known < <(cut -f1 "$manifest" | sort -u)
if [ "${targets[0]}" = --all ]; then
  targets=("${known[@]}")
fi
for t in "${targets[@]}"; do
  grep -qx -- "$t" <<< "$(printf '%s\n' "${known[@]}")" ||
    { echo "run_fuzz: unknown target '$t' (known: ${known[*]})" >&2; exit 2; }
done

cxx=$(command -v clang++-14 || command -v clang++ || true)
[ -n "$cxx" ] || { echo "run_fuzz: clang++ not found (Debian: clang, libclang-rt-14-dev)" >&2; exit 2; }
ar=$(command -v llvm-ar-14 || command -v llvm-ar || command -v ar)
launcher=$(command -v ccache || true)
# -gline-tables-only: symbolized stack traces at a fraction of full -g's cost.
case $opt in -O0|-O1|-O2|-Og) ;; *) echo "run_fuzz: --opt takes -O0, -O1, -O2 or -Og" >&2; exit 2 ;; esac
common=(-std=c++20 "$opt" -gline-tables-only -fno-omit-frame-pointer -I"$root" -fsanitize=address,undefined
        -fno-sanitize-recover=undefined -DGTMESH_FUZZING -DGTMESH_SOURCE_DIR=\""$root"\")

# --- build --------------------------------------------------------------------

# obj_of SOURCE LIBRARY: where its object goes.
obj_of() { local rel=${1#"$root"/}; echo "$build_dir/obj/$2/${rel//\//_}.o"; }

# Compiles SOURCE into OBJ with FLAGS (one string) unless OBJ is up to date:
# same command as last time, and no prerequisite in its depfile is newer.
compile_one() { # source obj flags
  local src=$1 obj=$2 flags=$3
  local cmd="$cxx ${common[*]} $flags -fsanitize=fuzzer-no-link -c $src"
  if [ -f "$obj" ] && [ -f "$obj.d" ] && [ "$(cat "$obj.cmd" 2>/dev/null)" = "$cmd" ]; then
    local stale=0 dep
    for dep in $(sed -e 's/\\$//' -e 's/^[^:]*://' "$obj.d"); do
      if [ "$dep" -nt "$obj" ]; then stale=1; break; fi
    done
    [ $stale = 1 ] || return 0
  fi
  mkdir -p "$(dirname "$obj")"
  # shellcheck disable=SC2086 # flags is a list of words from CMake
  (cd "$root" && $launcher "$cxx" "${common[@]}" $flags -fsanitize=fuzzer-no-link -MMD -MF "$obj.d" -c "$src" \
     -o "$obj.tmp") || { echo "run_fuzz: compiling $src failed" >&2; return 1; }
  mv "$obj.tmp" "$obj"
  echo "$cmd" > "$obj.cmd"
}

build_targets() {
  # Unique (library, source, flags) of every requested target, then compile in parallel.
  local jobs_file=$build_dir/compile.jobs
  : > "$jobs_file"
  local t lib src flags
  for t in "${targets[@]}"; do
    while IFS=$'\t' read -r tt lib src flags; do
      [ "$tt" = "$t" ] || continue
      case $lib in -link|-option) continue ;; esac
      printf '%s\t%s\t%s\n' "$src" "$(obj_of "$src" "$lib")" "$flags" >> "$jobs_file"
    done < "$manifest"
    local harness=$here/${t}_fuzz.cpp
    local hflags
    hflags=$(awk -F'\t' -v t="$t" '$1 == t && $2 !~ /^-/ { print $4 }' "$manifest" | tr '\n' ' ')
    printf '%s\t%s\t%s\n' "$harness" "$build_dir/obj/harness/${t}_fuzz.o" "$hflags" >> "$jobs_file"
    if [ $make_corpus = 1 ] && [ -f "$here/make_${t}_corpus.cpp" ]; then
      printf '%s\t%s\t%s\n' "$here/make_${t}_corpus.cpp" "$build_dir/obj/harness/make_${t}_corpus.o" "$hflags" \
        >> "$jobs_file"
    fi
  done
  sort -u -o "$jobs_file" "$jobs_file"
  export -f compile_one
  export root cxx launcher
  export common_string="${common[*]}"
  # common is an array: rebuild it inside each worker from the exported string.
  tr '\n' '\0' < "$jobs_file" | xargs -0 -P "$jobs" -I{} bash -c '
    IFS=$'"'"'\t'"'"' read -r src obj flags <<< "$1"
    read -r -a common <<< "$common_string"
    compile_one "$src" "$obj" "$flags"' _ {}

  # One archive per library, rebuilt when one of its objects is newer.
  local libdir=$build_dir/obj
  for lib in $(awk -F'\t' '$2 !~ /^-/ { print $2 }' "$manifest" | sort -u); do
    local objs=("$libdir/$lib"/*.o)
    [ -e "${objs[0]}" ] || continue
    local archive=$build_dir/lib/lib$lib.a
    mkdir -p "$build_dir/lib"
    if [ ! -f "$archive" ] || [ -n "$(find "$libdir/$lib" -name '*.o' -newer "$archive" -print -quit)" ]; then
      rm -f "$archive"
      "$ar" rcs "$archive" "${objs[@]}"
    fi
  done

  for t in "${targets[@]}"; do
    local archives=() links=()
    for lib in $(awk -F'\t' -v t="$t" '$1 == t && $2 !~ /^-/ { print $2 }' "$manifest" | awk '!seen[$0]++'); do
      archives+=("$build_dir/lib/lib$lib.a")
    done
    mapfile -t links < <(awk -F'\t' -v t="$t" '$1 == t && $2 == "-link" { print $3 }' "$manifest")
    local bin=$build_dir/${t}_fuzz harness_obj=$build_dir/obj/harness/${t}_fuzz.o
    local newest
    newest=$(ls -t "$harness_obj" "${archives[@]}" "$bin" 2>/dev/null | head -1 || true)
    if [ ! -f "$bin" ] || [ "$newest" != "$bin" ]; then
      "$cxx" "${common[@]}" -fsanitize=fuzzer "$harness_obj" -Wl,--start-group "${archives[@]}" -Wl,--end-group \
        "${links[@]}" -o "$bin.tmp"
      mv "$bin.tmp" "$bin"
    fi
    if [ $make_corpus = 1 ] && [ -f "$here/make_${t}_corpus.cpp" ]; then
      # A plain program (no libFuzzer main) over the same objects.
      "$cxx" "${common[@]}" "$build_dir/obj/harness/make_${t}_corpus.o" -Wl,--start-group "${archives[@]}" \
        -Wl,--end-group "${links[@]}" -o "$build_dir/make_${t}_corpus"
      mkdir -p "$here/corpus/$t"
      "$build_dir/make_${t}_corpus" "$here/corpus/$t"
    fi
  done
}

# --- run ----------------------------------------------------------------------

run_target() { # target
  local t=$1 bin=$build_dir/${1}_fuzz
  [ -x "$bin" ] || { echo "run_fuzz: $bin is not built (run without --run-only)" >&2; return 2; }
  local corpus=$build_dir/corpus/$t artifacts=$build_dir/artifacts/$t log=$build_dir/$t.log
  mkdir -p "$corpus" "$artifacts"
  local args=(-print_final_stats=1 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$artifacts/")
  [ "$seconds" = 0 ] || args+=(-max_total_time="$seconds")
  [ -f "$here/$t.dict" ] && args+=(-dict="$here/$t.dict")
  mapfile -t -O ${#args[@]} args < <(awk -F'\t' -v t="$t" '$1 == t && $2 == "-option" { print $3 }' "$manifest")
  local seeds=()
  [ -d "$here/corpus/$t" ] && seeds+=("$here/corpus/$t")
  local start=$EPOCHREALTIME status
  set +e
  (cd "$build_dir" && "$bin" "${args[@]}" "${extra[@]}" "$corpus" "${seeds[@]}") > "$log" 2>&1
  status=$?
  set -e
  local end=$EPOCHREALTIME
  # Progress lines and any report, not the per-input NEW/REDUCE noise.
  grep -E '^#[0-9]+ +(INITED|DONE|pulse)|ERROR|SUMMARY|stat::|artifact|Test unit written|==[0-9]+==' "$log" | tail -40 || true
  local runs cov ft elapsed rate
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  rate=$(awk -v n="${runs:-0}" -v s="$elapsed" 'BEGIN { printf "%d", (s > 0 ? n / s : 0) }')
  echo "${t}_fuzz: ${runs:-?} executions in ${elapsed} s (${rate} exec/s), cov ${cov:-?} ft ${ft:-?}," \
       "corpus $(ls "$corpus" | wc -l) entries$([ "$status" = 0 ] || echo ", FAILED (exit $status, log $log)")"
  return "$status"
}

if [ "$mode" != run ]; then
  build_targets
fi
failed=0
if [ "$mode" != build ]; then
  for t in "${targets[@]}"; do
    run_target "$t" || failed=1
  done
fi
exit $failed
