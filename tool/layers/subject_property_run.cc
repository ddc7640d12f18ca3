// tlab/tool/layers/subject_property_run.cc: see subject_property_run.h.
#include "layers/subject_property_run.h"

#include <chrono>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/fork_call.h"

namespace tlab::tool {

bool property_applies(const SubjectFacts& f) {
  return f.kind == TLAB_KIND_FACILITY && (f.promise_bits & TLAB_PROMISE_VIRTUAL) != 0;
}

CaseRecord run_property_case(const SubjectFacts& f, const SubjectPropertyOptions& options,
                             double limit_s) {
  CaseRecord c;
  c.id = "properties/" + f.name;
  c.scenario = "properties";
  c.strategy = f.name;
  c.seed = options.seed;
  c.operations = static_cast<std::uint64_t>(options.tests);
  c.budget_s = limit_s;
  c.subject_spec = f.spec;
  c.property_command = fmt::format("tlab check --subject {} --property-seed {} --property-tests {}",
                                   f.spec, options.seed, options.tests);
  c.result.subject = f.name;
  c.result.promises = f.promises;
  const int limit_ms = static_cast<int>(limit_s * 1000);
  const auto t0 = std::chrono::steady_clock::now();
  const ForkResult child = fork_call(
      [&](int fd) {
        std::string error;
        nlohmann::json out;
        const tlab_subject* d = open_subject(f.spec, error);
        if (d == nullptr) {
          out = {{"error", error}};
        } else {
          try {
            const SubjectPropertyResult r = check_subject_properties(*d, options);
            out = {{"passed", r.passed},
                   {"failure", r.failure},
                   {"broken", r.broken},
                   {"text", describe(r)},
                   {"tests_run", r.tests_run}};
          } catch (const std::exception& e) {
            out = {{"error", e.what()}};
          }
        }
        write_fd(fd, out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      },
      limit_ms);
  c.result.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const nlohmann::json j = nlohmann::json::parse(child.out, nullptr, /*allow_exceptions=*/false);
  if (child.interrupted) {
    c.result.verdict = Verdict::kInterrupted;
    c.result.message = "interrupted (Ctrl-C): the property run was stopped";
  } else if (child.timed_out) {
    c.result.verdict = Verdict::kTimeout;
    c.result.message = fmt::format(
        "the property run did not finish within {} s (a call into the subject hung?); "
        "replay: {}",
        limit_s, *c.property_command);
  } else if (!child.exited_cleanly() || j.is_discarded() || !j.is_object()) {
    ViolationRecord& v = c.result.violations["crash"];
    v.count = 1;
    v.first_example = fmt::format("the property run's process {} (replay: {})",
                                  child.describe(limit_ms), *c.property_command);
    c.result.verdict = Verdict::kFail;
    c.result.message = "crash: " + child.describe(limit_ms);
  } else if (j.contains("error")) {
    c.result.verdict = Verdict::kError;
    c.result.message = j["error"].get<std::string>();
  } else {
    const bool passed = j.at("passed").get<bool>();
    c.result.verdict = passed ? Verdict::kPass : Verdict::kFail;
    c.result.message = j.at("text").get<std::string>();
    c.result.counters["sequences"] = j.at("tests_run").get<std::uint64_t>();
    if (!passed) {
      ViolationRecord& v = c.result.violations["property"];
      v.count = 1;
      v.first_example = j.at("failure").get<std::string>();
      const std::string broken = j.at("broken").get<std::string>();
      if (!broken.empty()) c.property_broken = broken;
    }
  }
  return c;
}

}  // namespace tlab::tool
