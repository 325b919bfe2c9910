// core/page_residency.h: which pages of a mapping are mapped, and mapping them back; and ModelFile's use of it
// (the pages a release dropped come back with restore_released_pages, once, and only those).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/model_file.h"
#include "core/page_residency.h"
#include "tests/test_util.h"

using namespace kokoro;

namespace {
const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

// An anonymous mapping of `pages` pages, none of them touched yet.
struct Pages {
  explicit Pages(size_t pages) : bytes(pages * kPage) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  }
  ~Pages() {
    if (base) munmap(base, bytes);
  }
  char* base;
  size_t bytes;
};
}  // namespace

TEST(PageResidency, FindsTheTouchedPagesAsRuns) {
  Pages m(8);
  ASSERT_NE(m.base, nullptr);
  madvise(m.base, m.bytes, MADV_NOHUGEPAGE);  // one 4 kB page per touch, whatever the THP setting
  EXPECT_TRUE(mapped_page_runs(m.base, m.bytes).empty());
  for (size_t p : {0, 1, 5}) m.base[p * kPage] = 1;
  const PageRuns runs = mapped_page_runs(m.base, m.bytes);
  ASSERT_EQ(runs.size(), 2u) << "pages 0-1 and 5 were touched (is /proc/self/pagemap readable?)";
  EXPECT_EQ(runs[0], std::make_pair(size_t{0}, 2 * kPage));
  EXPECT_EQ(runs[1], std::make_pair(5 * kPage, kPage));
}

TEST(PageResidency, MergeIsTheCoalescedUnion) {
  PageRuns a = {{0, 2 * kPage}, {8 * kPage, kPage}};
  merge_page_runs(a, {{2 * kPage, kPage}, {4 * kPage, kPage}, {8 * kPage, 2 * kPage}});
  const PageRuns want = {{0, 3 * kPage}, {4 * kPage, kPage}, {8 * kPage, 2 * kPage}};
  EXPECT_EQ(a, want);
  merge_page_runs(a, {});
  EXPECT_EQ(a, want);
}

TEST(PageResidency, MapsBackWhatWasDropped) {
  Pages m(6);
  ASSERT_NE(m.base, nullptr);
  madvise(m.base, m.bytes, MADV_NOHUGEPAGE);
  std::memset(m.base + kPage, 7, 2 * kPage);
  const PageRuns before = mapped_page_runs(m.base, m.bytes);
  ASSERT_EQ(before, PageRuns({{kPage, 2 * kPage}}));
  madvise(m.base, m.bytes, MADV_DONTNEED);
  EXPECT_TRUE(mapped_page_runs(m.base, m.bytes).empty());
  EXPECT_EQ(map_page_runs_back(m.base, before), 2 * kPage) << "MADV_POPULATE_READ (Linux 5.14) failed";
  EXPECT_EQ(mapped_page_runs(m.base, m.bytes), before);
}

// The engine releases the weights' pages between the parts of a segment and maps them back while it waits for
// streamed text (StreamEngine's pause and streamed utterance_begin items): the pages read before the release
// come back, the others stay out, the values are the file's, and a second restore has nothing to do.
TEST(ModelFile, RestoringReleasedPagesMapsBackWhatWasMapped) {
  if (std::getenv("KOKORO_KEEP_WEIGHT_PAGES")) GTEST_FAIL() << "KOKORO_KEEP_WEIGHT_PAGES is set: nothing is released";
  test::TempDir dir;
  std::vector<float> read(1u << 20), unread(1u << 20);  // 4 MB each
  for (size_t i = 0; i < read.size(); ++i) read[i] = unread[i] = 0.5f * static_cast<float>(i) + 1.0f;
  ModelWriter w(nlohmann::json{{"n_token", 4}, {"vocab", {{"a", 1}, {"b", 2}}}});
  w.add("read", {static_cast<int64_t>(read.size())}, read.data());
  w.add("unread", {static_cast<int64_t>(unread.size())}, unread.data());
  w.write(dir.file("m.kokoro"));
  const auto m = ModelFile::open(dir.file("m.kokoro"));
  const TensorView r = m->get("read"), u = m->get("unread");
  ASSERT_EQ(std::memcmp(r.data, read.data(), read.size() * 4), 0);
  const long before = test::resident_kb_of_mapping(r.data);
  ASSERT_GE(before, 4000) << "the weights were just read: their pages should be resident";
  m->release_resident_pages();
  ASSERT_LT(test::resident_kb_of_mapping(r.data), before / 4);
  const size_t back = m->restore_released_pages();
  EXPECT_GE(back, read.size() * 4 - 2 * kPage) << "the read tensor's pages (all but its partial first and last)";
  EXPECT_LE(back, read.size() * 4 + 64 * kPage) << "only what was mapped: not the unread tensor's 4 MB";
  EXPECT_GE(test::resident_kb_of_mapping(r.data), 4000);
  // Past the unread tensor's first 256 kB (the kernel maps up to 64 kB around a fault from the page cache).
  const uintptr_t u0 = (reinterpret_cast<uintptr_t>(u.data) + (256u << 10) + kPage - 1) / kPage * kPage;
  EXPECT_TRUE(mapped_page_runs(reinterpret_cast<const void*>(u0), 1u << 21).empty()) << "the unread tensor came back";
  EXPECT_EQ(m->restore_released_pages(), 0u) << "restored once";
  EXPECT_EQ(std::memcmp(r.data, read.data(), read.size() * 4), 0);
}
