// Which pages of a file mapping this process has mapped, and mapping them back.
//
// ModelFile::release_resident_pages drops the weights' pages between the parts of a segment (where the memory
// peak is); whatever the next sentence reads then comes back one page fault at a time, on its way to first
// audio. On this project's machines (virtual ones) such a fault can cost milliseconds: the early start's begin,
// which reads the AdaIN style projections' 25 MB of fp32 weights, took 4-32 ms after a release (over 100 in a
// slow episode) against ~4 ms with the pages kept (docs/benchmarks.md). So a release remembers what was mapped,
// and the engine maps it back while it waits for streamed text anyway (StreamEngine: a pause between sentences,
// a streamed utterance's start), before the next sentence needs it.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace kokoro {

// Runs of mapped pages of a mapping: (offset from its start, bytes), whole pages, in increasing order.
using PageRuns = std::vector<std::pair<size_t, size_t>>;

// The pages of [base, base + bytes) that this process has mapped now (/proc/self/pagemap's present bit; the
// mapping must start on a page). Empty when pagemap cannot be read: then nothing is mapped back later.
PageRuns mapped_page_runs(const void* base, size_t bytes);

// Adds `more` to `into` (the union, coalesced): a release that finds nothing mapped (an idle release right after
// a segment's own) must not forget what the one before it dropped.
void merge_page_runs(PageRuns& into, const PageRuns& more);

// Maps the runs back (madvise MADV_POPULATE_READ: the kernel fills the page tables from the page cache in one
// call). Returns the bytes asked for; 0 on a kernel without MADV_POPULATE_READ (before Linux 5.14), where the
// pages then come back by faults as before. Not for real-time threads (system calls).
size_t map_page_runs_back(const void* base, const PageRuns& runs);

}  // namespace kokoro
