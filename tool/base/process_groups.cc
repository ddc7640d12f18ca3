// tlab/tool/base/process_groups.cc: see process_groups.h.
#include "base/process_groups.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>

namespace tlab::tool {

namespace {

// A slot is free while owner is 0. Claimed: owner set first (CAS), then pgid; freed:
// pgid cleared first, then owner. A reader skips pgid 0 (a slot being written or
// freed), so it never kills a stale group.
struct Slot {
  std::atomic<pid_t> owner;
  std::atomic<pid_t> pgid;
};
static_assert(std::atomic<pid_t>::is_always_lock_free, "slots are shared across processes");

// The shared page; nullptr until groups_init. Written once, before any fork.
Slot* g_slots = nullptr;

void release(Slot& s) {
  s.pgid.store(0, std::memory_order::release);
  s.owner.store(0, std::memory_order::release);
}

}  // namespace

void groups_init() {
  if (g_slots != nullptr) return;
  void* p = ::mmap(nullptr, sizeof(Slot) * kMaxGroups, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;  // no table: leaders still die with their parent
  g_slots = static_cast<Slot*>(p);  // zero-filled: every slot free
}

void groups_add(pid_t pgid) {
  if (g_slots == nullptr || pgid <= 0) return;
  const pid_t me = ::getpid();
  for (std::size_t i = 0; i < kMaxGroups; ++i) {
    pid_t free = 0;
    // acquire: pairs with release()'s stores, so the slot is wholly free.
    if (g_slots[i].owner.compare_exchange_strong(free, me, std::memory_order::acquire)) {
      g_slots[i].pgid.store(pgid, std::memory_order::release);  // pairs with the readers
      return;
    }
  }
}

void groups_remove(pid_t pgid) {
  if (g_slots == nullptr) return;
  const pid_t me = ::getpid();
  for (std::size_t i = 0; i < kMaxGroups; ++i) {
    if (g_slots[i].owner.load(std::memory_order::acquire) == me &&
        g_slots[i].pgid.load(std::memory_order::acquire) == pgid) {
      release(g_slots[i]);
    }
  }
}

void groups_kill_owned(pid_t owner) {
  if (g_slots == nullptr) return;
  for (std::size_t i = 0; i < kMaxGroups; ++i) {
    if (g_slots[i].owner.load(std::memory_order::acquire) != owner) continue;
    const pid_t pgid = g_slots[i].pgid.load(std::memory_order::acquire);
    if (pgid <= 0) continue;  // being written by its owner: a live process, not ours to end
    ::kill(-pgid, SIGKILL);
    release(g_slots[i]);
  }
}

}  // namespace tlab::tool
