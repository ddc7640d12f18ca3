// The asan-ubsan preset's canaries: each mode commits one error of a class the preset
// exists to see, on values the optimiser cannot know, and must be stopped there.
//
//   overflow         a deadline computed with a plain signed add (now + delay), the
//                    bug clock.h's saturating arithmetic exists to prevent
//   use-after-free   a timer record read after its owner freed it
//
// Registered only in a build with the matching sanitizer (tests/unit/CMakeLists.txt):
// ctest requires the sanitizer's report in the output and fails the test if the
// program printed "continued", so a sanitizer that is off, or that recovers, fails it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "tlab/clock.h"

namespace {

int overflow(const char* delay_text) {
  const tlab::Instant now = tlab::Instant::max();
  const std::int64_t delay = std::strtoll(delay_text, nullptr, 10);
  // The seeded bug: what clock.h's Instant + Duration does without saturation.
  const std::int64_t deadline = now.ns() + delay;
  std::printf("continued: deadline %lld\n", static_cast<long long>(deadline));
  return 0;
}

int use_after_free(const char* delay_text) {
  struct Record {
    std::int64_t deadline_ns;
  };
  auto* record = new Record{std::strtoll(delay_text, nullptr, 10)};
  delete record;
  const std::int64_t seen = record->deadline_ns;  // the seeded bug
  std::printf("continued: read %lld\n", static_cast<long long>(seen));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "overflow") == 0) return overflow(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "use-after-free") == 0) return use_after_free(argv[2]);
  std::fprintf(stderr, "usage: sanitizer_canary overflow|use-after-free <delay_ns>\n");
  return 2;
}
