// tlab/tool/compare/run.cc: see run.h.
#include "compare/run.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "base/interrupt.h"
#include "base/text_table.h"
#include "compare/baselines.h"
#include "compare/builtin_subject.h"
#include "compare/isolated_subject.h"
#include "compare/summary.h"
#include "compare/subject.h"
#include "subjects/subjects.h"

namespace tlab::tool::compare {
namespace {

// The requested strategies in the order asked, then (with --peers) every peer of
// the subject table, in table order, then --subject's in the order given; a
// built-in subject once, however often it is asked for. Every built-in subject is
// its row's descriptor and hook (builtin_subject.h), measured here; a plugin only
// ever in a child (isolated_subject.h).
std::vector<std::unique_ptr<Subject>> subjects_for(const CompareOptions& o) {
  std::vector<std::unique_ptr<Subject>> v;
  std::set<std::string, std::less<>> measured;
  auto builtin = [&](std::string_view name) {
    if (!measured.emplace(name).second) return;
    std::string error;
    const std::optional<BuiltinTarget> t = builtin_target(name, error);
    if (!t) throw std::runtime_error(error);
    v.push_back(make_builtin_subject(*t));
  };
  for (const std::string& name : o.strategies) builtin(name);
  if (o.peers) {
    for (const SubjectInfo& row : subjects()) {
      if (row.origin == SubjectOrigin::kPeer && row.bench != nullptr) builtin(row.name);
    }
  }
  for (const SubjectFacts& f : o.subjects) {
    if (f.builtin()) {
      builtin(f.spec);
    } else {
      v.push_back(make_isolated_subject(f));
    }
  }
  return v;
}

double safe_ratio(double a, double b) { return b > 0 ? a / b : 0; }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// median_cost: each field the median of its own rounds (a round's ns/op and wall
// ns/op need not come from the same round); ops summed.
CostResult median_cost(const std::vector<CostResult>& rounds) {
  std::vector<double> cpu, wall, bytes;
  CostResult m;
  for (const CostResult& c : rounds) {
    m.ops += c.ops;
    cpu.push_back(c.ns_per_op);
    wall.push_back(c.wall_ns_per_op);
    if (c.bytes_per_timer >= 0) bytes.push_back(c.bytes_per_timer);
  }
  m.ns_per_op = median(cpu);
  m.wall_ns_per_op = median(wall);
  m.bytes_per_timer = bytes.empty() ? -1 : median(bytes);
  return m;
}

// A cost cell across rounds: which subject, and the row its rounds fill.
struct CostCell {
  std::size_t subject = 0;
  ResultRow row;
  bool failed = false;
};

// cost_cells: every cost cell of `o`, in measuring (and reporting) order.
std::vector<CostCell> cost_cells(const CompareOptions& o,
                                 const std::vector<std::unique_ptr<Subject>>& subjects) {
  std::vector<CostCell> cells;
  for (std::size_t i = 0; i < subjects.size(); ++i) {
    for (Workload w : o.workloads) {
      if (!is_cost(w)) continue;
      const bool mt = is_mt(w);
      for (std::size_t pending : o.pending) {
        for (std::size_t t : mt ? o.threads : std::vector<std::size_t>{0}) {
          CostCell c;
          c.subject = i;
          c.row.workload = w;
          c.row.subject = subjects[i]->name();
          c.row.peer = subjects[i]->is_peer();
          c.row.pending = pending;
          c.row.threads = t;
          c.row.baseline = mt ? "cas_contended" : "cas_uncontended";
          cells.push_back(std::move(c));
        }
      }
    }
  }
  return cells;
}

}  // namespace

std::size_t CompareOptions::contended_threads() const {
  std::size_t n = 2;
  for (std::size_t t : threads) n = std::max(n, t);
  return n;
}

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

