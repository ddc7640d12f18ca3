// tlab/executor/merge_queue.h: MergeQueue, where a stopping worker leaves its
// orphaned timers for the metronome to hand to the workers that remain.
//
// Seed 003's "global MergeQueue": producers are stopping workers (one batch per
// stop) and schedulers that find no running worker; the only consumer is the
// metronome, once per tick. The seed allows "a lock-free queue or a simple
// Mutex<Vec<_>>"; this is the mutex. Pushes come in whole batches and are as rare
// as worker stops, the consumer swaps the whole vector out in O(1) under the lock,
// and the lock is never held while running user code or taking another lock; a
// lock-free MPSC list would buy nothing at that rate and would cost a node per entry.
//
//   push / push_all  O(1) amortised / O(batch) under the lock
//   take_all         O(1) under the lock (vector swap)
//
// Ground rules: any thread may push; take_all() is the metronome's (or whoever
// holds the executor's tick lock). The queue never looks inside its entries: the
// consumer checks each entry's generation and state before adopting it.
// Memory ordering: the mutex orders everything; an entry pushed before unlock is
// seen whole by the take_all() that locks after it.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "tlab/base/annotations.h"

namespace tlab {

template <class Entry, class P>
class MergeQueue {
 public:
  void push(Entry e) {
    typename P::Lock lock(mu_);
    entries_.push_back(std::move(e));
  }

  void push_all(std::vector<Entry>&& batch) {
    if (batch.empty()) return;
    typename P::Lock lock(mu_);
    if (entries_.empty()) {
      entries_.swap(batch);
    } else {
      for (Entry& e : batch) entries_.push_back(std::move(e));
    }
    batch.clear();
  }

  // tlab::MergeQueue::take_all: everything queued so far, oldest first.
  std::vector<Entry> take_all() {
    std::vector<Entry> out;
    typename P::Lock lock(mu_);
    out.swap(entries_);
    return out;
  }

  std::size_t size() const {
    typename P::Lock lock(mu_);
    return entries_.size();
  }

  // tlab::MergeQueue::for_each: f(entry) for every queued entry, under the lock.
  // Requires: f does not touch this queue.
  template <class F>
  void for_each(F&& f) const {
    typename P::Lock lock(mu_);
    for (const Entry& e : entries_) f(e);
  }

 private:
  mutable typename P::Mutex mu_;
  std::vector<Entry> entries_ TLAB_GUARDED_BY(mu_);
};

}  // namespace tlab
