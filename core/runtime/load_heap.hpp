#pragma once

// The heap of a command that loads a config and exits (issue 42). Loading
// 100,000 records allocates and frees a few hundred MB within half a
// second, growing the heap a little at a time: each step is another sbrk,
// and with transparent huge pages (huge_pages.hpp) small steps leave the
// heap in stretches the kernel backs with 4 KiB pages, each faulted in and
// zeroed on first touch. Growing it 256 MiB at a time instead (glibc's
// M_TOP_PAD; untouched pages cost nothing) made `gtmesh check-config` of
// 100,000 records 24 % faster (docs/benchmarks.md, "Huge pages").
//
// Not for serving processes: there it made the first answer of `gtmesh
// serve` 12 % faster but its peak during the load 16 % higher (whole huge
// pages in the larger steps), past the peak bound of 1.5x the serving RSS,
// and the pad also keeps that much free memory at the top of the heap
// whenever glibc trims. GTMESH_HEAP_PAD=0 turns it off.

namespace gtmesh::runtime {

/// Call once, early, in a command that loads and exits (check-config,
/// explain, ...): the heap grows in large steps for the rest of the process.
void pad_heap_for_batch() noexcept;

} // namespace gtmesh::runtime