  const std::vector<std::unique_ptr<Subject>> subjects = subjects_for(o);
  for (const auto& subject : subjects) r.notes[subject->name()] = subject->note();
  std::vector<CostCell> cells = cost_cells(o, subjects);
  CellSettings contended = o.cell;
  contended.threads = o.contended_threads();
  std::vector<double> cas_un, cas_con;
  const std::size_t rounds = std::max<std::size_t>(1, o.rounds);
  for (std::size_t round = 0; round < rounds && !r.interrupted; ++round) {
    say(fmt::format("round {}/{}: baseline CAS", round + 1, rounds));
    cas_un.push_back(cas_uncontended_ns());
    cas_con.push_back(cas_contended_ns(contended));
    for (CostCell& c : cells) {
      if (interrupted()) {
        r.interrupted = true;
        break;
      }
      if (c.failed) continue;
      Subject& subject = *subjects[c.subject];
      const bool mt = is_mt(c.row.workload);
      say(fmt::format("round {}/{}: {} {} pending={}{}", round + 1, rounds, c.row.subject,
                      name_of(c.row.workload), c.row.pending,
                      mt ? fmt::format(" threads={}", c.row.threads) : ""));
      CellSettings s = o.cell;
      if (mt) s.threads = c.row.threads;
      try {
        c.row.round_costs.push_back(subject.cost(c.row.workload, c.row.pending, s));
      } catch (const CellFailed& e) {
        // A subject that failed a cell is not measured there again (a plugin that
        // crashed once would crash again, and its child costs the cell limit).
        c.failed = true;
        r.notes[c.row.subject] += fmt::format("; FAILED {}", e.what());
        r.failures.push_back(fmt::format("{}: {}", c.row.subject, e.what()));
      }
    }
  }
  r.cas_uncontended_ns = median(cas_un);
  r.cas_contended_ns = median(cas_con);
  for (CostCell& c : cells) {
    if (c.failed || c.row.round_costs.empty()) continue;
    c.row.cost = median_cost(c.row.round_costs);
    const bool mt = is_mt(c.row.workload);
    c.row.ratio =
        safe_ratio(c.row.cost.ns_per_op, mt ? r.cas_contended_ns : r.cas_uncontended_ns);
    r.rows.push_back(std::move(c.row));
  }

