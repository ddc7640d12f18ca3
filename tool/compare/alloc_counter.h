// tlab/tool/compare/alloc_counter.h: counts the heap bytes a piece of code keeps live.
//
// `tlab compare` reports bytes per pending timer by MEASURING what the timer
// facility holds, not by adding up sizeof()s. This file makes that possible for
// every kind of allocation the strategies and peers perform:
//   - operator new / delete (all four sized/aligned families) are replaced in any
//     binary that links this file (the tlab binary and the tests): our queues,
//     TimerService, asio and the std::priority_queue peer allocate through them;
//   - counting_malloc/realloc/calloc/free are handed to libuv
//     (uv_replace_allocator) and libevent (event_set_mem_functions), which
//     otherwise call malloc directly.
// Each counted block adds malloc_usable_size(block) (what the allocator really
// hands out, rounding included; the 8-byte chunk header is not counted) while
// counting is on, and subtracts it when freed while counting is on.
//
// Usage: AllocWindow w; ...build...; w.live_bytes() is the net growth since w was
// constructed. Only one window at a time, and only while the process does no
// other allocation on other threads (compare runs its memory measurements on one
// thread with no other threads alive); blocks allocated before the window and
// freed inside it make the count too low, never too high.
//
// Cost: when counting is off, one relaxed load per allocation; when on, one
// malloc_usable_size and one relaxed fetch_add.
//
// Ground rules: enable/disable from one thread; the counters are process-global
// atomics. Memory ordering: relaxed everywhere: the window's owner is the only
// thread allocating while it reads (see Usage), so no ordering is needed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tlab::tool {

// AllocWindow: counts net live heap bytes from construction until destruction.
class AllocWindow {
 public:
  AllocWindow();
  ~AllocWindow();
  AllocWindow(const AllocWindow&) = delete;
  AllocWindow& operator=(const AllocWindow&) = delete;

  // AllocWindow::live_bytes: bytes allocated minus bytes freed inside the window.
  std::int64_t live_bytes() const;
  // AllocWindow::allocations: number of counted allocations inside the window.
  std::uint64_t allocations() const;

 private:
  std::int64_t start_bytes_;
  std::uint64_t start_allocs_;
};

// malloc-compatible functions that count like operator new does; for C libraries
// that accept replacement allocators.
void* counting_malloc(std::size_t n);
void* counting_realloc(void* p, std::size_t n);
void* counting_calloc(std::size_t count, std::size_t n);
void counting_free(void* p);

}  // namespace tlab::tool
