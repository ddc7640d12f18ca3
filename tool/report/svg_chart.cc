// tlab/tool/report/svg_chart.cc: see svg_chart.h.
#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include <fmt/format.h>

#include "report/junit.h"

namespace tlab::tool {

namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b",
                                   "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#ff7f0e"};
// Geometry of every chart: room on the left for the y labels, on the right for the
// legend, a band above the plot for the values over a broken axis.
constexpr double kW = 720, kH = 380, kL = 70, kR = 190, kT = 30, kB = 50, kBand = 26;
// Log axes never go below 1e-3 (a value of 0 still has a place to go).
constexpr double kLogFloor = 1e-3;

double log10_floored(double v) { return std::log10(std::max(v, kLogFloor)); }

std::string svg_open(const std::string& css_class, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"{}\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<text x=\"{}\" y=\"18\" font-size=\"14\" "
      "font-weight=\"bold\">{}</text>\n",
      xml_escape(css_class), kW, kH, kL, xml_escape(title));
}

std::string short_number(double v) {
  if (v >= 1e6 || (v > 0 && v < 1e-2)) return fmt::format("{:.2g}", v);
  return fmt::format("{:.4g}", v);
}

// x_axis: decade grid lines and labels between 10^lx0 and 10^lx1; a px mapper.
std::string x_axis(double lx0, double lx1, double top, double ph, const std::string& label) {
  const double pw = kW - kL - kR;
  std::string out;
  for (double d = lx0; d <= lx1 + 1e-9; d += 1) {
    const double x = kL + (d - lx0) / (lx1 - lx0) * pw;
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">1e{4:.0f}</text>\n",
        x, top, top + ph, top + ph + 14, d);
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kL + pw / 2,
                     kH - 12, xml_escape(label));
  return out;
}

std::string y_label(double top, double ph, const std::string& label) {
  return fmt::format(
      "<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 14 "
      "{0})\">{1}</text>\n",
      top + ph / 2, xml_escape(label));
}

}  // namespace

std::string svg_line_chart(const ChartAxes& axes, const std::vector<ChartSeries>& series) {
  double x0 = std::numeric_limits<double>::max(), x1 = 0;
  double y0 = std::numeric_limits<double>::max(), y1 = 0;
  const bool broken = axes.ylog && axes.y_clip.has_value();
  for (const ChartSeries& s : series) {
    for (auto [x, y] : s.points) {
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y0 = std::min(y0, y);
      if (!broken || y <= *axes.y_clip) y1 = std::max(y1, y);
    }
  }
  std::string out = svg_open(axes.css_class, axes.title);
  if (x1 <= 0) return out + "<text x=\"80\" y=\"80\">no data</text></svg>\n";
  const double top = kT + (broken ? kBand : 0);
  const double lx0 = std::floor(log10_floored(x0));
  double lx1 = std::ceil(log10_floored(x1));
  if (lx1 <= lx0) lx1 = lx0 + 1;
  double ly0 = 0, ly1 = 1;
  if (axes.ylog) {
    ly0 = std::floor(log10_floored(y0));
    ly1 = std::ceil(log10_floored(broken ? std::min(y1, *axes.y_clip) : y1));
    if (ly1 <= ly0) ly1 = ly0 + 1;
  }
  const double pw = kW - kL - kR, ph = kH - top - kB;
  const double clip = broken ? std::pow(10.0, ly1) : std::numeric_limits<double>::max();
  auto px = [&](double x) { return kL + (log10_floored(x) - lx0) / (lx1 - lx0) * pw; };
  auto py = [&](double y) {
    if (y > clip) return kT + kBand / 2;  // the break band
    const double v = axes.ylog ? log10_floored(y) : y;
    return top + ph - (v - ly0) / (ly1 - ly0) * ph;
  };
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", kL,
      top, pw, ph);
  out += x_axis(lx0, lx1, top, ph, axes.xlabel);
  const double ystep = axes.ylog ? 1 : 0.25;
  for (double d = ly0; d <= ly1 + 1e-9; d += ystep) {
    const double y = top + ph - (d - ly0) / (ly1 - ly0) * ph;
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kL, y, kL + pw, kL - 4, y + 4,
        axes.ylog ? fmt::format("1e{:.0f}", d) : fmt::format("{:.2f}", d));
  }
  if (broken) {
    // The break: a zig-zag across the axis between the plot and the band.
    out += fmt::format(
        "<g class=\"axis-break\"><polyline fill=\"none\" stroke=\"#444\" points=\"{0},{1} {2},{3} "
        "{4},{1} {5},{3}\"/><text x=\"{6}\" y=\"{7}\" text-anchor=\"end\">&gt;{8}</text></g>\n",
        kL - 8, top - 2, kL - 3, top - 8, kL + 2, kL + 7, kL - 10, kT + kBand / 2 + 4,
        xml_escape(short_number(clip)));
  }
  out += y_label(top, ph, axes.ylabel);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const ChartSeries& s = series[i];
    const char* color = kColors[i % std::size(kColors)];
    std::string pts;
    for (auto [x, y] : s.points) pts += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    out +=
        fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n",
                    color, s.dashed ? " stroke-dasharray=\"6,3\"" : "", pts);
    for (auto [x, y] : s.points) {
      if (s.points.size() <= 8 || y > clip) {
        out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", px(x),
                           py(y), color);
      }
      if (y > clip) {
        out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\">{}</text>\n", px(x) + 4,
                           py(y) - 4, color, xml_escape(short_number(y)));
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

