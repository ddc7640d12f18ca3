// Tests for Slab (queue/slab.h): generation-checked handles (parity = state), the
// free list, paged growth that never moves a full chunk and never reserves more
// than one chunk beyond what is used, payload lifetimes (constructed once,
// destroyed once, at free), and copy/move.
#include "tlab/queue/slab.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tlab {
namespace {

struct Node {
  std::uint64_t key = 0;
  std::string text;
};
using S = Slab<Node>;

// Counts live instances, to check that every constructed payload is destroyed once.
struct Counted {
  static inline int live = 0;
  int v = 0;
  explicit Counted(int x) : v(x) { ++live; }
  Counted(const Counted& o) : v(o.v) { ++live; }
  Counted(Counted&& o) noexcept : v(o.v) { ++live; }
  Counted& operator=(const Counted&) = default;
  ~Counted() { --live; }
};

// A handle is valid exactly while its slot is live in the same generation; the
// default handle and handles with an even generation are never valid.
TEST(SlabTest, HandleIsValidOnlyWhileItsSlotIsLiveInThatGeneration) {
  S s;
  EXPECT_FALSE(s.valid(TimerHandle{}));
  const std::uint32_t i = s.alloc(Node{1, "a"});
  const TimerHandle h = s.handle(i);
  EXPECT_TRUE(s.valid(h));
  EXPECT_TRUE(s.live(i));
  EXPECT_EQ(h.generation % 2, 1u);
  EXPECT_FALSE(s.valid(TimerHandle{i, h.generation + 1}));
  EXPECT_FALSE(s.valid(TimerHandle{i, 0}));
  s.free(i);
  EXPECT_FALSE(s.valid(h));
  EXPECT_FALSE(s.live(i));
  EXPECT_FALSE(s.valid(TimerHandle{i, s.generation(i)}));  // even: the free state
  const std::uint32_t j = s.alloc(Node{2, "b"});
  EXPECT_EQ(j, i);           // the free slot is reused...
  EXPECT_FALSE(s.valid(h));  // ...under a new generation
  EXPECT_TRUE(s.valid(s.handle(j)));
  EXPECT_NE(s.handle(j).generation, h.generation);
  EXPECT_EQ(s[j].text, "b");
}

// Freed slots are reused last-freed-first, and live_count/capacity track the state.
TEST(SlabTest, FreeListReusesLastFreedFirst) {
  S s;
  std::vector<std::uint32_t> ids;
  for (int k = 0; k < 5; ++k) ids.push_back(s.alloc(Node{static_cast<std::uint64_t>(k), ""}));
  EXPECT_EQ(s.live_count(), 5u);
  s.free(ids[1]);
  s.free(ids[3]);
  EXPECT_EQ(s.live_count(), 3u);
  EXPECT_EQ(s.alloc(Node{}), ids[3]);
  EXPECT_EQ(s.alloc(Node{}), ids[1]);
  EXPECT_EQ(s.alloc(Node{}), 5u);
  EXPECT_EQ(s.capacity(), 6u);
  EXPECT_EQ(s.live_count(), 6u);
}

// Growing through chunk 0's doublings and several full chunks keeps every node's
// contents, and a node in a full chunk never moves once placed.
TEST(SlabTest, GrowthKeepsContentsAndNeverMovesFullChunks) {
  S s;
  const std::uint32_t n = 3 * S::kChunkSlots + 17;
  std::vector<std::uint32_t> ids;
  for (std::uint32_t k = 0; k < n; ++k) {
    ids.push_back(s.alloc(Node{k, std::to_string(k) + " and some text past SSO"}));
    if (k % 3 == 0) {
      s.free(ids.back());
      ids.back() = TimerHandle::kNoIndex;
    }
  }
  const std::uint32_t pinned = S::kChunkSlots + 1;  // in chunk 1, a full chunk
  ASSERT_TRUE(s.live(pinned));
  const Node* where = &s[pinned];
  for (std::uint32_t k = 0; k < 2 * S::kChunkSlots; ++k) s.alloc(Node{n + k, "more"});
  EXPECT_EQ(&s[pinned], where);
  for (std::uint32_t k = 0; k < n; ++k) {
    if (ids[k] == TimerHandle::kNoIndex) continue;
    ASSERT_TRUE(s.live(ids[k]));
    EXPECT_EQ(s[ids[k]].key, k);
    EXPECT_EQ(s[ids[k]].text, std::to_string(k) + " and some text past SSO");
  }
}

// Storage never exceeds the slots in use by a chunk or more, however the slab grew,
// and a small slab reserves only a small first chunk.
TEST(SlabTest, StorageOvershootsByLessThanOneChunk) {
  S small;
  small.alloc(Node{});
  EXPECT_LE(small.reserved(), S::kFirstSlots);
  S s;
  for (std::uint32_t k = 0; k < 10 * S::kChunkSlots + 3; ++k) {
    s.alloc(Node{});
    ASSERT_GE(s.reserved(), s.capacity());
    if (s.capacity() > S::kChunkSlots) {
      ASSERT_LT(s.reserved() - s.capacity(), S::kChunkSlots);
    }
  }
}

// reserve(n) allocates room for n slots up front (less than a chunk more), and
// allocating up to n then reserves nothing more.
TEST(SlabTest, ReserveAllocatesUpFront) {
  S s;
  const std::size_t n = 5 * S::kChunkSlots + 100;
  s.reserve(n);
  EXPECT_GE(s.reserved(), n);
  EXPECT_LT(s.reserved(), n + S::kChunkSlots);
  const std::size_t r = s.reserved();
  for (std::size_t k = 0; k < n; ++k) s.alloc(Node{});
  EXPECT_EQ(s.reserved(), r);
  S tiny;
  tiny.reserve(3);
  EXPECT_GE(tiny.reserved(), 3u);
  EXPECT_LE(tiny.reserved(), S::kFirstSlots);  // a small reserve stays small
}

// Every payload constructed by alloc is destroyed exactly once: at free, or when
// the slab is destroyed, including the ones moved by chunk 0's growth.
TEST(SlabTest, PayloadsAreDestroyedExactlyOnce) {
  Counted::live = 0;
  {
    Slab<Counted> s;
    std::vector<std::uint32_t> ids;
    for (int k = 0; k < static_cast<int>(S::kChunkSlots) + 50; ++k) ids.push_back(s.alloc(k));
    EXPECT_EQ(Counted::live, static_cast<int>(ids.size()));
    for (std::size_t k = 0; k < ids.size(); k += 2) s.free(ids[k]);
    EXPECT_EQ(Counted::live, static_cast<int>(ids.size() / 2));
    EXPECT_EQ(s[ids[1]].v, 1);
  }
  EXPECT_EQ(Counted::live, 0);
}

// A copy has the same live slots, contents, generations and free list as the
// original and is independent of it; a move leaves the source empty.
TEST(SlabTest, CopyAndMovePreserveSlotsAndGenerations) {
  Counted::live = 0;
  {
    Slab<Counted> a;
    const std::uint32_t x = a.alloc(1);
    const std::uint32_t y = a.alloc(2);
    a.free(x);
    Slab<Counted> b(a);
    EXPECT_EQ(Counted::live, 2);
    EXPECT_TRUE(b.valid(a.handle(y)));
    EXPECT_FALSE(b.live(x));
    EXPECT_EQ(b[y].v, 2);
    EXPECT_EQ(b.alloc(3), x);  // same free list
    EXPECT_FALSE(a.live(x));   // independent
    Slab<Counted> c(std::move(b));
    EXPECT_EQ(b.live_count(), 0u);
    EXPECT_EQ(c.live_count(), 2u);
    EXPECT_EQ(c[x].v, 3);
    a = c;
    EXPECT_EQ(a[x].v, 3);
    EXPECT_EQ(Counted::live, 4);
  }
  EXPECT_EQ(Counted::live, 0);
}

}  // namespace
}  // namespace tlab
