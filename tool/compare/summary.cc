// tlab/tool/compare/summary.cc: see summary.h.
#include "compare/summary.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "base/text_table.h"
#include "report/junit.h"

namespace tlab::tool::compare {
namespace {

// versus_cost: the cost a versus row compares (summary.h says why two kinds).
double versus_cost(const ResultRow& x) {
  return is_mt(x.workload) ? x.cost.wall_ns_per_op : x.cost.ns_per_op;
}

std::string summary_number(double v) {
  if (v >= 1e6) return fmt::format("{:.2f}M", v / 1e6);
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

std::vector<std::vector<std::string>> scaling_cells(const std::vector<ScalingRow>& rows) {
  std::vector<std::vector<std::string>> cells{
      {"WORKLOAD", "IMPL", "PENDING", "THREADS", "OPS/S", "VS_FEWEST", "FEWEST"}};
  for (const ScalingRow& x : rows) {
    cells.push_back({name_of(x.workload), x.subject, std::to_string(x.pending), std::to_string(x.threads),
                     summary_number(x.ops_per_s), fmt::format("{:.2f}x", x.vs_base),
                     std::to_string(x.base_threads)});
  }
  return cells;
}

std::vector<std::vector<std::string>> versus_cells(const std::vector<VersusRow>& rows) {
  std::vector<std::vector<std::string>> cells{
      {"WORKLOAD", "PENDING", "THREADS", "MEASURE", "OURS", "NS", "FASTEST_PEER", "NS", "FACTOR"}};
  for (const VersusRow& x : rows) {
    cells.push_back({name_of(x.workload), std::to_string(x.pending),
                     x.threads > 0 ? std::to_string(x.threads) : "-", x.measure, x.ours,
                     summary_number(x.ours_ns), x.peer, summary_number(x.peer_ns),
                     fmt::format("{:.2f}x", x.factor)});
  }
  return cells;
}

bool scaling_text_column(std::size_t c) { return c <= 1; }
bool versus_text_column(std::size_t c) { return c == 0 || c == 3 || c == 4 || c == 6; }

std::string html_table(const char* id, const std::vector<std::vector<std::string>>& cells,
                       bool (*text)(std::size_t)) {
  std::string out = fmt::format("<table id=\"{}\"><thead><tr>", id);
  for (const std::string& h : cells.front()) out += "<th>" + xml_escape(h) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (std::size_t i = 1; i < cells.size(); ++i) {
    out += "<tr>";
    for (std::size_t c = 0; c < cells[i].size(); ++c) {
      out += fmt::format("<td{}>{}</td>", text(c) ? "" : " class=\"num\"",
                         xml_escape(cells[i][c]));
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

}  // namespace

std::vector<ScalingRow> scaling_rows(const CompareResults& r) {
  // (workload, subject, pending) -> that subject's rows of that mt workload at
  // that size, in thread order.
  using Key = std::tuple<int, std::string, std::size_t>;
  std::map<Key, std::vector<const ResultRow*>> groups;
  std::vector<Key> order;
  for (const ResultRow& x : r.rows) {
    if (!is_mt(x.workload) || x.cost.wall_ns_per_op <= 0) continue;
    auto key = Key{static_cast<int>(x.workload), x.subject, x.pending};
    if (!groups.contains(key)) order.push_back(key);
    groups[key].push_back(&x);
  }
  std::vector<ScalingRow> out;
  for (const auto& key : order) {
    std::vector<const ResultRow*>& g = groups[key];
    if (g.size() < 2) continue;
    std::sort(g.begin(), g.end(),
              [](const ResultRow* a, const ResultRow* b) { return a->threads < b->threads; });
    const double base = 1e9 / g.front()->cost.wall_ns_per_op;
    for (const ResultRow* x : g) {
      ScalingRow s;
      s.workload = x->workload;
      s.subject = x->subject;
      s.peer = x->peer;
      s.pending = x->pending;
      s.threads = x->threads;
      s.ops_per_s = 1e9 / x->cost.wall_ns_per_op;
      s.base_threads = g.front()->threads;
      s.vs_base = s.ops_per_s / base;
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<VersusRow> versus_rows(const CompareResults& r) {
  using Key = std::tuple<int, std::size_t, std::size_t>;
  std::map<Key, std::pair<const ResultRow*, const ResultRow*>> best;  // ours, peer
  for (const ResultRow& x : r.rows) {
    if (!is_cost(x.workload) || versus_cost(x) <= 0) continue;
    auto& [ours, peer] = best[Key{static_cast<int>(x.workload), x.pending, x.threads}];
    const ResultRow*& slot = x.peer ? peer : ours;
    if (slot == nullptr || versus_cost(x) < versus_cost(*slot)) slot = &x;
  }
  std::vector<VersusRow> out;
  for (const auto& [key, pair] : best) {
    const auto& [ours, peer] = pair;
    if (ours == nullptr || peer == nullptr) continue;
    VersusRow v;
    v.workload = ours->workload;
    v.pending = ours->pending;
    v.threads = ours->threads;
    v.measure =
        is_mt(ours->workload) ? "wall_ns_per_op" : "cpu_ns_per_op";
    v.ours = ours->subject;
    v.ours_ns = versus_cost(*ours);
    v.peer = peer->subject;
    v.peer_ns = versus_cost(*peer);
    v.factor = v.peer_ns / v.ours_ns;
    out.push_back(std::move(v));
  }
  return out;
}

std::string summary_text(const CompareResults& r) {
  std::string out;
  if (const auto s = scaling_rows(r); !s.empty()) {
    out += "scaling: mt workloads' ops/s (wall, median of rounds) over the same subject's "
           "at the fewest threads measured\n";
    out += aligned_table(scaling_cells(s), scaling_text_column);
  }
  if (const auto v = versus_rows(r); !v.empty()) {
    out += "versus peers: our least-cost subject against the fastest peer in each cost cell "
           "(FACTOR = peer / ours; > 1: ours faster)\n";
    out += aligned_table(versus_cells(v), versus_text_column);
  }
  return out;
}

nlohmann::ordered_json summary_json(const CompareResults& r) {
  using J = nlohmann::ordered_json;
  J scaling = J::array();
  for (const ScalingRow& x : scaling_rows(r)) {
    scaling.push_back({{"workload", name_of(x.workload)},
                       {"impl", x.subject},
                       {"kind", x.peer ? "peer" : "strategy"},
                       {"pending", x.pending},
                       {"threads", x.threads},
                       {"ops_per_s", x.ops_per_s},
                       {"base_threads", x.base_threads},
                       {"vs_base", x.vs_base}});
  }
  J versus = J::array();
  for (const VersusRow& x : versus_rows(r)) {
    versus.push_back({{"workload", name_of(x.workload)},
                      {"pending", x.pending},
                      {"threads", x.threads > 0 ? J(x.threads) : J(nullptr)},
                      {"measure", x.measure},
                      {"ours", x.ours},
                      {"ours_ns", x.ours_ns},
                      {"peer", x.peer},
                      {"peer_ns", x.peer_ns},
                      {"factor", x.factor}});
  }
  return J{{"scaling", scaling}, {"versus_peers", versus}};
}

std::string summary_html(const CompareResults& r) {
  std::string out;
  if (const auto s = scaling_rows(r); !s.empty()) {
    out += "<h2>Scaling with threads</h2>\n<p>Operations per wall second of each mt workload "
           "(median of the interleaved rounds), over the same subject's at the fewest threads "
           "measured.</p>\n";
    out += html_table("scaling", scaling_cells(s), scaling_text_column);
  }
  if (const auto v = versus_rows(r); !v.empty()) {
    out += "<h2>Ours against the fastest peer</h2>\n<p>Per cost cell, our least-cost subject "
           "and the least-cost peer: CPU ns per operation on one thread, wall ns per "
           "operation (1 / throughput) for the mt workloads. FACTOR = peer / ours; above 1 "
           "ours is faster.</p>\n";
    out += html_table("versus", versus_cells(v), versus_text_column);
  }
  return out;
}

}  // namespace tlab::tool::compare
