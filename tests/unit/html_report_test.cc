// Tests for tool/report/html_report.h and svg_chart.h: the sections, escaping, replay
// anchors, and the broken axis rule (the browser test renders the page).
#include "report/html_report.h"

#include <gtest/gtest.h>

#include "layers/kill_matrix.h"
#include "report/svg_chart.h"
#include "support/ci_report.h"

namespace tlab::tool {
namespace {

using testing::ci_report;

// Every section is there, the failing rows link to their replay anchors, and the
// hostile example text appears only escaped.
TEST(HtmlReportTest, SectionsAnchorsAndEscaping) {
  const Report r = ci_report();
  const std::string html = html_report(r, findings(r, "r.json"));
  for (const char* id :
       {"summary", "cases", "oracles", "latency", "mutant-pairs", "replay", "unpromised", "end"}) {
    EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  }
  EXPECT_EQ(html.find("id=\"kill-matrix\""), std::string::npos);  // no kill_matrix in this report
  EXPECT_NE(html.find("href=\"#replay-0\""), std::string::npos);
  EXPECT_NE(html.find("id=\"replay-2\""), std::string::npos);
  EXPECT_NE(html.find("tlab replay r.json --case racing_cancellers/tick_grid"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(html.find("class=\"cdf\""), std::string::npos);
  EXPECT_NE(html.find("class=\"histogram\""), std::string::npos);
}

// Unpromised findings get their own section, counted in the summary; the hostile
// example text is escaped there too. Without any, the section says so.
TEST(HtmlReportTest, UnpromisedFindingsSection) {
  const Report r = testing::with_unpromised(ci_report());
  const std::string html = html_report(r, findings(r, "r.json"), unpromised_findings(r, "r.json"));
  EXPECT_NE(html.find("id=\"unpromised-count\">1 passed cases have 1 findings"), std::string::npos);
  const auto section = html.find("<section id=\"unpromised\">");
  ASSERT_NE(section, std::string::npos);
  EXPECT_NE(html.find("<tr class=\"unpromised\"><td>racing_cancellers/libuv</td><td>early_fire"
                      "</td><td>70</td>",
                      section),
            std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  const std::string none = html_report(ci_report(), findings(ci_report(), ""));
  EXPECT_NE(none.find("<section id=\"unpromised\">"), std::string::npos);
  EXPECT_EQ(none.find("id=\"unpromised-count\""), std::string::npos);
  EXPECT_EQ(none.find("<tr class=\"unpromised\">"), std::string::npos);
}

// With a kill matrix (mutants, check --models) the page shows it: per mutant and
// layer the detections over trials as a rate, flaky ones marked.
TEST(HtmlReportTest, KillMatrixWithDetectionRates) {
  Report r = ci_report();
  KillMatrix km;
  km.layer(Layer::kScenario).state = LayerStatus::State::kRan;
  km.layer(Layer::kScenario).trials = 4;
  for (int trial = 0; trial < 4; ++trial) {
    km.add(Mutant::kTokenFlagOnly, {Layer::kScenario, "racing_cancellers/binary_heap",
                                    trial % 2 == 0, 0.01, "double_resume=1"});
  }
  r.kill_matrix = km.to_json();
  const std::string html = html_report(r, findings(r, ""));
  EXPECT_NE(html.find("id=\"kill-matrix\""), std::string::npos);
  EXPECT_NE(html.find("<span class=\"rate flaky\">2/4 (50%)</span>"), std::string::npos);
  EXPECT_NE(html.find("class=\"mutant uncaught\""), std::string::npos);  // the other mutants
}

// The axis breaks only over a gap of more than 10x between series maxima, just
// above the lower side of the widest gap.
TEST(SvgChartTest, BrokenAxisClipFollowsTheWidestGap) {
  const auto s = [](double max) { return ChartSeries{"s", {{1, max / 2}, {10, max}}, false}; };
  EXPECT_FALSE(broken_axis_clip({s(100), s(200), s(900)}).has_value());
  EXPECT_FALSE(broken_axis_clip({s(100), s(990)}).has_value());  // 9.9x: no break
  EXPECT_TRUE(broken_axis_clip({s(100), s(1010)}).has_value());  // 10.1x: a break
  const auto clip = broken_axis_clip({s(100), s(200), s(100000)});
  ASSERT_TRUE(clip.has_value());
  EXPECT_DOUBLE_EQ(*clip, 300);
  const std::string svg = svg_line_chart({"t", "x", "y", true, clip, "cost"}, {s(100), s(100000)});
  EXPECT_NE(svg.find("class=\"axis-break\""), std::string::npos);
  EXPECT_NE(svg.find(">1e+05<"), std::string::npos);  // the clipped value, labelled
}

// log_bins keeps every sample of the exact histogram.
TEST(SvgChartTest, LogBinsKeepEverySample) {
  Histogram h;
  for (std::int64_t ns = 0; ns < 10'000'000; ns += 9973) h.record(ns);
  std::uint64_t total = 0;
  for (const HistogramBin& b : log_bins(h, 4)) total += b.count;
  EXPECT_EQ(total, h.count());
}

}  // namespace
}  // namespace tlab::tool
