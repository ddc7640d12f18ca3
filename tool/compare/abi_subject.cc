// tlab/tool/compare/abi_subject.cc: any timer facility that speaks the subject ABI
// (tlab/subject.h) as a compare subject, so `tlab compare` measures it with the same
// workloads as everything else: every built-in subject (its descriptor and its
// benchmark hook, subjects/bench_hook.h) and a user's plugin (no hook; in a child,
// isolated_subject.h).
//
// How each workload becomes ABI calls:
//
//   | workload           | calls                                                         |
//   |--------------------|---------------------------------------------------------------|
//   | insert_cancel,     | run_cost over AbiAdapter, on the hook's driven descriptor if  |
//   | insert_expire,     | it has one: arm = schedule(now, delay, slot) with `now` the   |
//   | churn              | last poll's (an event loop's cached time; "already due" is one|
//   |                    | tick before it, so a ticked queue fires it at the next poll), |
//   |                    | disarm = cancel (skipped for a slot never armed), poll = one  |
//   |                    | poll(now) (LOOP) or a yield while the subject's own thread    |
//   |                    | fires (SELF), housekeeping = one more poll (drains what a     |
//   |                    | library queues on cancel, e.g. asio's aborted waits)          |
//   | mt_schedule_cancel,| s.threads loops run MtOps (subject.h) on one instance holding |
//   | mt_churn           | `pending` timers, on threads of compare's or (hook run_loops) |
//   |                    | the subject's own; each call under one mutex unless the       |
//   |                    | subject promises THREAD_SAFE; mt_churn polls a LOOP subject   |
//   |                    | every 16th op of each thread (one poller at a time), a SELF   |
//   |                    | one fires on its own; mt_schedule_cancel polls nobody         |
//   | lateness           | s.samples timers 200 us apart; fired() records its own        |
//   |                    | CLOCK_MONOTONIC reading minus the deadline; a LOOP subject is |
//   |                    | polled in a busy loop, a SELF one is left to its thread       |
//   | cancel_to_resume   | see below                                                     |
//
// cancel_to_resume for an ABI subject: the ABI has no blocking call, so the blocked
// side is what a user writes around a facility: a thread that schedules a timer
// 10 s out and waits on its own mutex + condition variable until it observes
// "fired or cancelled" (fired() notifies it, as does the canceller once cancel()
// returned PREVENTED). The histogram is therefore cancel() (plus the mutex when
// not THREAD_SAFE) plus one condition-variable hand-off to a sleeping thread:
// the price of cancelling a timer someone waits on through this facility, not a
// wake-up built into it.
//
// A call that returns an error stops the cell with std::runtime_error naming the
// subject, the call and the status.
//
// Ground rules: as every Subject (subject.h): used from the compare thread;
// workloads start and join their own threads. Instance's fired counter is
// atomic because a SELF subject calls fired() from its own threads.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "compare/isolated_subject.h"
#include "compare/subjects.h"

namespace tlab::tool::compare {
namespace {

// The tick tlab allows a LOOP subject (tlab_subject_config::tick_ns): 1 ms, the
// coarsest timer granularity among the peers (libuv), so no subject is asked for
// better than it can do.
constexpr std::int64_t kTickNs = 1'000'000;
// A timer that should have fired by now but has not, after this long past the
// last deadline, is lost: the cell fails instead of hanging.
constexpr std::int64_t kGiveUpNs = 10'000'000'000;
// cancel_to_resume's timer: far enough that it never fires during a round.
constexpr std::int64_t kParkedDelayNs = 10'000'000'000;

// One created instance of a descriptor and the host side of it.
class Instance {
 public:
  using OnFire = std::function<void(std::uint64_t cookie)>;

