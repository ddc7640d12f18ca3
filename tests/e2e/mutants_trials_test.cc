// End-to-end test of `tlab mutants --trials` (tool/layers/kill_matrix.h, Trials): the
// real tlab binary drives a fake TSan tlab (a shell script written by the test) that
// catches its mutant on every other run, so the rates are known without timing.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/embedded.h"
#include "base/json_input.h"
#include "support/cli_run.h"

namespace tlab::tool {
namespace {

namespace fs = std::filesystem;

class MutantsTrials : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tlab_mutants_trials_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // `run SCENARIO --mutant M --strategy S --report R`: the report's one case fails
    // with a sanitizer report on odd-numbered calls and passes on even ones.
    fake_ = dir_ / "fake_tsan_tlab";
    std::ofstream(fake_)
        << "#!/bin/sh\n"
        << "n=$(cat '" << (dir_ / "count").string() << "' 2>/dev/null || echo 0)\n"
        << "n=$((n + 1)); echo $n > '" << (dir_ / "count").string() << "'\n"
        << "for a; do r=$a; done\n"
        << "if [ $((n % 2)) = 1 ]; then\n"
        << R"(  echo '{"cases":[{"verdict":"fail","sanitizer_reports":["race"],)"
        << R"("counters":{"detect_us":2000},"duration_s":0.1}]}' > "$r")"
        << "\nelse\n"
        << R"(  echo '{"cases":[{"verdict":"pass","sanitizer_reports":[],)"
        << R"("counters":{},"duration_s":0.1}]}' > "$r")"
        << "\nfi\n";
    ::chmod(fake_.c_str(), 0755);
  }
  void TearDown() override { fs::remove_all(dir_); }

  testing::CliResult tlab(const std::vector<std::string>& args) {
    fs::remove(dir_ / "count");
    return testing::run_tlab(TLAB_BIN, args, dir_);
  }

  // The kill matrix on stdout, validated with the report schema's kill_matrix.
  static Json matrix(const std::string& text) {
    InputErrors errors;
    auto doc = parse_json_text(text, "stdout", errors);
    EXPECT_TRUE(doc.has_value()) << text.substr(0, 400);
    if (!doc) return Json{};
    Json schema = Json::parse(embedded_report_schema());
    schema.erase("required");
    schema["properties"] = {{"kill_matrix", {{"$ref", "#/definitions/kill_matrix"}}}};
    const SchemaValidator validator(schema.dump());
    Json km = *doc;
    for (const char* key : {"schema_version", "command", "environment"}) km.erase(key);
    EXPECT_TRUE(validator.validate(Json{{"kill_matrix", km}}, "stdout", errors))
        << (errors.empty() ? "" : errors[0].str());
    return *doc;
  }

  static const Json& row(const Json& doc, const std::string& mutant) {
    for (const Json& r : doc.at("mutants")) {
      if (r.at("name") == mutant) return r;
    }
    throw std::runtime_error("no row " + mutant);
  }

  fs::path dir_;
  fs::path fake_;
};

// Four trials of a check that catches every other run: 2/4, flaky, the mutant named
// under only_flaky; one trial of the same check catches it and it is not flaky.
TEST_F(MutantsTrials, FlakyTsanDetectionIsMeasuredAndGated) {
  testing::CliResult r =
      tlab({"mutants", "--layers", "tsan", "--tsan-tlab", fake_.string(), "--trials", "4", "--json"});
  EXPECT_EQ(r.code, 1) << r.err;  // other mutants are caught by no layer here, too
  Json doc = matrix(r.out);
  const Json& flaky = row(doc, "data_race_plain_flag");
  ASSERT_EQ(flaky.at("caught_by").size(), 1u) << flaky.dump();
  EXPECT_EQ(flaky.at("caught_by")[0].at("trials"), 4);
  EXPECT_EQ(flaky.at("caught_by")[0].at("detections"), 2);
  EXPECT_EQ(flaky.at("caught_by")[0].at("flaky"), true);
  EXPECT_DOUBLE_EQ(flaky.at("caught_by")[0].at("time_to_detection_s").get<double>(), 0.002);
  const Json& only = doc.at("summary").at("only_flaky");
  EXPECT_NE(std::find(only.begin(), only.end(), "data_race_plain_flag"), only.end()) << only;

  r = tlab({"mutants", "--layers", "tsan", "--tsan-tlab", fake_.string(), "--json"});
  doc = matrix(r.out);
  const Json& once = row(doc, "data_race_plain_flag");
  EXPECT_EQ(once.at("caught_by")[0].at("trials"), 1);
  EXPECT_EQ(once.at("caught_by")[0].at("flaky"), false);
  EXPECT_TRUE(doc.at("summary").at("only_flaky").empty());

  r = tlab({"mutants", "--layers", "tsan", "--tsan-tlab", fake_.string(), "--trials", "4"});
  EXPECT_NE(r.out.find("FLAKY 2/4 2.0ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ONLY FLAKY DETECTION: data_race_plain_flag"), std::string::npos) << r.out;
}

// --trials 0 is bad input: exit 2 naming the flag.
TEST_F(MutantsTrials, ZeroTrialsIsRefused) {
  const testing::CliResult r = tlab({"mutants", "--trials", "0"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--trials"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tlab::tool
