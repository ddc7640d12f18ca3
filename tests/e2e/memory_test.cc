// End-to-end memory bound of a case (docs/design.md, "Resources"): each engine runs
// its fixture in memory/ at N and at 16N operations through the real tlab binary,
// and the case child's peak RSS (the report's peak_rss_bytes) may grow by at most
// kBytesPerOp per extra operation plus kSlack. A driver that keeps a record, log
// entry or sample per operation (the old engines kept 50 to 500 bytes per
// operation) fails; the bound is on operation counts, never on time.
//
// Not under TSan (no tsan label; under_tsan() skips too) nor ASan: shadow memory
// scales RSS, and ASan's quarantine keeps freed records resident by design.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "base/sanitizer.h"
#include "support/cli_run.h"

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kUnderAsan = true;
#else
constexpr bool kUnderAsan = false;
#endif
#else
constexpr bool kUnderAsan = false;
#endif

namespace fs = std::filesystem;

// N: large enough that per-operation records (>= 48 bytes each in the old drivers)
// show as >= 48 * 15N = 21.6 MB, small enough that 16N runs in seconds.
constexpr std::uint64_t kN = 30000;
// What an operation may still cost: histograms, counters and live records are
// O(1) in the operation count, so the slope is ~0; 16 bytes absorbs allocator
// noise and is 3x below the smallest per-operation record the drivers ever kept.
constexpr std::uint64_t kBytesPerOp = 16;
// Fixed slack: allocator arenas, thread stacks touched deeper, the strategy's
// queue at its high-water mark (bounded by run.max_pending, not by N).
constexpr std::uint64_t kSlack = 4u << 20;

// peak_rss: runs `fixture` with `ops` operations (and `strategy`, if given) and
// returns the case's peak_rss_bytes from the report.
std::uint64_t peak_rss(const std::string& fixture, std::uint64_t ops, const std::string& strategy) {
  static const fs::path dir =
      fs::temp_directory_path() / ("tlab_memory_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path report = dir / "report.json";
  std::vector<std::string> args{"run",          "memory/" + fixture, "--operations",
                                std::to_string(ops), "--report",   report.string()};
  if (!strategy.empty()) args.insert(args.end(), {"--strategy", strategy});
  const auto r = tlab::testing::run_tlab(TLAB_BIN, args, dir, TLAB_E2E_DIR);
  EXPECT_EQ(r.code, 0) << fixture << " at " << ops << ":\n" << r.out << r.err;
  const auto j = nlohmann::json::parse(tlab::testing::slurp(report));
  const auto& c = j.at("cases").at(0);
  EXPECT_EQ(c.at("verdict"), "pass") << c.dump(2);
  return c.at("peak_rss_bytes").get<std::uint64_t>();
}

struct Engine {
  const char* fixture;
  const char* strategy;  // empty: the fixture's
};

class MemoryTest : public ::testing::TestWithParam<Engine> {};

// Peak RSS grows by less than kBytesPerOp per operation from N to 16N operations.
TEST_P(MemoryTest, PeakRssDoesNotGrowWithOperations) {
  if (tlab::tool::under_tsan() || kUnderAsan) GTEST_SKIP() << "sanitizer shadow memory scales RSS";
  const Engine e = GetParam();
  const std::uint64_t small = peak_rss(e.fixture, kN, e.strategy);
  const std::uint64_t big = peak_rss(e.fixture, 16 * kN, e.strategy);
  const std::uint64_t allowed = kBytesPerOp * 15 * kN + kSlack;
  const std::uint64_t growth = big > small ? big - small : 0;
  EXPECT_LT(growth, allowed) << e.fixture << " " << e.strategy << ": peak RSS " << small
                             << " B at " << kN << " operations, " << big << " B at " << 16 * kN
                             << " (" << static_cast<double>(growth) / (15.0 * kN)
                             << " bytes per extra operation)";
}

INSTANTIATE_TEST_SUITE_P(
    Engines, MemoryTest,
    ::testing::Values(Engine{"service_tasks.json", "binary_heap"},
                      Engine{"service_tasks.json", "hierarchical_wheel"},
                      Engine{"service_tombstones.json", "binary_heap"},
                      Engine{"service_waiters.json", ""}, Engine{"executor.json", ""},
                      Engine{"timed_mutex.json", ""}, Engine{"wait_group.json", ""},
                      Engine{"pool.json", ""}, Engine{"coroutine_loop.json", ""}),
    [](const ::testing::TestParamInfo<Engine>& i) {
      std::string name = std::string(i.param.fixture) + "_" + i.param.strategy;
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      while (!name.empty() && name.back() == '_') name.pop_back();
      return name;
    });

}  // namespace