  // serialise: take mu_ around every call (two or more calling threads and the
  // subject does not promise THREAD_SAFE).
  Instance(const tlab_subject& d, std::string name, bool serialise, OnFire on_fire = {})
      : d_(d), name_(std::move(name)), serialise_(serialise), on_fire_(std::move(on_fire)) {
    tlab_subject_config c{sizeof(tlab_subject_config), 0, mono_ns(), kTickNs, this,
                          &Instance::fired_cb};
    check(d_.create(&c, &self_), "create");
  }
  ~Instance() {
    if (self_ != nullptr) d_.destroy(self_);
  }
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  std::uint64_t schedule(std::int64_t now_ns, std::int64_t delay_ns, std::uint64_t cookie) {
    std::uint64_t h = 0;
    auto lk = lock();
    check(d_.schedule(self_, now_ns, delay_ns, cookie, &h), "schedule");
    return h;
  }
  std::int32_t cancel(std::uint64_t handle) {
    std::int32_t r = TLAB_CANCEL_UNKNOWN;
    auto lk = lock();
    check(d_.cancel(self_, handle, &r), "cancel");
    return r;
  }
  // Instance::poll: one loop pass of a LOOP subject at `now_ns`; a yield for a SELF one.
  void poll(std::int64_t now_ns) {
    if (!loop()) {
      std::this_thread::yield();
      return;
    }
    auto lk = lock();
    check(d_.poll(self_, now_ns), "poll");
  }
  void poll() { poll(mono_ns()); }
  void* self() const { return self_; }
  bool loop() const { return d_.drive == TLAB_DRIVE_LOOP; }
  std::uint64_t fired() const {
    return fired_.load(std::memory_order_acquire);  // pairs with fired_cb's release
  }

 private:
  static void fired_cb(void* host, std::uint64_t cookie) {
    auto* self = static_cast<Instance*>(host);
    if (self->on_fire_) self->on_fire_(cookie);
    // release: what on_fire_ recorded is visible to whoever sees the new count.
    self->fired_.fetch_add(1, std::memory_order_release);
  }
  std::unique_lock<std::mutex> lock() {
    return serialise_ ? std::unique_lock<std::mutex>(mu_) : std::unique_lock<std::mutex>();
  }
  void check(tlab_status st, const char* call) const {
    if (st != TLAB_OK) {
      throw std::runtime_error(
          fmt::format("subject {}: {} returned tlab_status {}", name_, call, static_cast<int>(st)));
    }
  }

  const tlab_subject& d_;
  std::string name_;
  bool serialise_;
  OnFire on_fire_;
  void* self_ = nullptr;
  std::mutex mu_;  // serialises calls when serialise_
  std::atomic<std::uint64_t> fired_{0};
};

// run_cost's adapter (subject.h) over an Instance on the calling thread alone,
// which arms from the now of its last poll, as an event loop does with its cached
// time (the peers that read their own clock ignore it).
class AbiAdapter {
 public:
  AbiAdapter(std::size_t slots, const tlab_subject& d, const std::string& name)
      : inst_(d, name, /*serialise=*/false), handles_(slots), armed_(slots, false) {}
  void arm(std::size_t slot, std::int64_t delay_ns) {
    // "Already due" (delay 0) is one tick before the last poll: a ticked queue puts
    // it on its due list, as libuv does with a 0 ms timeout at its cached time.
    handles_[slot] = inst_.schedule(delay_ns == 0 ? now_ - kTickNs : now_, delay_ns, slot);
    armed_[slot] = true;
  }
  void disarm(std::size_t slot) {
    if (!armed_[slot]) return;
    inst_.cancel(handles_[slot]);  // TOO_LATE or UNKNOWN for a fired one: harmless
    armed_[slot] = false;
  }
  std::size_t poll() {
    const std::uint64_t before = inst_.fired();
    now_ = mono_ns();
    inst_.poll(now_);
    return inst_.fired() - before;
  }
  std::uint64_t fired() const { return inst_.fired(); }
  void housekeeping() {
    now_ = mono_ns();
    if (inst_.loop()) inst_.poll(now_);
  }

