#include "core/heap.h"

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
