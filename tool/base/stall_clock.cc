// tlab/tool/base/stall_clock.cc: see stall_clock.h.
#include "base/stall_clock.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>

namespace tlab::tool {

namespace {

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// run_delay_of: field 2 of /proc/<pid>/task/<tid>/schedstat ("on-cpu run-delay
// timeslices", nanoseconds); -1 if it cannot be read (the thread is gone, or the
// kernel has no schedstat).
std::int64_t run_delay_of(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[96];
  ssize_t n = 0;
  do {
    n = ::read(fd, buf, sizeof buf - 1);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  char* end = nullptr;
  std::strtoll(buf, &end, 10);  // time on the CPU
  if (end == buf) return -1;
  char* second = end;
  const long long delay = std::strtoll(second, &end, 10);
  return end == second ? -1 : static_cast<std::int64_t>(delay);
}

// for_each_task: calls f(tid, run_delay) for every thread of `pid` (0: this
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
    const std::int64_t delay = run_delay_of(dir + "/" + e->d_name + "/schedstat");
    if (delay < 0) continue;
    any = true;
    f(static_cast<std::uint32_t>(std::strtoul(e->d_name, nullptr, 10)), delay);
  }
  ::closedir(d);
  return any;
}

}  // namespace

void StallClock::start() {
  if (sampler_.joinable()) return;
  stop_.store(false);
  last_.clear();
  last_wall_ = steady_ns();
  read_delays(last_);
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

bool StallClock::read_delays(std::unordered_map<std::uint64_t, std::int64_t>& out) {
  std::vector<pid_t> pids{0};
  {
    std::lock_guard lk(pids_mu_);
    pids.insert(pids.end(), pids_.begin(), pids_.end());
  }
  bool self_ok = false;
  for (const pid_t pid : pids) {
    const bool ok = for_each_task(pid, [&](std::uint32_t tid, std::int64_t delay) {
      out[(std::uint64_t{static_cast<std::uint32_t>(pid)} << 32) | tid] = delay;
    });
    if (pid == 0) self_ok = ok;
  }
  return self_ok;
}

void StallClock::sample(std::int64_t now_ns, std::int64_t oversleep_ns) {
  std::int64_t grew = 0;
  std::unordered_map<std::uint64_t, std::int64_t> now_delays;
  if (schedstat_.load(std::memory_order::relaxed) && read_delays(now_delays)) {
    for (const auto& [key, delay] : now_delays) {
      const auto it = last_.find(key);
      // A thread born since the last sample has waited at most since its birth.
      grew = std::max(grew, delay - (it == last_.end() ? 0 : it->second));
    }
    last_ = std::move(now_delays);
  } else {
    schedstat_.store(false, std::memory_order::relaxed);
    grew = oversleep_ns;
  }
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