  for (std::size_t i = 0; i < subjects.size() && !r.interrupted; ++i) {
    Subject& subject = *subjects[i];
    for (Workload w : o.workloads) {
      if (is_cost(w)) continue;
      if (interrupted()) {
        r.interrupted = true;
        break;
      }
      say(fmt::format("{} {}", subject.name(), name_of(w)));
      ResultRow row;
      row.workload = w;
      row.subject = subject.name();
      row.peer = subject.is_peer();
      try {
        if (w == Workload::kLateness) {
          row.latency = subject.lateness(o.cell);
          row.baseline = "clock_nanosleep";
          // A subject that fires early (libevent, libuv: no never_early promise) can
          // have a negative p99 lateness; it is then not late at all, ratio 0 (the
          // histogram keeps the early fires).
          row.ratio = safe_ratio(std::max(0.0, static_cast<double>(row.latency.percentile(99))),
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
          for (std::size_t k = 0; k < kRounds && !interrupted(); ++k) {
            adjacent.merge(cv_wake_latency(round.samples));
            row.latency.merge(subject.cancel_to_resume(round));
          }
          row.baseline = "cv_wake";
          row.baseline_value_ns = static_cast<double>(adjacent.percentile(50));
          row.ratio =
              safe_ratio(static_cast<double>(row.latency.percentile(50)), row.baseline_value_ns);
        }
      } catch (const CellFailed& e) {
        r.notes[subject.name()] += fmt::format("; FAILED {}", e.what());
        r.failures.push_back(fmt::format("{}: {}", subject.name(), e.what()));
        continue;
      }
      r.rows.push_back(std::move(row));
    }
  }
  r.interrupted = r.interrupted || interrupted();
  // Rows by subject, then workload in the order asked, as the table reads best.
  std::stable_sort(r.rows.begin(), r.rows.end(), [&](const ResultRow& a, const ResultRow& b) {
    const auto rank = [&](const ResultRow& x) {
      std::size_t s = 0;
      while (s < subjects.size() && subjects[s]->name() != x.subject) ++s;
      const auto w = std::find(o.workloads.begin(), o.workloads.end(), x.workload);
      return std::pair{s, static_cast<std::size_t>(w - o.workloads.begin())};
    };
    return rank(a) < rank(b);
  });
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

std::string spread(const ResultRow& x) {
  if (x.round_costs.size() < 2) return "-";
  double lo = x.round_costs.front().ns_per_op, hi = lo;
  for (const CostResult& c : x.round_costs) {
    lo = std::min(lo, c.ns_per_op);
    hi = std::max(hi, c.ns_per_op);
  }
  return lo > 0 ? fmt::format("{:.2f}x", hi / lo) : "-";
}

}  // namespace

bool result_cell_is_text(std::size_t column) { return column < 2 || column == 10; }

std::vector<std::vector<std::string>> compare_result_cells(const CompareResults& r) {
  using Cells = std::vector<std::string>;
  std::vector<Cells> rows;
  rows.push_back({"WORKLOAD", "IMPL", "PENDING", "THREADS", "NS/OP", "SPREAD", "OPS/S", "P50_US",
                  "P99_US", "B/TIMER", "BASELINE", "RATIO"});
  for (const ResultRow& x : r.rows) {
    if (is_cost(x.workload)) {
      rows.push_back({name_of(x.workload), x.subject, std::to_string(x.pending),
                      x.threads > 0 ? std::to_string(x.threads) : "-", num(x.cost.ns_per_op),
                      spread(x), ops_per_s(x.cost.wall_ns_per_op), "-", "-",
                      x.cost.bytes_per_timer >= 0 ? num(x.cost.bytes_per_timer) : "-", x.baseline,
                      num(x.ratio) + "x"});
    } else {
      rows.push_back({name_of(x.workload), x.subject, "-", "-", "-", "-", "-",
                      us(x.latency.percentile(50)), us(x.latency.percentile(99)), "-", x.baseline,
                      num(x.ratio) + "x"});
    }
  }
  return rows;
}

std::string compare_results_table(const CompareOptions& o, const CompareResults& r) {
  std::string out = aligned_table(compare_result_cells(r), result_cell_is_text);
  for (const std::string& f : r.failures) out += "FAILED " + f + "\n";
  out += fmt::format("baselines: clock_nanosleep p50/p99 {}/{} us at slack {} ns",
                     us(r.nanosleep_process_slack.percentile(50)),
                     us(r.nanosleep_process_slack.percentile(99)), r.process_slack_ns);
  if (r.nanosleep_1ns) {
    out += fmt::format(", {}/{} us at slack 1 ns", us(r.nanosleep_1ns->percentile(50)),
                       us(r.nanosleep_1ns->percentile(99)));
  }
  out += fmt::format(
      "; cv wake p50/p99 {}/{} us; CAS {} ns uncontended, {} ns contended ({} threads)\n",
      us(r.cv_wake.percentile(50)), us(r.cv_wake.percentile(99)), num(r.cas_uncontended_ns),
      num(r.cas_contended_ns), o.contended_threads());
  out +=
      "cancel_to_resume ratios divide by a cv wake p50 measured in rounds interleaved with "
      "each subject\n";
  out += fmt::format(
      "NS/OP is CPU time per operation, the median of {} interleaved rounds (SPREAD: slowest "
      "round / fastest); {} ms of CPU per cell and round; {} samples; {:.1f} s wall\n",
      std::max<std::size_t>(1, o.rounds), o.cell.cell_ns / 1'000'000, o.cell.samples, r.wall_s);
  out += summary_text(r);
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
  settings["threads"] = o.threads;
  settings["rounds"] = std::max<std::size_t>(1, o.rounds);
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
  baselines["cas_contended_threads"] = o.contended_threads();
  J results = J::array();
  for (const ResultRow& x : r.rows) {
    J j;
    j["workload"] = name_of(x.workload);
    j["impl"] = x.subject;
    j["kind"] = x.peer ? "peer" : "strategy";
    if (is_cost(x.workload)) {
      j["pending"] = x.pending;
      j["threads"] = x.threads > 0 ? J(x.threads) : J(nullptr);
      j["round_ns_per_op"] = J::array();
      for (const CostResult& c : x.round_costs) j["round_ns_per_op"].push_back(c.ns_per_op);
      j["ops"] = x.cost.ops;
      j["ns_per_op"] = x.cost.ns_per_op;
      j["wall_ns_per_op"] = x.cost.wall_ns_per_op;
      j["ops_per_s"] = x.cost.wall_ns_per_op > 0 ? 1e9 / x.cost.wall_ns_per_op : 0.0;
      j["bytes_per_timer"] = x.cost.bytes_per_timer >= 0 ? J(x.cost.bytes_per_timer) : J(nullptr);
      j["latency"] = nullptr;
    } else {
      j["pending"] = nullptr;
      j["threads"] = nullptr;
      j["round_ns_per_op"] = nullptr;
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
  J summary = summary_json(r);
  return J{{"settings", settings},       {"baselines", baselines},
           {"results", results},         {"scaling", summary["scaling"]},
           {"versus_peers", summary["versus_peers"]}, {"notes", notes},
           {"wall_s", r.wall_s}};
}

}  // namespace tlab::tool::compare
