// tlab/tool/base/stall_clock.cc: see stall_clock.h.
#include "base/stall_clock.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tlab::tool {

namespace {

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// read_small: the start of a small /proc file, NUL-terminated; false if it cannot
// be read (the thread is gone, or the kernel lacks the file).
template <std::size_t N>
bool read_small(const std::string& path, char (&buf)[N]) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = 0;
  do {
    n = ::read(fd, buf, N - 1);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

// read_thread: fields 1 and 2 of <dir>/schedstat ("on-cpu run-delay timeslices",
// nanoseconds) and whether <dir>/stat's state (the field after the command's
// closing parenthesis) is R or D; false if schedstat cannot be read.
bool read_thread(const std::string& dir, StallClock::ThreadReading& r) {
  char buf[128];
  if (!read_small(dir + "/schedstat", buf)) return false;
  char* end = nullptr;
  const long long cpu = std::strtoll(buf, &end, 10);
  if (end == buf) return false;
  char* second = end;
  const long long delay = std::strtoll(second, &end, 10);
  if (end == second) return false;
  r.cpu_ns = cpu;
  r.run_delay_ns = delay;
  char stat[512];
  r.runnable = false;
  r.held = false;
  if (read_small(dir + "/stat", stat)) {
    const char* paren = std::strrchr(stat, ')');
    if (paren != nullptr && paren[1] == ' ') {
      r.runnable = paren[2] == 'R';
      r.held = paren[2] == 'D';
    }
  }
  return true;
}

// for_each_task: calls f(tid, reading) for every thread of `pid` (0: this
// process); false if the task directory cannot be read or no thread had schedstat.
template <class F>
bool for_each_task(pid_t pid, F&& f) {
  const std::string dir =
      pid == 0 ? std::string("/proc/self/task") : "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return false;
  bool any = false;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    StallClock::ThreadReading r;
    if (!read_thread(dir + "/" + e->d_name, r)) continue;
    any = true;
    f(static_cast<std::uint32_t>(std::strtoul(e->d_name, nullptr, 10)), r);
  }
  ::closedir(d);
  return any;
}

}  // namespace

void StallClock::start() {
  if (sampler_.joinable()) return;
  stop_.store(false);
  past_.clear();
  last_wall_ = steady_ns();
  std::vector<ThreadReading> first;
  read_threads(first);
  for (const ThreadReading& r : first) past_[r.key] = ThreadPast{r, 0};
  sampler_ = std::thread([this] { run(); });
}

void StallClock::stop() {
  if (!sampler_.joinable()) return;
  stop_.store(true);
  sampler_.join();
}

void StallClock::watch_process(pid_t pid) {
  std::lock_guard lk(pids_mu_);
  if (std::find(pids_.begin(), pids_.end(), pid) == pids_.end()) pids_.push_back(pid);
}

bool StallClock::read_threads(std::vector<ThreadReading>& out) {
  std::vector<pid_t> pids{0};
  {
    std::lock_guard lk(pids_mu_);
    pids.insert(pids.end(), pids_.begin(), pids_.end());
  }
  bool self_ok = false;
  for (const pid_t pid : pids) {
    const bool ok = for_each_task(pid, [&](std::uint32_t tid, ThreadReading r) {
      r.key = (std::uint64_t{static_cast<std::uint32_t>(pid)} << 32) | tid;
      out.push_back(r);
    });
    if (pid == 0) self_ok = ok;
  }
  return self_ok;
}

void StallClock::sample(std::int64_t now_ns, std::int64_t oversleep_ns) {
  std::vector<ThreadReading> threads;
  if (schedstat_.load(std::memory_order::relaxed) && read_threads(threads)) {
    account(now_ns, threads);
  } else {
    schedstat_.store(false, std::memory_order::relaxed);
    record(now_ns, oversleep_ns);
  }
}

void StallClock::account(std::int64_t now_ns, const std::vector<ThreadReading>& threads) {
  const std::int64_t period = std::max<std::int64_t>(0, now_ns - last_wall_);
  std::int64_t grew = 0;
  std::unordered_map<std::uint64_t, ThreadPast> next;
  next.reserve(threads.size());
  for (const ThreadReading& r : threads) {
    const auto it = past_.find(r.key);
    // A thread born since the last sample has waited at most since its birth.
    ThreadPast p =
        it == past_.end() ? ThreadPast{ThreadReading{r.key, 0, 0, false, false}, 0} : it->second;
    std::int64_t own = 0;
    if (p.last.runnable && r.runnable && r.cpu_ns == p.last.cpu_ns &&
        r.run_delay_ns == p.last.run_delay_ns) {
      // Runnable throughout and never on a CPU: waiting, and the kernel has not
      // added this wait to run_delay yet.
      own = period;
      p.counted_wait += period;
    } else if (p.last.held && r.held && r.cpu_ns == p.last.cpu_ns) {
      // Held by the kernel throughout (state D at both samples, no CPU time): it
      // could not run, and run_delay will never count it.
      own = period;
    } else {
      // The waits that ended in the period, less the part already counted while
      // it was still going on.
      own = std::max<std::int64_t>(0, r.run_delay_ns - p.last.run_delay_ns - p.counted_wait);
      p.counted_wait = 0;
    }
    grew = std::max(grew, own);
    p.last = r;
    next[r.key] = p;
  }
  past_ = std::move(next);
  record(now_ns, grew);
}

void StallClock::record(std::int64_t now_ns, std::int64_t grew) {
  const std::int64_t period = std::max<std::int64_t>(0, now_ns - last_wall_);
  last_wall_ = std::max(last_wall_, now_ns);
  const std::size_t n = count_.load(std::memory_order::relaxed);  // sampler only writes it
  // Full: later stall is not subtracted. No case gets that far: the longest budget
  // a scenario may set is 600 s, and kHistory covers 655 s.
  if (n == kHistory) return;
  const std::int64_t before = n == 0 ? 0 : history_[n - 1].stall;
  history_[n] = {now_ns, before + std::clamp<std::int64_t>(grew, 0, period)};
  count_.store(n + 1, std::memory_order::release);  // pairs with the readers' acquire
}

std::int64_t StallClock::stall_at(std::int64_t t) const {
  const std::size_t n = count_.load(std::memory_order::acquire);  // pairs with sample()
  const Entry* first = history_.data();
  const Entry* last = first + n;
  const Entry* it =
      std::upper_bound(first, last, t, [](std::int64_t v, const Entry& e) { return v < e.wall; });
  return it == first ? 0 : (it - 1)->stall;
}

std::int64_t StallClock::stalled_ns() const {
  const std::size_t n = count_.load(std::memory_order::acquire);  // pairs with sample()
  return n == 0 ? 0 : history_[n - 1].stall;
}

std::int64_t StallClock::effective_ns(std::int64_t t0_ns, std::int64_t t1_ns) const {
  if (t1_ns <= t0_ns) return 0;
  const std::int64_t stalled = stall_at(t1_ns) - stall_at(t0_ns);
  return std::max<std::int64_t>(0, (t1_ns - t0_ns) - stalled);
}

void StallClock::run() {
  std::int64_t next = steady_ns() + kPeriodNs;
  while (!stop_.load()) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(kPeriodNs));
    const std::int64_t now = steady_ns();
    sample(now, std::max<std::int64_t>(0, now - next));
    next = now + kPeriodNs;
  }
}

StallClock& stall_clock() {
  static StallClock clock;
  return clock;
}

}  // namespace tlab::tool