std::vector<HistogramBin> log_bins(const Histogram& h, int per_decade) {
  std::vector<HistogramBin> bins;
  if (h.count() == 0 || per_decade <= 0) return bins;
  const nlohmann::ordered_json j = h.to_json(/*exact=*/true);
  // Bin k holds [10^(k/per_decade), 10^((k+1)/per_decade)) us; values under the
  // floor (0, negatives recorded as 0) go to the first bin.
  auto bin_of = [&](double us) {
    return static_cast<int>(std::floor(log10_floored(us) * per_decade));
  };
  std::vector<std::pair<int, std::uint64_t>> hits;
  int lo = std::numeric_limits<int>::max(), hi = std::numeric_limits<int>::min();
  for (const auto& b : j.at("buckets")) {
    const auto index = b.at(0).get<std::size_t>();
    const double us = static_cast<double>(Histogram::lower_bound(index)) / 1000.0;
    const int k = bin_of(us);
    hits.emplace_back(k, b.at(1).get<std::uint64_t>());
    lo = std::min(lo, k);
    hi = std::max(hi, k);
  }
  for (int k = lo; k <= hi; ++k) {
    bins.push_back({std::pow(10.0, static_cast<double>(k) / per_decade),
                    std::pow(10.0, static_cast<double>(k + 1) / per_decade), 0});
  }
  for (auto [k, n] : hits) bins[static_cast<std::size_t>(k - lo)].count += n;
  return bins;
}

std::string svg_histogram(const std::string& title, const std::string& xlabel,
                          const std::vector<HistogramBin>& bins, const std::string& css_class) {
  std::string out = svg_open(css_class, title);
  std::uint64_t most = 0;
  for (const HistogramBin& b : bins) most = std::max(most, b.count);
  if (bins.empty() || most == 0) return out + "<text x=\"80\" y=\"80\">no data</text></svg>\n";
  const double lx0 = std::floor(log10_floored(bins.front().lo));
  double lx1 = std::ceil(log10_floored(bins.back().hi));
  if (lx1 <= lx0) lx1 = lx0 + 1;
  const double pw = kW - kL - kR, ph = kH - kT - kB;
  auto px = [&](double x) { return kL + (log10_floored(x) - lx0) / (lx1 - lx0) * pw; };
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", kL,
      kT, pw, ph);
  out += x_axis(lx0, lx1, kT, ph, xlabel);
  out += y_label(kT, ph, "count");
  out +=
      fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kL - 4, kT + 4, most);
  for (const HistogramBin& b : bins) {
    if (b.count == 0) continue;
    const double h = static_cast<double>(b.count) / static_cast<double>(most) * ph;
    out += fmt::format(
        "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"#1f77b4\"><title>{} .. {} us: {}</title></rect>\n",
        px(b.lo), kT + ph - h, std::max(1.0, px(b.hi) - px(b.lo) - 1), h,
        xml_escape(short_number(b.lo)), xml_escape(short_number(b.hi)), b.count);
  }
  return out + "</svg>\n";
}

std::vector<std::pair<double, double>> cdf_points(const Histogram& h) {
  std::vector<std::pair<double, double>> pts;
  if (h.count() == 0) return pts;
  // 0.01 us: the smallest value the charts show; a 0 would have no place on a log axis.
  constexpr double kMinUs = 0.01;
  auto at = [&](double p) {
    pts.emplace_back(std::max(kMinUs, static_cast<double>(h.percentile(p)) / 1000.0), p / 100.0);
  };
  for (int p = 0; p <= 100; p += 2) at(p);
  for (double p : {99.0, 99.9}) at(p);
  std::sort(pts.begin(), pts.end(), [](auto a, auto b) { return a.second < b.second; });
  return pts;
}

std::optional<double> broken_axis_clip(const std::vector<ChartSeries>& series) {
  // A factor of 10 between neighbouring series maxima: below it, the lower series
  // would share the bottom decade of the axis; above it, the break is worth a band.
  constexpr double kGap = 10;
  std::vector<double> maxima;
  for (const ChartSeries& s : series) {
    double m = 0;
    for (auto [x, y] : s.points) m = std::max(m, y);
    if (m > 0) maxima.push_back(m);
  }
  std::sort(maxima.begin(), maxima.end());
  std::optional<double> clip;
  double widest = kGap;
  for (std::size_t i = 1; i < maxima.size(); ++i) {
    const double step = maxima[i] / maxima[i - 1];
    if (step > widest) {
      widest = step;
      clip = maxima[i - 1] * 1.5;
    }
  }
  return clip;
}

}  // namespace tlab::tool
