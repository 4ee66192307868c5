#include "core/runtime/huge_pages.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gtmesh::runtime {

namespace {

constexpr const char* tunable = "glibc.malloc.hugetlb";

bool kernel_mode_is_madvise() noexcept {
  std::FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f)
    return false;
  char line[128] = {};
  const bool read = std::fgets(line, sizeof line, f) != nullptr;
  std::fclose(f);
  return read && std::strstr(line, "[madvise]") != nullptr;
}

bool names_a_large_file(int argc, char** argv) noexcept {
  constexpr off_t large = 4 << 20;
  struct stat st;
  for (int i = 1; i < argc; ++i)
    if (::stat(argv[i], &st) == 0 && S_ISREG(st.st_mode) && st.st_size > large)
      return true;
  return false;
}

} // namespace

void reexec_with_huge_pages(int argc, char** argv, bool long_running) noexcept {
  const char* off = std::getenv("GTMESH_HUGE_PAGES");
  if (off && std::strcmp(off, "0") == 0)
    return;
  if (!long_running && !names_a_large_file(argc, argv))
    return;
  // Under AT_SECURE (setuid, file capabilities) glibc drops the tunable from
  // the environment: the program would execute itself again forever.
  if (getauxval(AT_SECURE))
    return;
  const char* before = std::getenv("GLIBC_TUNABLES");
  if ((before && std::strstr(before, tunable)) || !kernel_mode_is_madvise())
    return;
  try {
    std::string value = before && *before ? std::string(before) + ":" : std::string();
    value += std::string(tunable) + "=1";
    if (setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0)
      return;
  } catch (...) {
    return;
  }
  execv("/proc/self/exe", argv);
  // Not executed (no /proc, say): go on as before.
  if (before)
    setenv("GLIBC_TUNABLES", before, 1);
  else
    unsetenv("GLIBC_TUNABLES");
}

} // namespace gtmesh::runtime
