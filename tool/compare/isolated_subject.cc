// tlab/tool/compare/isolated_subject.cc: see isolated_subject.h.
#include "compare/isolated_subject.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/fork_call.h"
#include "compare/subjects.h"

namespace tlab::tool::compare {
namespace {

// A cell builds up to 10M timers and then measures for cell_ns of CPU; ten
// minutes is far beyond any healthy cell and short of CI's patience.
constexpr int kCellLimitMs = 600'000;

class IsolatedSubject final : public Subject {
 public:
  explicit IsolatedSubject(SubjectFacts f) : f_(std::move(f)) {}
  std::string name() const override { return f_.name; }
  bool is_peer() const override { return true; }
  std::string note() const override {
    return fmt::format("plugin {}:{} (measured in a child process per cell): {}", f_.library,
                       f_.entry, f_.summary);
  }
  CostResult cost(Workload w, std::size_t pending, const CellSettings& s) override {
    const nlohmann::json j =
        in_child(fmt::format("{} at {} pending", name_of(w), pending),
                 [&](Subject& sub) {
                   const CostResult r = sub.cost(w, pending, s);
                   return nlohmann::json{{"ops", r.ops},
                                         {"ns_per_op", r.ns_per_op},
                                         {"wall_ns_per_op", r.wall_ns_per_op},
                                         {"bytes_per_timer", r.bytes_per_timer}};
                 });
    CostResult r;
    r.ops = j.at("ops").get<std::uint64_t>();
    r.ns_per_op = j.at("ns_per_op").get<double>();
    r.wall_ns_per_op = j.at("wall_ns_per_op").get<double>();
    r.bytes_per_timer = j.at("bytes_per_timer").get<double>();
    return r;
  }
  Histogram lateness(const CellSettings& s) override {
    return Histogram::from_json(
        in_child("lateness", [&](Subject& sub) { return json_of(sub.lateness(s)); }));
  }
  Histogram cancel_to_resume(const CellSettings& s) override {
    return Histogram::from_json(in_child(
        "cancel_to_resume", [&](Subject& sub) { return json_of(sub.cancel_to_resume(s)); }));
  }

 private:
  static nlohmann::json json_of(const Histogram& h) {
    return nlohmann::json::parse(h.to_json(/*exact=*/true).dump());
  }

  // in_child: runs measure(subject) in a child that opens the plugin; its JSON,
  // or CellFailed naming the cell and what happened.
  template <class Measure>
  nlohmann::json in_child(const std::string& cell, Measure&& measure) {
    const ForkResult child = fork_call(
        [&](int fd) {
          std::string error;
          const tlab_subject* d = open_subject(f_.spec, error);
          nlohmann::json out;
          if (d == nullptr) {
            out = {{"error", error}};
          } else {
            try {
              std::unique_ptr<Subject> sub = make_abi_subject(*d, f_.name);
              out = {{"result", measure(*sub)}};
            } catch (const std::exception& e) {
              out = {{"error", e.what()}};
            }
          }
          write_fd(fd, out.dump());
        },
        kCellLimitMs);
    const nlohmann::json j =
        nlohmann::json::parse(child.out, nullptr, /*allow_exceptions=*/false);
    if (!child.exited_cleanly() || j.is_discarded() || !j.is_object()) {
      throw CellFailed(fmt::format("{}: {}", cell, child.describe(kCellLimitMs)));
    }
    if (j.contains("error")) {
      throw CellFailed(fmt::format("{}: {}", cell, j["error"].get<std::string>()));
    }
    return j.at("result");
  }

  SubjectFacts f_;
};

}  // namespace

std::unique_ptr<Subject> make_isolated_subject(const SubjectFacts& facts) {
  return std::make_unique<IsolatedSubject>(facts);
}

}  // namespace tlab::tool::compare
