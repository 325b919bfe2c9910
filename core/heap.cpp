#include "core/heap.h"

// <cstdlib> brings in glibc's <features.h>, which defines __GLIBC__: without a libc header before the test
// below, the test was false and nothing was ever returned (sixth session; tests/test_heap.cpp).
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace kokoro {

void return_free_heap_pages() {
#if defined(__GLIBC__)
  malloc_trim(0);  // every arena, including free ranges inside them (glibc >= 2.8), not just the top
#endif
}

}  // namespace kokoro
