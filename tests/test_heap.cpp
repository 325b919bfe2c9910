// core/heap.h: freed heap memory below the arena's top really goes back to the system (resident pages of
// the heap mapping drop), which glibc does not do by itself.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/heap.h"
#include "test_util.h"

using namespace kokoro;

TEST(Heap, FreedBlocksBelowTheTopAreGivenBack) {
  // 48 MB in 64 KB blocks (below glibc's mmap threshold: they come from the arena), each touched.
  constexpr size_t kBlock = 64 << 10, kBlocks = 768;
  std::vector<void*> blocks;
  for (size_t i = 0; i < kBlocks; ++i) {
    void* p = std::malloc(kBlock);
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, kBlock);
    blocks.push_back(p);
  }
  void* top = std::malloc(kBlock);  // stays allocated above the others: glibc cannot just lower the top
  ASSERT_NE(top, nullptr);
  std::memset(top, 1, kBlock);
  const long before = test::resident_kb_of_mapping(top);
  ASSERT_GT(before, 0) << "the heap mapping was not found in /proc/self/smaps";
  for (void* p : blocks) std::free(p);
  const long freed = test::resident_kb_of_mapping(top);
  return_free_heap_pages();
  const long after = test::resident_kb_of_mapping(top);
  std::printf("heap mapping resident: %ld kB allocated, %ld kB after free, %ld kB after return_free_heap_pages\n",
              before, freed, after);
  EXPECT_LT(after, freed - 40 * 1024) << "at least 40 of the 48 MB freed go back to the system";
  std::free(top);
}