 private:
  Instance inst_;
  std::vector<std::uint64_t> handles_;
  std::vector<bool> armed_;
  std::int64_t now_ = mono_ns();  // the last poll's; after inst_'s create
};

class AbiSubject final : public Subject {
 public:
  AbiSubject(const tlab_subject& d, std::string name, const BenchHook* hook, bool peer)
      : d_(d), name_(std::move(name)), hook_(hook), peer_(peer) {}
  std::string name() const override { return name_; }
  bool is_peer() const override { return peer_; }
  std::string note() const override {
    std::string shape;
    if (hook_ != nullptr && hook_->shape != nullptr) {
      // A driven twin has no threads to start: the cheaper instance to ask.
      const Instance inst(single_thread(), name_, /*serialise=*/false);
      const SubjectShape sh = hook_->shape(inst.self());
      shape = fmt::format(" [{}; {} shard{}; new timers: {}]", sh.queue, sh.shards,
                          sh.shards == 1 ? "" : "s", sh.placement);
    }
    const char* single = driven() != nullptr            ? "its driven twin (its own threads not "
                                                          "started; the caller runs each pass)"
                         : d_.drive == TLAB_DRIVE_LOOP ? "polled by the caller"
                                                       : "fired by its own thread";
    const char* mt = run_loops() != nullptr ? "run one loop on each of its own threads"
                     : thread_safe()        ? "call it concurrently (THREAD_SAFE)"
                                            : "serialise calls on one mutex";
    return fmt::format(
        "{}{} through the subject ABI ({}-driven): {}; single-thread costs on {}; the mt "
        "workloads {}; cancel_to_resume is cancel() plus a condition-variable hand-off to the "
        "thread waiting on the timer",
        d_.name, shape, d_.drive == TLAB_DRIVE_LOOP ? "loop" : "self", d_.summary, single, mt);
  }
  CostResult cost(Workload w, std::size_t pending, const CellSettings& s) override {
    if (!is_mt(w)) return run_cost<AbiAdapter>(w, pending, s, single_thread(), name_);
    Instance inst(d_, name_, /*serialise=*/!thread_safe());
    const std::int64_t t0 = mono_ns();
    for (std::size_t i = 0; i < pending; ++i) inst.schedule(t0, background_delay(i, pending), i);
    const MtOps ops(w);
    // handles[ops.storage_index(slot)]: the slot's thread's only.
    std::vector<std::uint64_t> handles(ops.storage(s.threads));
    std::uint64_t cookie = pending;  // prearm's, then (t << 48) | k
    ops.prearm(s.threads, [&](std::size_t slot, std::int64_t d) {
      handles[ops.storage_index(slot)] = inst.schedule(mono_ns(), d, cookie++);
    });
    // A LOOP subject's poll is one loop pass: one thread at a time, even when the
    // subject promises THREAD_SAFE (a loop has one owner).
    std::mutex poll_mu;
    // A failed call must not escape a worker thread (std::terminate): the first
    // error is kept, the other operations become no-ops, and it is rethrown here.
    std::atomic<bool> failed{false};
    std::exception_ptr error;  // guarded by em; read after run_threads joined
    std::mutex em;
    auto op = [&](std::size_t t, std::uint64_t k) {
      if (failed.load(std::memory_order_relaxed)) return;  // an early exit only; em orders error
      try {
        ops.step(
            t, k,
            [&](std::size_t slot, std::int64_t d) {
              handles[ops.storage_index(slot)] =
                  inst.schedule(mono_ns(), d, (std::uint64_t{t} << 48) | k);
            },
            [&](std::size_t slot) { inst.cancel(handles[ops.storage_index(slot)]); });
        if (ops.poll_due(k) && inst.loop()) {
          std::lock_guard<std::mutex> lk(poll_mu);
          inst.poll();
        }
      } catch (...) {
        std::lock_guard<std::mutex> lk(em);
        if (!error) error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    };
    CostResult r;
    if (run_loops() != nullptr) {
      MtLoops<decltype(op)> loops(s, op);
      const std::int64_t w0 = mono_ns();
      const tlab_status st = run_loops()(inst.self(), loops.count(), &decltype(loops)::body, &loops);
      const std::int64_t w1 = mono_ns();
      if (st == TLAB_EINVAL) {
        throw CellFailed(fmt::format("{} at {} pending, {} threads: the subject runs one loop on "
                                     "each of its own threads, and has fewer",
                                     name_of(w), pending, loops.count()));
      }
      if (st != TLAB_OK) {
        throw std::runtime_error(
            fmt::format("subject {}: run_loops returned tlab_status {}", name_, static_cast<int>(st)));
      }
      r = loops.result(w1 - w0);
    } else {
      r = run_threads(s, op);
    }
    if (error) std::rethrow_exception(error);
    return r;
  }
  Histogram lateness(const CellSettings& s) override {
    Histogram h;  // guarded by hm (a SELF subject records from its own thread)
    std::mutex hm;
    std::vector<std::int64_t> deadlines(s.samples);
    Instance inst(d_, name_, /*serialise=*/false, [&](std::uint64_t cookie) {
      const std::int64_t now = mono_ns();
      std::lock_guard<std::mutex> lk(hm);
      h.record(now - deadlines[cookie]);
    });
    const std::int64_t first = mono_ns() + kLatenessLeadNs;
    for (std::size_t i = 0; i < s.samples; ++i) {
      deadlines[i] = first + kLatenessStepNs * static_cast<std::int64_t>(i);
      const std::int64_t now = mono_ns();
      inst.schedule(now, deadlines[i] - now, i);
    }
    const std::int64_t give_up = deadlines.back() + kGiveUpNs;
    while (inst.fired() < s.samples) {
      if (mono_ns() > give_up) {
        throw std::runtime_error(fmt::format("subject {}: lateness: {} of {} timers never fired",
                                             name_, s.samples - inst.fired(), s.samples));
      }
      if (inst.loop()) {
        inst.poll();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }
    std::lock_guard<std::mutex> lk(hm);
    return h;
  }
  Histogram cancel_to_resume(const CellSettings& s) override {
    std::mutex m;
    std::condition_variable cv;
    bool woken = false;  // guarded by m
    auto wake = [&] {
      {
        std::lock_guard<std::mutex> lk(m);
        woken = true;
      }
      cv.notify_one();
    };
    Instance inst(d_, name_, /*serialise=*/!thread_safe(), [&](std::uint64_t) { wake(); });
    std::uint64_t handle = 0;  // written before `published`, read after it
    PingPong pp;
    Histogram h;  // blocked thread only until joined
    // A failed call on either side stops both: `failed` is raised, the other side
    // is released (published / resumed jump past every round), the error rethrown.
    std::atomic<bool> failed{false};
    std::exception_ptr error;  // written by the first side to fail, read after join
    std::mutex em;
    auto fail = [&] {
      std::lock_guard<std::mutex> lk(em);
      if (!error) error = std::current_exception();
      failed.store(true);
      pp.published.store(SIZE_MAX);
      pp.resumed.store(SIZE_MAX);
      wake();
    };
    std::thread blocked([&] {
      try {
        for (std::size_t i = 0; i < s.samples && !failed.load(); ++i) {
          handle = inst.schedule(mono_ns(), kParkedDelayNs, i);
          std::unique_lock<std::mutex> lk(m);
          pp.published.store(i + 1);  // seq_cst: hand-off of `handle`
          cv.wait(lk, [&] { return woken; });
          woken = false;
          lk.unlock();
          h.record(mono_ns() - pp.t0.load());
          pp.resumed.store(i + 1);
        }
      } catch (...) {
        fail();
      }
    });
    for (std::size_t i = 0; i < s.samples && !failed.load(); ++i) {
      pp.await_published(i);
      if (failed.load()) break;
      pp.t0.store(mono_ns());
      try {
        // TOO_LATE: the fire wakes the blocked thread itself (fired() above).
        if (inst.cancel(handle) != TLAB_CANCEL_TOO_LATE) wake();
      } catch (...) {
        fail();
      }
      pp.await_resumed(i);
    }
    blocked.join();
    if (error) std::rethrow_exception(error);
    return h;
  }

 private:
  bool thread_safe() const { return (d_.promises & TLAB_PROMISE_THREAD_SAFE) != 0; }
  const tlab_subject* driven() const { return hook_ != nullptr ? hook_->driven : nullptr; }
  decltype(BenchHook::run_loops) run_loops() const {
    return hook_ != nullptr ? hook_->run_loops : nullptr;
  }
  // single_thread: what the single-thread cost workloads measure (bench_hook.h).
  const tlab_subject& single_thread() const { return driven() != nullptr ? *driven() : d_; }
  const tlab_subject& d_;
  std::string name_;
  const BenchHook* hook_;
  bool peer_;
};

}  // namespace

std::unique_ptr<Subject> make_abi_subject(const tlab_subject& d, std::string display_name,
                                          const BenchHook* hook, bool peer) {
  count_peer_allocations();  // the built-in libuv and libevent descriptors allocate through them
  return std::make_unique<AbiSubject>(d, std::move(display_name), hook, peer);
}

}  // namespace tlab::tool::compare
