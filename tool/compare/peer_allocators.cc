// tlab/tool/compare/peer_allocators.cc: count_peer_allocations (subjects.h): the
// counting allocators (alloc_counter.h) handed to the two C peers, libuv
// (uv_replace_allocator) and libevent (event_set_mem_functions), which otherwise
// call malloc directly and would be invisible to bytes-per-timer.
//
// Both libraries ask for the replacement before their first allocation. Calling it
// later is still safe here: the counting functions are malloc, realloc and free
// plus a counter, so a block allocated before the switch and freed after it is
// freed correctly (and only makes a window's count too low, never too high).
// Ground rules: the first call does the work (a thread-safe static); any thread.
#include <event2/event.h>
#include <uv.h>

#include "compare/alloc_counter.h"
#include "compare/subjects.h"

namespace tlab::tool::compare {

void count_peer_allocations() {
  static const bool done = [] {
    uv_replace_allocator(counting_malloc, counting_realloc, counting_calloc, counting_free);
    event_set_mem_functions(counting_malloc, counting_realloc, counting_free);
    return true;
  }();
  (void)done;
}

}  // namespace tlab::tool::compare
