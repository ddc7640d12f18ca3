// tlab/tool/base/fmt_ns.h: a duration in nanoseconds as a short human string
// ("1.234ms", "12.5us", "3.200s", "-40ns"), for violation sentences and bounds.
//
// Cost: one fmt::format. Ground rules: a pure function.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace tlab::tool {

inline std::string fmt_ns(std::int64_t ns) {
  const double a = static_cast<double>(ns < 0 ? -ns : ns);
  const char* sign = ns < 0 ? "-" : "";
  if (a >= 1e9) return fmt::format("{}{:.3f}s", sign, a / 1e9);
  if (a >= 1e6) return fmt::format("{}{:.3f}ms", sign, a / 1e6);
  if (a >= 1e3) return fmt::format("{}{:.1f}us", sign, a / 1e3);
  return fmt::format("{}{}ns", sign, static_cast<std::int64_t>(a));
}

}  // namespace tlab::tool
