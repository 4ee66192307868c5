#pragma once

// Transparent huge pages for the heap (issue 42). Loading a config of
// 100,000 records touches about 400 MB of fresh memory in 4 KiB pages: 100,000
// page faults, a third of `gtmesh check-config`'s CPU, and TLB misses on top.
// glibc's malloc asks the kernel for 2 MiB pages when started with
// GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (glibc 2.35+, Debian 12 has 2.36),
// which it reads only at exec: so the program executes itself once more
// with it set. Measured (docs/benchmarks.md, "Huge pages"): check-config and
// serve's first answer at 100,000 records 2.2-2.5x faster, the serving RSS
// 2 % larger.
//
// Executing again costs a second start (about 70 ms: the dynamic linking of
// the binary's libraries), so it is done for the long-running commands
// (decider, agent, demo) and for a command given a file of more than 4 MiB
// (a config of about 10,000 records and up), where it pays for itself.
// Done only where it changes something: the kernel's THP mode is
// `madvise` (with `always` the kernel already does it; with `never` it
// cannot), GLIBC_TUNABLES does not mention the tunable already (an
// operator's choice is kept, and the re-executed program sees it and goes
// on), the program does not run under AT_SECURE (setuid or file
// capabilities: glibc drops the tunable there, and it would execute itself
// again forever), and GTMESH_HUGE_PAGES is not 0. The PID stays the same (pid files,
// systemd's notify). If the exec fails the program goes on as it was.

namespace gtmesh::runtime {

/// Call first in main(), before any thread starts; returns only when the
/// program goes on in this process. `long_running`: the command serves
/// for long (decider, agent, demo); otherwise only an argument naming a
/// file of more than 4 MiB makes it worth a second start.
void reexec_with_huge_pages(int argc, char** argv, bool long_running) noexcept;

} // namespace gtmesh::runtime
