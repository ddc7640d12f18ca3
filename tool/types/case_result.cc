// tlab/tool/types/case_result.cc: see case_result.h.
#include "types/case_result.h"

#include <array>

namespace tlab::tool {

namespace {

constexpr std::array<std::string_view, 5> kVerdictNames{"pass", "fail", "error", "timeout",
                                                        "interrupted"};

}  // namespace

std::string_view name_of(Verdict v) { return kVerdictNames[static_cast<std::size_t>(v)]; }

std::optional<Verdict> verdict_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kVerdictNames.size(); ++i) {
    if (kVerdictNames[i] == name) return static_cast<Verdict>(i);
  }
  return std::nullopt;
}

nlohmann::ordered_json CaseResult::to_json() const {
  nlohmann::ordered_json j;
  j["verdict"] = name_of(verdict);
  j["violations"] = nlohmann::ordered_json::object();
  for (const auto& [name, v] : violations) {
    j["violations"][name] = {{"count", v.count}, {"first_example", v.first_example}};
  }
  j["counters"] = nlohmann::ordered_json::object();
  for (const auto& [name, n] : counters) j["counters"][name] = n;
  j["latency"] = nlohmann::ordered_json::object();
  for (const auto& [name, h] : latency) j["latency"][name] = h.to_json(/*exact=*/true);
  j["sanitizer_reports"] = sanitizer_reports;
  j["duration_s"] = duration_s;
  if (peak_rss_bytes > 0) j["peak_rss_bytes"] = peak_rss_bytes;
  j["message"] = message;
  if (!subject.empty()) j["subject"] = subject;
  auto& p = j["promises_judged"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < kPromiseCount; ++i) {
    if (promises.has(static_cast<Promise>(i))) p.push_back(kPromiseNames[i]);
  }
  return j;
}

CaseResult CaseResult::from_json(const nlohmann::json& j) {
  CaseResult r;
  const std::string verdict = j.at("verdict").get<std::string>();
  r.verdict = verdict_from_name(verdict).value_or(Verdict::kError);
  for (const auto& [k, v] : j.at("violations").items()) {
    r.violations[k] = ViolationRecord{v.at("count").get<std::uint64_t>(),
                                      v.at("first_example").get<std::string>()};
  }
  for (const auto& [k, v] : j.at("counters").items()) r.counters[k] = v.get<std::uint64_t>();
  for (const auto& [k, v] : j.at("latency").items()) r.latency[k] = Histogram::from_json(v);
  r.sanitizer_reports = j.at("sanitizer_reports").get<std::vector<std::string>>();
  r.duration_s = j.at("duration_s").get<double>();
  r.peak_rss_bytes = j.value("peak_rss_bytes", std::uint64_t{0});
  r.message = j.at("message").get<std::string>();
  r.subject = j.value("subject", std::string());
  for (const auto& name : j.value("promises_judged", nlohmann::json::array())) {
    if (auto p = promise_from_name(name.get<std::string>())) r.promises = r.promises | *p;
  }
  return r;
}

}  // namespace tlab::tool
