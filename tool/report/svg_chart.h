// tlab/tool/report/svg_chart.h: inline SVG charts for the HTML pages (the HTML
// report, report/html_report.h, and `tlab compare --html`, compare/html.h).
//
// Plain SVG 1.1 text, no scripts, no fonts to fetch: the pages stay self-contained.
// Two charts:
//   | chart           | x axis                  | y axis                                   |
//   |-----------------|-------------------------|------------------------------------------|
//   | svg_line_chart  | log10, whole decades    | log10 decades, or linear [0, 1] (a CDF)  |
//   | svg_histogram   | log10, per-decade bins  | linear counts                            |
// A log y axis may be broken (ChartAxes::y_clip): values above the clip are drawn in
// a band over the plot, marked with a zig-zag on the axis and labelled with their
// value, so that one huge series (compare's sorted_list) does not squash the others
// into the bottom decade. broken_axis_clip() decides where, from the numbers.
// Every text is XML-escaped; each <svg> carries the class given, so tests and CSS
// can find it.
//
// Cost: O(points) string work. Ground rules: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/histogram.h"

namespace tlab::tool {

struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y); x > 0 (log x axis)
  bool dashed = false;
};

struct ChartAxes {
  std::string title, xlabel, ylabel;
  bool ylog = false;             // else linear [0, 1]
  std::optional<double> y_clip;  // log axis only: values above it go to the break band
  std::string css_class = "chart";
};

// svg_line_chart: one polyline per series, a legend on the right.
std::string svg_line_chart(const ChartAxes& axes, const std::vector<ChartSeries>& series);

// HistogramBin: values in [lo, hi) (microseconds) and how many there were.
struct HistogramBin {
  double lo = 0, hi = 0;
  std::uint64_t count = 0;
};

// log_bins: `h` (nanoseconds) regrouped into `per_decade` bins per decade of
// microseconds, from its exact buckets; empty bins between filled ones are kept.
std::vector<HistogramBin> log_bins(const Histogram& h, int per_decade);

// svg_histogram: bars of `bins` on a log x axis.
std::string svg_histogram(const std::string& title, const std::string& xlabel,
                          const std::vector<HistogramBin>& bins,
                          const std::string& css_class = "histogram");

// cdf_points: (value in microseconds, fraction at or below) from the percentiles of
// `h`: every 2%, then 99, 99.9 and 100; values floored at 0.01 us for the log axis.
std::vector<std::pair<double, double>> cdf_points(const Histogram& h);

// broken_axis_clip: where to break a log y axis over `series`: sort the series'
// largest values; if some step between neighbours is a factor over 10, clip just
// above the value under the largest such step (x1.5); else nullopt.
std::optional<double> broken_axis_clip(const std::vector<ChartSeries>& series);

}  // namespace tlab::tool
