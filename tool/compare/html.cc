// tlab/tool/compare/html.cc: see html.h.
#include "compare/html.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/summary.h"
#include "report/junit.h"
#include "report/svg_chart.h"

namespace tlab::tool::compare {
namespace {

// winner: the non-peer row of `rows` with the least `key`; nullptr when none.
template <typename Key>
const ResultRow* winner(const std::vector<const ResultRow*>& rows, Key key) {
  const ResultRow* best = nullptr;
  for (const ResultRow* x : rows) {
    if (!x->peer && (best == nullptr || key(*x) < key(*best))) best = x;
  }
  return best;
}

// runner_up_ratio: how much more the best non-peer row other than `best` costs.
template <typename Key>
double runner_up_ratio(const std::vector<const ResultRow*>& rows, const ResultRow* best, Key key) {
  double next = 0;
  for (const ResultRow* x : rows) {
    if (x->peer || x == best) continue;
    next = next == 0 ? key(*x) : std::min(next, key(*x));
  }
  return key(*best) > 0 && next > 0 ? next / key(*best) : 0;
}

// conclusion_of: "which strategy for which workload", from the rows of workload `w`:
// for a cost workload the strategy with the least CPU ns per op at each pending count,
// consecutive counts with the same winner joined into one range; for a latency
// workload the one with the least p99. Peers are compared against, never chosen.
// an mt workload is judged at the most threads measured (the scaling table,
// summary.h, has the rest).
std::string conclusion_of(Workload w, const CompareResults& r) {
  if (is_cost(w)) {
    std::size_t most = 0;
    for (const ResultRow& x : r.rows) {
      if (x.workload == w) most = std::max(most, x.threads);
    }
    std::map<std::size_t, std::vector<const ResultRow*>> by_pending;
    for (const ResultRow& x : r.rows) {
      if (x.workload == w && x.threads == most) by_pending[x.pending].push_back(&x);
    }
    std::vector<std::string> parts;
    std::string current;
    std::size_t from = 0, to = 0;
    double margin = 0;
    auto flush = [&] {
      if (current.empty()) return;
      parts.push_back(
          fmt::format("{} at {}{} pending ({:.1f}x cheaper than the next strategy at "
                      "{})",
                      current, from, from == to ? "" : fmt::format("..{}", to), margin, to));
    };
    for (const auto& [pending, rows] : by_pending) {
      const auto cost = [](const ResultRow& x) { return x.cost.ns_per_op; };
      const ResultRow* best = winner(rows, cost);
      if (best == nullptr) continue;
      if (best->subject != current) {
        flush();
        current = best->subject;
        from = pending;
      }
      to = pending;
      margin = runner_up_ratio(rows, best, cost);
    }
    flush();
    return parts.empty() ? "no strategy measured"
                         : fmt::format("least CPU per operation{}: {}",
                                       most > 0 ? fmt::format(" on {} threads", most) : "",
                                       fmt::join(parts, "; "));
  }
  std::vector<const ResultRow*> rows;
  for (const ResultRow& x : r.rows) {
    if (x.workload == w && x.latency.count() > 0) rows.push_back(&x);
  }
  const auto p99 = [](const ResultRow& x) { return static_cast<double>(x.latency.percentile(99)); };
  const ResultRow* best = winner(rows, p99);
  if (best == nullptr) return "no strategy measured";
  return fmt::format("lowest p99: {} ({:.1f} us, {:.1f}x lower than the next strategy)",
                     best->subject, p99(*best) / 1000.0, runner_up_ratio(rows, best, p99));
}

std::string results_table(const CompareResults& r) {
  const auto cells = compare_result_cells(r);
  std::string out = "<table id=\"results\"><thead><tr>";
  for (const std::string& h : cells.front()) out += "<th>" + xml_escape(h) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (std::size_t i = 1; i < cells.size(); ++i) {
    const ResultRow& x = r.rows[i - 1];
    out += fmt::format("<tr class=\"{}\">", x.peer ? "peer" : "strategy");
    for (std::size_t c = 0; c < cells[i].size(); ++c) {
      // Text columns left, numbers right (as the terminal table aligns them).
      const bool left = result_cell_is_text(c);
      out += fmt::format("<td{}>{}</td>", left ? "" : " class=\"num\"", xml_escape(cells[i][c]));
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  for (const std::string& f : r.failures)
    out += "<p class=\"failed\">FAILED " + xml_escape(f) + "</p>\n";
  return out;
}

}  // namespace

std::string compare_results_html(const CompareOptions& o, const CompareResults& r,
                                 const Environment& env) {
  std::string body;
  std::string conclusions =
      "<table id=\"conclusion\"><thead><tr><th>workload</th><th>which "
      "strategy</th></tr></thead><tbody>\n";
  for (Workload w : o.workloads) {
    conclusions += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", name_of(w),
                               xml_escape(conclusion_of(w, r)));
    if (is_cost(w)) {
      std::vector<ChartSeries> series;
      for (const ResultRow& x : r.rows) {
        if (x.workload != w) continue;
        // One line per subject, and per thread count when several were measured.
        const std::string name = x.threads > 0 && o.threads.size() > 1
                                     ? fmt::format("{} ({} threads)", x.subject, x.threads)
                                     : x.subject;
        auto it = std::find_if(series.begin(), series.end(),
                               [&](const ChartSeries& s) { return s.name == name; });
        if (it == series.end()) {
          series.push_back({name, {}, x.peer});
          it = series.end() - 1;
        }
        it->points.emplace_back(static_cast<double>(x.pending), x.cost.ns_per_op);
      }
      body += svg_line_chart(
          {fmt::format("{}: CPU ns per operation", name_of(w)), "pending timers (log)",
           "ns/op (log)", true, broken_axis_clip(series), "cost"},
          series);
    } else {
      const bool late = w == Workload::kLateness;
      std::vector<ChartSeries> series;
      for (const ResultRow& x : r.rows) {
        if (x.workload == w) series.push_back({x.subject, cdf_points(x.latency), x.peer});
      }
      series.push_back({late ? "clock_nanosleep (OS limit)" : "cv wake (OS limit)",
                        cdf_points(late ? r.nanosleep_run() : r.cv_wake), true});
      body +=
          svg_line_chart({fmt::format("{}: CDF", name_of(w)),
                          late ? "fire time - deadline, us (log)" : "cancel -> resumed, us (log)",
                          "fraction", false, std::nullopt, "cdf"},
                         series);
    }
  }
  conclusions += "</tbody></table>\n";
  std::string notes = "<ul>\n";
  for (const auto& [k, v] : r.notes)
    notes += fmt::format("<li><b>{}</b>: {}</li>\n", xml_escape(k), xml_escape(v));
  notes += "</ul>\n";
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tlab "
      "compare</title>\n"
      "<style>body{{font-family:sans-serif;max-width:1500px}}svg{{margin:8px;border:1px solid "
      "#ccc}}table{{border-collapse:collapse;font-size:13px}}th,td{{border:1px solid #ccc;"
      "padding:2px 6px}}th{{background:#eee}}td.num{{text-align:right}}tr.peer{{color:#555}}"
      "</style></head>\n<body><h1>tlab compare</h1>\n"
      "<p>Every number comes from one process. NS/OP is CPU time per operation; ratios divide "
      "by the OS-limit baselines measured in the same run. A cost chart whose slowest subject "
      "is more than 10x above the rest breaks its y axis: the values above the break are drawn "
      "in the band at the top, labelled.</p>\n"
      "<h2>Which strategy for which workload</h2>\n<p>Computed from this run's numbers below "
      "(a noisy machine can change it; peers are shown for comparison, not chosen).</p>\n{}"
      "{}\n{}<h2>Table</h2>\n{}<p>{}</p>"
      "<h2>How each is driven</h2>\n{}"
      "<p>{}; {}; sanitizer {}; {} CPUs; {}; timer slack {} ns (run at {} ns); tlab {} ({})</p>\n"
      "<footer id=\"end\">end of report</footer></body></html>\n",
      conclusions, body, summary_html(r), results_table(r),
      xml_escape(fmt::format("baselines: clock_nanosleep p50/p99 {:.1f}/{:.1f} us; cv wake "
                             "p50/p99 {:.1f}/{:.1f} us; CAS {:.2f} ns uncontended, {:.2f} ns "
                             "contended; {:.1f} s wall",
                             static_cast<double>(r.nanosleep_process_slack.percentile(50)) / 1000,
                             static_cast<double>(r.nanosleep_process_slack.percentile(99)) / 1000,
                             static_cast<double>(r.cv_wake.percentile(50)) / 1000,
                             static_cast<double>(r.cv_wake.percentile(99)) / 1000,
                             r.cas_uncontended_ns, r.cas_contended_ns, r.wall_s)),
      notes, xml_escape(env.compiler), xml_escape(env.build_type), xml_escape(env.sanitizer),
      env.cpus_available, xml_escape(env.kernel), env.timer_slack_ns, r.run_slack_ns,
      xml_escape(env.tlab_version), xml_escape(env.git_revision));
}

}  // namespace tlab::tool::compare
