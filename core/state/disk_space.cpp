#include "core/state/disk_space.hpp"

#include <sys/statvfs.h>

namespace gtmesh::state {

bool enough_disk_space(const std::string& dir, uint64_t reserve, std::string& error) {
  struct statvfs fs{};
  if (statvfs(dir.c_str(), &fs) != 0)
    return true; // cannot tell: let the write itself report
  uint64_t free = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free > reserve)
    return true;
  error = "not enough free space in " + dir + ": " + std::to_string(free >> 20) + " MB left, " +
          std::to_string(reserve >> 20) + " MB kept in reserve; nothing was written";
  return false;
}

} // namespace gtmesh::state
