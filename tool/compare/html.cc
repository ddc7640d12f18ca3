// tlab/tool/compare/html.cc: see html.h.
#include "compare/html.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "report/junit.h"

namespace tlab::tool::compare {
namespace {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x and y > 0 on log axes
  bool dashed = false;
};

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b",
                                   "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#ff7f0e"};

// svg_chart: a line chart; x on a log10 axis; y on log10 (ylog) or linear [0, 1].
std::string svg_chart(const std::string& title, const std::string& xlabel,
                      const std::string& ylabel, const std::vector<Series>& series, bool ylog) {
  constexpr double kW = 720, kH = 380, kL = 70, kR = 190, kT = 30, kB = 50;
  double x0 = std::numeric_limits<double>::max(), x1 = 0;
  double y0 = std::numeric_limits<double>::max(), y1 = 0;
  for (const Series& s : series) {
    for (auto [x, y] : s.points) {
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  }
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<text x=\"{}\" y=\"18\" font-size=\"14\" "
      "font-weight=\"bold\">{}</text>\n",
      kW, kH, kL, xml_escape(title));
  if (x1 <= 0) return out + "<text x=\"80\" y=\"80\">no data</text></svg>\n";
  // Decade bounds on log axes.
  const double lx0 = std::floor(std::log10(std::max(x0, 1e-3)));
  double lx1 = std::ceil(std::log10(std::max(x1, 1e-3)));
  if (lx1 <= lx0) lx1 = lx0 + 1;
  double ly0 = 0, ly1 = 1;
  if (ylog) {
    ly0 = std::floor(std::log10(std::max(y0, 1e-3)));
    ly1 = std::ceil(std::log10(std::max(y1, 1e-3)));
    if (ly1 <= ly0) ly1 = ly0 + 1;
  }
  const double pw = kW - kL - kR, ph = kH - kT - kB;
  auto px = [&](double x) { return kL + (std::log10(std::max(x, 1e-3)) - lx0) / (lx1 - lx0) * pw; };
  auto py = [&](double y) {
    const double v = ylog ? std::log10(std::max(y, 1e-3)) : y;
    return kT + ph - (v - ly0) / (ly1 - ly0) * ph;
  };
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", kL,
      kT, pw, ph);
  for (double d = lx0; d <= lx1 + 1e-9; d += 1) {
    const double x = kL + (d - lx0) / (lx1 - lx0) * pw;
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">1e{4:.0f}</text>\n",
        x, kT, kT + ph, kT + ph + 14, d);
  }
  const double ystep = ylog ? 1 : 0.25;
  for (double d = ly0; d <= ly1 + 1e-9; d += ystep) {
    const double y = kT + ph - (d - ly0) / (ly1 - ly0) * ph;
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kL, y, kL + pw, kL - 4, y + 4,
        ylog ? fmt::format("1e{:.0f}", d) : fmt::format("{:.2f}", d));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kL + pw / 2,
                     kH - 12, xml_escape(xlabel));
  out += fmt::format(
      "<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 14 "
      "{0})\">{1}</text>\n",
      kT + ph / 2, xml_escape(ylabel));
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    const char* color = kColors[i % std::size(kColors)];
    std::string pts;
    for (auto [x, y] : s.points) pts += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    out +=
        fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n",
                    color, s.dashed ? " stroke-dasharray=\"6,3\"" : "", pts);
    if (s.points.size() <= 8) {
      for (auto [x, y] : s.points) {
        out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", px(x),
                           py(y), color);
      }
    }
    const double ly = kT + 10 + 16 * static_cast<double>(i);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"2\"{4}/>"
        "<text x=\"{5}\" y=\"{6:.1f}\">{7}</text>\n",
        kL + pw + 10, ly, kL + pw + 34, color, s.dashed ? " stroke-dasharray=\"6,3\"" : "",
        kL + pw + 40, ly + 4, xml_escape(s.name));
  }
  return out + "</svg>\n";
}

// cdf: (lateness in us, fraction) points from the histogram's percentiles.
std::vector<std::pair<double, double>> cdf(const Histogram& h) {
  std::vector<std::pair<double, double>> pts;
  if (h.count() == 0) return pts;
  for (double p = 0; p <= 100.0001; p += 2) {
    pts.emplace_back(std::max(0.01, static_cast<double>(h.percentile(std::min(p, 100.0))) / 1000.0),
                     p / 100.0);
  }
  for (double p : {99.0, 99.9, 100.0}) {
    pts.emplace_back(std::max(0.01, static_cast<double>(h.percentile(p)) / 1000.0), p / 100.0);
  }
  std::sort(pts.begin(), pts.end(), [](auto a, auto b) { return a.second < b.second; });
  return pts;
}

}  // namespace

std::string compare_results_html(const CompareOptions& o, const CompareResults& r,
                                 const Environment& env) {
  std::string body;
  for (Workload w : o.workloads) {
    if (is_cost(w)) {
      std::vector<Series> series;
      for (const ResultRow& x : r.rows) {
        if (x.workload != w) continue;
        auto it = std::find_if(series.begin(), series.end(),
                               [&](const Series& s) { return s.name == x.subject; });
        if (it == series.end()) {
          series.push_back({x.subject, {}, x.peer});
          it = series.end() - 1;
        }
        it->points.emplace_back(static_cast<double>(x.pending), x.cost.ns_per_op);
      }
      body += svg_chart(fmt::format("{}: CPU ns per operation", name_of(w)), "pending timers (log)",
                        "ns/op (log)", series, true);
    } else {
      const bool late = w == Workload::kLateness;
      std::vector<Series> series;
      for (const ResultRow& x : r.rows) {
        if (x.workload == w) series.push_back({x.subject, cdf(x.latency), x.peer});
      }
      series.push_back({late ? "clock_nanosleep (OS limit)" : "cv wake (OS limit)",
                        cdf(late ? r.nanosleep_run() : r.cv_wake), true});
      body += svg_chart(fmt::format("{}: CDF", name_of(w)),
                        late ? "fire time - deadline, us (log)" : "cancel -> resumed, us (log)",
                        "fraction", series, false);
    }
  }
  std::string table;
  std::string text = compare_results_table(o, r);
  table = "<pre>" + xml_escape(text) + "</pre>\n";
  std::string notes = "<ul>\n";
  for (const auto& [k, v] : r.notes)
    notes += fmt::format("<li><b>{}</b>: {}</li>\n", xml_escape(k), xml_escape(v));
  notes += "</ul>\n";
  return fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>tlab compare</title>\n"
      "<style>body{{font-family:sans-serif;max-width:1500px}}svg{{margin:8px;border:1px solid "
      "#ccc}}pre{{font-size:12px}}</style></head>\n<body><h1>tlab compare</h1>\n"
      "<p>Every number comes from one process. NS/OP is CPU time per operation; ratios divide "
      "by the OS-limit baselines measured in the same run.</p>\n{}\n<h2>Table</h2>\n{}"
      "<h2>How each is driven</h2>\n{}"
      "<p>{}; {}; sanitizer {}; {} CPUs; {}; timer slack {} ns (run at {} ns); tlab {} ({})</p>\n"
      "</body></html>\n",
      body, table, notes, xml_escape(env.compiler), xml_escape(env.build_type),
      xml_escape(env.sanitizer), env.cpus_available, xml_escape(env.kernel), env.timer_slack_ns,
      r.run_slack_ns, xml_escape(env.tlab_version), xml_escape(env.git_revision));
}

}  // namespace tlab::tool::compare
