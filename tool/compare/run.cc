// tlab/tool/compare/run.cc: see run.h.
#include "compare/run.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/interrupt.h"
#include "compare/baselines.h"
#include "compare/isolated_subject.h"
#include "compare/subjects.h"
#include "compare/subject.h"
#include "subjects/subjects.h"

namespace tlab::tool::compare {
namespace {

// The requested strategies in the order asked, then (with --peers) every peer of
// the subject table, in table order.
std::vector<std::unique_ptr<Subject>> subjects_for(const CompareOptions& o) {
  std::vector<std::unique_ptr<Subject>> v;
  for (const std::string& name : o.strategies) {
    const SubjectInfo* row = find_subject(name);
    if (row != nullptr && row->origin == SubjectOrigin::kStrategy && row->compare != nullptr) {
      if (auto s = row->compare(row->name)) v.push_back(std::move(s));
    }
  }
  for (const std::string& name : o.engines) {
    if (const SubjectInfo* row = find_subject(name); row != nullptr && row->compare != nullptr) {
      v.push_back(row->compare(row->name));
    }
  }
  if (o.peers) {
    for (const SubjectInfo& row : subjects()) {
      if (row.origin == SubjectOrigin::kPeer && row.compare != nullptr) {
        v.push_back(row.compare(row.name));
      }
    }
  }
  // --subject: through the subject ABI. A built-in row's descriptor is ours and
  // is measured here; a plugin only ever in a child (isolated_subject.h).
  for (const SubjectFacts& f : o.subjects) {
    // An engine row with its own compare adapter (sharded_service) is measured by it.
    if (const SubjectInfo* row = find_subject(f.name);
        row != nullptr && row->origin == SubjectOrigin::kEngine && row->compare != nullptr) {
      v.push_back(row->compare(row->name));
      continue;
    }
    if (!f.builtin()) {
      v.push_back(make_isolated_subject(f));
      continue;
    }
    std::string error;
    const tlab_subject* d = open_subject(f.spec, error);
    if (d == nullptr) throw std::runtime_error(error);
    v.push_back(make_abi_subject(*d, "abi:" + f.name));
  }
  return v;
}

double safe_ratio(double a, double b) { return b > 0 ? a / b : 0; }

}  // namespace

CompareResults run_compare(const CompareOptions& o,
                           const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  const std::int64_t w0 = mono_ns();
  CompareResults r;
  r.process_slack_ns = timer_slack_ns();
  r.run_slack_ns = r.process_slack_ns;
  say("baseline: clock_nanosleep");
  r.nanosleep_process_slack = clock_nanosleep_lateness(o.cell.samples);
  if (o.slack_1ns) {
    if (!set_timer_slack_ns(1)) throw std::runtime_error("prctl(PR_SET_TIMERSLACK, 1) failed");
    r.run_slack_ns = timer_slack_ns();
    say("baseline: clock_nanosleep at 1 ns slack");
    r.nanosleep_1ns = clock_nanosleep_lateness(o.cell.samples);
  }
  say("baseline: condition-variable wake");
  r.cv_wake = cv_wake_latency(o.cell.samples);
  say("baseline: CAS");
  r.cas_uncontended_ns = cas_uncontended_ns();
  r.cas_contended_ns = cas_contended_ns(o.cell);

  for (auto& subject : subjects_for(o)) {
    r.notes[subject->name()] = subject->note();
    for (Workload w : o.workloads) {
      if (interrupted()) {
        r.interrupted = true;
        break;
      }
      if (is_cost(w)) {
        for (std::size_t pending : o.pending) {
          if (interrupted()) break;
          say(fmt::format("{} {} pending={}", subject->name(), name_of(w), pending));
          ResultRow row;
          row.workload = w;
          row.subject = subject->name();
          row.peer = subject->is_peer();
          row.pending = pending;
          try {
            row.cost = subject->cost(w, pending, o.cell);
          } catch (const CellFailed& e) {
            r.notes[subject->name()] += fmt::format("; FAILED {}", e.what());
            r.failures.push_back(fmt::format("{}: {}", subject->name(), e.what()));
            continue;
          }
          const bool mt = w == Workload::kMtScheduleCancel;
          row.baseline = mt ? "cas_contended" : "cas_uncontended";
          row.ratio =
              safe_ratio(row.cost.ns_per_op, mt ? r.cas_contended_ns : r.cas_uncontended_ns);
          r.rows.push_back(std::move(row));
        }
      } else {
        say(fmt::format("{} {}", subject->name(), name_of(w)));
        ResultRow row;
        row.workload = w;
        row.subject = subject->name();
        row.peer = subject->is_peer();
        try {
        if (w == Workload::kLateness) {
          row.latency = subject->lateness(o.cell);
          row.baseline = "clock_nanosleep";
          row.ratio = safe_ratio(static_cast<double>(row.latency.percentile(99)),
                                 static_cast<double>(r.nanosleep_run().percentile(99)));
        } else {
          // The cv baseline is measured interleaved with the subject, in rounds:
          // a wake latency swings with the machine's load (2-4x within a minute
          // on a shared 2-core box), so a ratio against one measurement at the
          // start of the run would mostly measure when the subject happened to run.
          constexpr std::size_t kRounds = 10;
          CellSettings round = o.cell;
          round.samples = std::max<std::size_t>(1, o.cell.samples / kRounds);
          Histogram adjacent;
          for (std::size_t i = 0; i < kRounds && !interrupted(); ++i) {
            adjacent.merge(cv_wake_latency(round.samples));
            row.latency.merge(subject->cancel_to_resume(round));
          }
          row.baseline = "cv_wake";
          row.baseline_value_ns = static_cast<double>(adjacent.percentile(50));
          row.ratio =
              safe_ratio(static_cast<double>(row.latency.percentile(50)), row.baseline_value_ns);
        }
        } catch (const CellFailed& e) {
          r.notes[subject->name()] += fmt::format("; FAILED {}", e.what());
          r.failures.push_back(fmt::format("{}: {}", subject->name(), e.what()));
          continue;
        }
        r.rows.push_back(std::move(row));
      }
    }
    if (r.interrupted || interrupted()) {
      r.interrupted = true;
      break;
    }
  }
  if (o.slack_1ns && r.process_slack_ns > 0) set_timer_slack_ns(r.process_slack_ns);
  r.wall_s = static_cast<double>(mono_ns() - w0) / 1e9;
  return r;
}

namespace {

std::string us(std::int64_t ns) { return fmt::format("{:.1f}", static_cast<double>(ns) / 1000.0); }

std::string num(double v) {
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

std::string ops_per_s(double wall_ns_per_op) {
  const double v = wall_ns_per_op > 0 ? 1e9 / wall_ns_per_op : 0;
  if (v >= 1e6) return fmt::format("{:.1f}M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f}k", v / 1e3);
  return fmt::format("{:.0f}", v);
}

}  // namespace

std::vector<std::vector<std::string>> compare_result_cells(const CompareResults& r) {
  using Cells = std::vector<std::string>;
  std::vector<Cells> rows;
  rows.push_back({"WORKLOAD", "IMPL", "PENDING", "NS/OP", "OPS/S", "P50_US", "P99_US", "B/TIMER",
                  "BASELINE", "RATIO"});
  for (const ResultRow& x : r.rows) {
    if (is_cost(x.workload)) {
      rows.push_back({name_of(x.workload), x.subject, std::to_string(x.pending),
                      num(x.cost.ns_per_op), ops_per_s(x.cost.wall_ns_per_op), "-", "-",
                      x.cost.bytes_per_timer >= 0 ? num(x.cost.bytes_per_timer) : "-", x.baseline,
                      num(x.ratio) + "x"});
    } else {
      rows.push_back({name_of(x.workload), x.subject, "-", "-", "-", us(x.latency.percentile(50)),
                      us(x.latency.percentile(99)), "-", x.baseline, num(x.ratio) + "x"});
    }
  }
  return rows;
}

std::string compare_results_table(const CompareOptions& o, const CompareResults& r) {
  using Cells = std::vector<std::string>;
  const std::vector<Cells> rows = compare_result_cells(r);
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const Cells& c : rows) {
    for (std::size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], c[i].size());
  }
  std::string out;
  for (const Cells& c : rows) {
    std::string line;
    for (std::size_t i = 0; i < c.size(); ++i) {
      const bool left = i < 2 || i == 8;
      line += left ? fmt::format("{:<{}}", c[i], width[i]) : fmt::format("{:>{}}", c[i], width[i]);
      line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  for (const std::string& f : r.failures) out += "FAILED " + f + "\n";
  out += fmt::format("baselines: clock_nanosleep p50/p99 {}/{} us at slack {} ns",
                     us(r.nanosleep_process_slack.percentile(50)),
                     us(r.nanosleep_process_slack.percentile(99)), r.process_slack_ns);
  if (r.nanosleep_1ns) {
    out += fmt::format(", {}/{} us at slack 1 ns", us(r.nanosleep_1ns->percentile(50)),
                       us(r.nanosleep_1ns->percentile(99)));
  }
  out += fmt::format("; cv wake p50/p99 {}/{} us; CAS {} ns uncontended, {} ns contended\n",
                     us(r.cv_wake.percentile(50)), us(r.cv_wake.percentile(99)),
                     num(r.cas_uncontended_ns), num(r.cas_contended_ns));
  out +=
      "cancel_to_resume ratios divide by a cv wake p50 measured in rounds interleaved with "
      "each subject\n";
  out += fmt::format(
      "NS/OP is CPU time per operation; {} ms of CPU per cell; {} samples; {:.1f} s wall\n",
      o.cell.cell_ns / 1'000'000, o.cell.samples, r.wall_s);
  return out;
}

nlohmann::ordered_json compare_results_json(const CompareOptions& o, const CompareResults& r) {
  using J = nlohmann::ordered_json;
  J settings;
  settings["workloads"] = J::array();
  for (Workload w : o.workloads) settings["workloads"].push_back(name_of(w));
  settings["strategies"] = o.strategies;
  settings["peers"] = o.peers;
  settings["pending"] = o.pending;
  settings["cell_ms"] = o.cell.cell_ns / 1'000'000;
  settings["samples"] = o.cell.samples;
  settings["threads"] = o.cell.threads;
  settings["slack_1ns"] = o.slack_1ns;
  settings["run_timer_slack_ns"] = r.run_slack_ns;
  settings["wheel_tick_ns"] = 1'000'000;
  J baselines;
  baselines["clock_nanosleep"] = {{"timer_slack_ns", r.process_slack_ns},
                                  {"lateness", r.nanosleep_process_slack.to_json()}};
  if (r.nanosleep_1ns) {
    baselines["clock_nanosleep_slack_1ns"] = {{"timer_slack_ns", 1},
                                              {"lateness", r.nanosleep_1ns->to_json()}};
  }
  baselines["cv_wake"] = r.cv_wake.to_json();
  baselines["cas_uncontended_ns"] = r.cas_uncontended_ns;
  baselines["cas_contended_ns"] = r.cas_contended_ns;
  J results = J::array();
  for (const ResultRow& x : r.rows) {
    J j;
    j["workload"] = name_of(x.workload);
    j["impl"] = x.subject;
    j["kind"] = x.peer ? "peer" : "strategy";
    if (is_cost(x.workload)) {
      j["pending"] = x.pending;
      j["ops"] = x.cost.ops;
      j["ns_per_op"] = x.cost.ns_per_op;
      j["wall_ns_per_op"] = x.cost.wall_ns_per_op;
      j["ops_per_s"] = x.cost.wall_ns_per_op > 0 ? 1e9 / x.cost.wall_ns_per_op : 0.0;
      j["bytes_per_timer"] = x.cost.bytes_per_timer >= 0 ? J(x.cost.bytes_per_timer) : J(nullptr);
      j["latency"] = nullptr;
    } else {
      j["pending"] = nullptr;
      j["ops"] = x.latency.count();
      j["ns_per_op"] = nullptr;
      j["wall_ns_per_op"] = nullptr;
      j["ops_per_s"] = nullptr;
      j["bytes_per_timer"] = nullptr;
      j["latency"] = x.latency.to_json();
    }
    j["baseline"] = x.baseline;
    if (x.baseline_value_ns >= 0) j["baseline_value_ns"] = x.baseline_value_ns;
    j["ratio"] = x.ratio;
    results.push_back(std::move(j));
  }
  J notes = J::object();
  for (const auto& [k, v] : r.notes) notes[k] = v;
  return J{{"settings", settings},
           {"baselines", baselines},
           {"results", results},
           {"notes", notes},
           {"wall_s", r.wall_s}};
}

}  // namespace tlab::tool::compare
