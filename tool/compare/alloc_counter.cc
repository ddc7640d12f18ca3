// tlab/tool/compare/alloc_counter.cc: see alloc_counter.h. Replaces the global
// operator new/delete for the whole binary that links it.
#include "compare/alloc_counter.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace tlab::tool {
namespace {

std::atomic<bool> g_counting{false};
std::atomic<std::int64_t> g_live{0};
std::atomic<std::uint64_t> g_allocs{0};

void note_alloc(void* p) noexcept {
  // relaxed: see the header's memory-ordering note (single allocating thread).
  if (p != nullptr && g_counting.load(std::memory_order::relaxed)) {
    g_live.fetch_add(static_cast<std::int64_t>(::malloc_usable_size(p)),
                     std::memory_order::relaxed);
    g_allocs.fetch_add(1, std::memory_order::relaxed);
  }
}

void note_free(void* p) noexcept {
  // relaxed: as in note_alloc.
  if (p != nullptr && g_counting.load(std::memory_order::relaxed)) {
    g_live.fetch_sub(static_cast<std::int64_t>(::malloc_usable_size(p)),
                     std::memory_order::relaxed);
  }
}

void* new_impl(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  note_alloc(p);
  return p;
}

void* new_aligned(std::size_t n, std::align_val_t al) {
  const auto a = static_cast<std::size_t>(al);
  void* p = nullptr;
  if (::posix_memalign(&p, a < sizeof(void*) ? sizeof(void*) : a, n == 0 ? 1 : n) != 0) {
    throw std::bad_alloc();
  }
  note_alloc(p);
  return p;
}

void delete_impl(void* p) noexcept {
  note_free(p);
  std::free(p);
}

}  // namespace

AllocWindow::AllocWindow() {
  // relaxed: single-threaded use (header).
  start_bytes_ = g_live.load(std::memory_order::relaxed);
  start_allocs_ = g_allocs.load(std::memory_order::relaxed);
  g_counting.store(true, std::memory_order::relaxed);
}

AllocWindow::~AllocWindow() { g_counting.store(false, std::memory_order::relaxed); }

std::int64_t AllocWindow::live_bytes() const {
  return g_live.load(std::memory_order::relaxed) - start_bytes_;  // relaxed: as above
}

std::uint64_t AllocWindow::allocations() const {
  return g_allocs.load(std::memory_order::relaxed) - start_allocs_;  // relaxed: as above
}

void* counting_malloc(std::size_t n) {
  void* p = std::malloc(n);
  note_alloc(p);
  return p;
}

void* counting_realloc(void* p, std::size_t n) {
  note_free(p);
  void* q = std::realloc(p, n);
  if (q == nullptr && n != 0) {
    note_alloc(p);  // realloc failed: p is still ours
    return nullptr;
  }
  note_alloc(q);
  return q;
}

void* counting_calloc(std::size_t count, std::size_t n) {
  void* p = std::calloc(count, n);
  note_alloc(p);
  return p;
}

void counting_free(void* p) { delete_impl(p); }

}  // namespace tlab::tool

// The replaceable global allocation functions ([new.delete]); every form routes to
// the counting helpers above.
void* operator new(std::size_t n) { return tlab::tool::new_impl(n); }
void* operator new[](std::size_t n) { return tlab::tool::new_impl(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return tlab::tool::new_impl(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return tlab::tool::new_impl(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t n, std::align_val_t al) { return tlab::tool::new_aligned(n, al); }
void* operator new[](std::size_t n, std::align_val_t al) { return tlab::tool::new_aligned(n, al); }
void operator delete(void* p) noexcept { tlab::tool::delete_impl(p); }
void operator delete[](void* p) noexcept { tlab::tool::delete_impl(p); }
void operator delete(void* p, std::size_t) noexcept { tlab::tool::delete_impl(p); }
void operator delete[](void* p, std::size_t) noexcept { tlab::tool::delete_impl(p); }
void operator delete(void* p, std::align_val_t) noexcept { tlab::tool::delete_impl(p); }
void operator delete[](void* p, std::align_val_t) noexcept { tlab::tool::delete_impl(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  tlab::tool::delete_impl(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  tlab::tool::delete_impl(p);
}
