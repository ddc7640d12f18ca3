// tlab/tool/compare/subjects.h: the compare subjects compare/ makes. It defines no
// timer facility of its own: every built-in subject is its subject-table row's
// descriptor and benchmark hook (builtin_subject.h, subjects/bench_hook.h), and a
// user's plugin is measured in a child (isolated_subject.h); both go through
//
//   make_abi_subject(d, name, hook)  any facility descriptor of the subject ABI
//                                    (tlab/subject.h), measured by the generic
//                                    path (abi_subject.cc), driven as `hook` says
//   count_peer_allocations()         hands alloc_counter.h's counting allocators to
//                                    libuv and libevent (peer_allocators.cc)
//
// Ground rules: factories may be called from the compare thread only.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "compare/subject.h"
#include "subjects/bench_hook.h"
#include "tlab/subject.h"

namespace tlab::tool::compare {

// count_peer_allocations: hands alloc_counter.h's counting allocators to libuv and
// libevent (peer_allocators.cc), so their memory shows in bytes per timer;
// make_abi_subject calls it.
void count_peer_allocations();
// make_abi_subject: `d` must be a facility (TLAB_KIND_FACILITY) that passed
// check_descriptor (subjects/plugin.h) and must outlive the subject.
// `hook` (a built-in row's, subjects/bench_hook.h; nullptr for a plugin) says how
// to drive it beyond the generic path; `peer` is how the report counts it.
std::unique_ptr<Subject> make_abi_subject(const tlab_subject& d, std::string display_name,
                                          const BenchHook* hook = nullptr, bool peer = true);

}  // namespace tlab::tool::compare
