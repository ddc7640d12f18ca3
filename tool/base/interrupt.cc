// tlab/tool/base/interrupt.cc: see interrupt.h.
#include "base/interrupt.h"

#include <atomic>
#include <csignal>

namespace tlab::tool {

namespace {

std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the flag is set from a signal handler");

void on_signal(int sig) {
  g_interrupted.store(true, std::memory_order::relaxed);  // read by interrupted()
  std::signal(sig, SIG_DFL);                              // a second signal terminates
}

}  // namespace

void install_interrupt_handler() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // A parent may have started tlab with these blocked (the mask survives exec);
  // Ctrl-C must still work. A signal already pending is delivered here, so the
  // flag is set before any command runs.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

bool interrupted() {
  return g_interrupted.load(std::memory_order::relaxed);  // set by on_signal
}

void request_interrupt() { g_interrupted.store(true, std::memory_order::relaxed); }

void clear_interrupt() { g_interrupted.store(false, std::memory_order::relaxed); }

}  // namespace tlab::tool
