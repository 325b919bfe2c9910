// Giving freed heap memory back to the system. glibc keeps freed blocks in its arenas: only an arena's top is
// ever returned, and its mmap threshold rises to the largest block freed (up to 32 MB), so that later
// activations of that size land in the arenas too. After a long segment an engine held ~100 MB of freed
// activations; after its prepared weights moved to the store file (core/weight_cache.h), ~200 MB of freed
// heap copies. Called at such moments (never per tensor: the next allocations fault their pages in again).
// Not for real-time threads (a system call per free range).
#pragma once

namespace kokoro {

void return_free_heap_pages();

}  // namespace kokoro
