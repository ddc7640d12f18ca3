// Tests for tool/layers/kill_matrix.h: a check's record over its trials (detections,
// rate, median and max time), the best check of a layer, and the gate (Trials table)
// with fabricated trial outcomes: no run, no timing.
#include "layers/kill_matrix.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/embedded.h"
#include "base/json_input.h"

namespace tlab::tool {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr Mutant kX = Mutant::kTimerNotifyWithoutLock;

Detection trial(Layer layer, const std::string& check, bool caught, double detect_s = 0) {
  Detection d;
  d.layer = layer;
  d.check = check;
  d.caught = caught;
  d.detect_s = detect_s;
  d.detail = caught ? "violation" : "no violation";
  return d;
}

// A matrix in which a property check catches every mutant but kX in its one run:
// the gate then turns on kX's records alone.
KillMatrix all_caught_but_x() {
  KillMatrix km;
  for (std::size_t i = 0; i < kMutantCount; ++i) {
    const auto m = static_cast<Mutant>(i);
    if (m != kX) km.add(m, trial(Layer::kProperty, "Mutant.test", true, 0.001));
  }
  return km;
}

// Adds `caught` as the trials of one check of kX, in order.
void add_trials(KillMatrix& km, Layer layer, const std::string& check,
                const std::vector<std::optional<double>>& caught) {
  for (const auto& t : caught) km.add(kX, trial(layer, check, t.has_value(), t.value_or(0)));
}

CaseRecord mutant_case(const std::string& scenario, const std::string& strategy, Verdict v,
                       double duration_s) {
  CaseRecord c;
  c.id = scenario + "/" + strategy + "/" + std::string(name_of(kX));
  c.scenario = scenario;
  c.strategy = strategy;
  c.mutant = std::string(name_of(kX));
  c.expect_fail = true;
  c.result.verdict = v;
  c.result.duration_s = duration_s;
  return c;
}

// Trials of one (layer, check) add up to one record: detections over trials, the
// median and max over the caught trials only (a missed trial has no time).
TEST(KillMatrixTrials, RecordCountsDetectionsAndTimesTheCaughtTrials) {
  KillMatrix km;
  add_trials(km, Layer::kScenario, "missed_notify/binary_heap",
             {0.003, 0.001, std::nullopt, 0.002, 0.010});
  const auto best = km.best(kX, Layer::kScenario);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->trials, 5u);
  EXPECT_EQ(best->detections(), 4u);
  EXPECT_TRUE(best->flaky());
  EXPECT_FALSE(best->reliable());
  EXPECT_DOUBLE_EQ(best->median_s(), 0.0025);  // (0.002 + 0.003) / 2
  EXPECT_DOUBLE_EQ(best->max_s(), 0.010);
}

// An odd number of caught trials has the middle one as its median.
TEST(KillMatrixTrials, MedianOfAnOddCountIsTheMiddleTrial) {
  KillMatrix km;
  add_trials(km, Layer::kScenario, "s/binary_heap", {0.9, 0.1, 0.5});
  EXPECT_DOUBLE_EQ(km.best(kX, Layer::kScenario)->median_s(), 0.5);
  EXPECT_TRUE(km.best(kX, Layer::kScenario)->reliable());
}

// The same check name in another layer is another check.
TEST(KillMatrixTrials, ChecksAreKeyedByLayerAndName) {
  KillMatrix km;
  add_trials(km, Layer::kScenario, "s/binary_heap", {0.1});
  add_trials(km, Layer::kTsan, "s/binary_heap", {std::nullopt});
  EXPECT_EQ(km.best(kX, Layer::kScenario)->trials, 1u);
  EXPECT_FALSE(km.best(kX, Layer::kTsan));
  EXPECT_THAT(km.survivors(), ElementsAre("timer_notify_without_lock@tsan:s/binary_heap"));
}

// A layer's best check is the one with the higher rate, however slow; speed breaks ties.
TEST(KillMatrixTrials, BestCheckPrefersRateOverSpeed) {
  KillMatrix km;
  add_trials(km, Layer::kScenario, "fast_but_flaky/binary_heap",
             {0.001, std::nullopt, 0.001, std::nullopt, 0.001});
  add_trials(km, Layer::kScenario, "slow_and_sure/binary_heap", {0.5, 0.5, 0.5, 0.5, 0.5});
  add_trials(km, Layer::kScenario, "slower_and_sure/binary_heap", {0.9, 0.9, 0.9, 0.9, 0.9});
  EXPECT_EQ(km.best(kX, Layer::kScenario)->check, "slow_and_sure/binary_heap");
}

// Gate: a mutant some check catches in every trial passes.
TEST(KillMatrixGate, ReliableCheckPasses) {
  KillMatrix km = all_caught_but_x();
  add_trials(km, Layer::kScenario, "s/binary_heap", {0.1, 0.2, 0.3});
  EXPECT_THAT(km.only_flaky(), IsEmpty());
  EXPECT_EQ(km.exit_code(), 0);
}

// Gate: a mutant whose only detections are flaky fails, and is named as such.
TEST(KillMatrixGate, OnlyFlakyDetectionFails) {
  KillMatrix km = all_caught_but_x();
  add_trials(km, Layer::kScenario, "missed_notify/binary_heap", {0.1, 0.1, std::nullopt, 0.1, 0.1});
  EXPECT_THAT(km.uncaught(), IsEmpty());
  EXPECT_THAT(km.survivors(), IsEmpty());
  EXPECT_THAT(km.only_flaky(), ElementsAre(kX));
  EXPECT_THAT(km.flaky_checks(),
              ElementsAre("timer_notify_without_lock@scenario:missed_notify/binary_heap 4/5"));
  EXPECT_EQ(km.exit_code(), 1);
}

// Gate: a flaky check beside a reliable one (here a model run once) is listed but
// does not fail: the mutant is caught every time by the other.
TEST(KillMatrixGate, FlakyCheckBesideAReliableOnePasses) {
  KillMatrix km = all_caught_but_x();
  add_trials(km, Layer::kScenario, "missed_notify/binary_heap", {0.1, std::nullopt, 0.1});
  add_trials(km, Layer::kModel, "model.timer_service.notify/random", {2.0});
  EXPECT_THAT(km.only_flaky(), IsEmpty());
  EXPECT_THAT(km.flaky_checks(), Not(IsEmpty()));
  EXPECT_EQ(km.exit_code(), 0);
}

// Gate: checks that take turns catching the mutant, none in every trial, fail: no
// single (scenario, mutant) pair of `tlab check` can be relied on.
TEST(KillMatrixGate, ChecksTakingTurnsFail) {
  KillMatrix km = all_caught_but_x();
  add_trials(km, Layer::kScenario, "a/binary_heap", {0.1, std::nullopt});
  add_trials(km, Layer::kScenario, "b/binary_heap", {std::nullopt, 0.1});
  EXPECT_THAT(km.only_flaky(), ElementsAre(kX));
  EXPECT_EQ(km.exit_code(), 1);
}

// Gate: a check that misses in every trial is a survivor, even beside a reliable check.
TEST(KillMatrixGate, SurvivorOfEveryTrialFails) {
  KillMatrix km = all_caught_but_x();
  add_trials(km, Layer::kScenario, "a/binary_heap", {0.1, 0.1});
  add_trials(km, Layer::kScenario, "b/binary_heap", {std::nullopt, std::nullopt});
  EXPECT_THAT(km.survivors(), ElementsAre("timer_notify_without_lock@scenario:b/binary_heap"));
  EXPECT_EQ(km.exit_code(), 1);
}

// add_cases, once per trial: a scenario's pair is one check, caught in a trial when
// any strategy catches it, and named after the strategy of its fastest catch.
TEST(KillMatrixTrials, AddCasesAddsOneTrialPerCallPerScenario) {
  KillMatrix km;
  const auto layer_of = [](const CaseRecord&) { return Layer::kScenario; };
  km.add_cases({mutant_case("mn", "binary_heap", Verdict::kPass, 1.0),
                mutant_case("mn", "hashed_wheel", Verdict::kFail, 0.4)},
               layer_of);
  km.add_cases({mutant_case("mn", "binary_heap", Verdict::kFail, 0.2)}, layer_of);
  km.add_cases({mutant_case("mn", "binary_heap", Verdict::kPass, 1.0),
                mutant_case("mn", "hashed_wheel", Verdict::kPass, 1.0)},
               layer_of);
  km.add_cases({mutant_case("mn", "binary_heap", Verdict::kError, 1.0)}, layer_of);  // no outcome
  const auto best = km.best(kX, Layer::kScenario);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->trials, 3u);
  EXPECT_EQ(best->detections(), 2u);
  EXPECT_EQ(best->check, "mn/binary_heap");
  EXPECT_DOUBLE_EQ(best->max_s(), 0.4);
}

// One trial per check prints today's table (a time per cell, no rate); more mark
// the rate, FLAKY, the flaky list and the gate's reason.
TEST(KillMatrixTable, ShowsRatesOnlyWithTrials) {
  KillMatrix once = all_caught_but_x();
  add_trials(once, Layer::kScenario, "mn/binary_heap", {0.012});
  EXPECT_THAT(once.table(), HasSubstr("12.0ms"));
  EXPECT_THAT(once.table(), Not(HasSubstr("/1")));
  EXPECT_THAT(once.table(), HasSubstr("cells: fastest time to detection"));

  KillMatrix km = all_caught_but_x();
  km.layer(Layer::kScenario).state = LayerStatus::State::kRan;
  km.layer(Layer::kScenario).trials = 5;
  add_trials(km, Layer::kScenario, "mn/binary_heap", {0.012, 0.030, std::nullopt, 0.010, 0.012});
  const std::string t = km.table();
  EXPECT_THAT(t, HasSubstr("FLAKY 4/5 12.0ms"));
  EXPECT_THAT(t, HasSubstr("x 5 trials"));
  EXPECT_THAT(t, HasSubstr("timer_notify_without_lock@scenario:mn/binary_heap caught 4/5, "
                           "median 12.0ms, max 30.0ms"));
  EXPECT_THAT(t, HasSubstr("ONLY FLAKY DETECTION: timer_notify_without_lock"));
}

// The JSON gives each check's trials, detections, median and max, lists flaky
// checks, and validates against the report schema's kill_matrix.
TEST(KillMatrixJson, CarriesRatesAndValidates) {
  KillMatrix km = all_caught_but_x();
  km.layer(Layer::kScenario).trials = 3;
  add_trials(km, Layer::kScenario, "mn/binary_heap", {0.1, std::nullopt, 0.3});
  const nlohmann::ordered_json j = km.to_json();
  const auto& row = j.at("mutants").at(static_cast<std::size_t>(kX));
  const auto& by = row.at("caught_by").at(0);
  EXPECT_EQ(by.at("trials"), 3);
  EXPECT_EQ(by.at("detections"), 2);
  EXPECT_DOUBLE_EQ(by.at("time_to_detection_s").get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(by.at("max_time_to_detection_s").get<double>(), 0.3);
  EXPECT_TRUE(by.at("flaky").get<bool>());
  EXPECT_EQ(row.at("flaky").size(), 1u);
  EXPECT_EQ(j.at("summary").at("only_flaky"), nlohmann::ordered_json::array({name_of(kX)}));
  EXPECT_EQ(j.at("summary").at("exit_code"), 1);

  // The report schema with only its kill_matrix property: the definitions stay.
  Json schema = Json::parse(embedded_report_schema());
  schema.erase("required");
  schema["properties"] = {{"kill_matrix", {{"$ref", "#/definitions/kill_matrix"}}}};
  const SchemaValidator validator(schema.dump());
  InputErrors errors;
  EXPECT_TRUE(
      validator.validate(Json{{"kill_matrix", Json::parse(j.dump())}}, "kill_matrix.json", errors));
  for (const InputError& e : errors) ADD_FAILURE() << e.str();
}

// A sim check caught at some seeds only fails the gate, although a reliable
// check of another layer catches the mutant (a seed replays exactly, so a miss is
// a schedule the simulation explored and the oracles did not flag).
TEST(KillMatrixSim, SimCheckBelowEveryTrialFailsTheGate) {
  KillMatrix km = all_caught_but_x();
  add_trials(km, Layer::kScenario, "missed_notify/binary_heap", {0.001, 0.001});
  add_trials(km, Layer::kSim, "missed_notify/binary_heap", {0.001, std::nullopt, 0.002});
  EXPECT_THAT(km.sim_unreliable(), ElementsAre(HasSubstr("@sim:missed_notify/binary_heap 2/3")));
  EXPECT_EQ(km.exit_code(), 1);
  EXPECT_THAT(km.table(), HasSubstr("SIM BELOW 100%"));
}

// A mutant the model layer catches and the sim layer targets but never catches at
// every trial is a Relacy/sim disagreement; one sim does not target is not.
TEST(KillMatrixSim, RelacyCatchSimMissesIsADisagreement) {
  KillMatrix km = all_caught_but_x();
  add_trials(km, Layer::kModel, "model.timer.notify/random", {0.5});
  EXPECT_THAT(km.disagreements(), IsEmpty());  // sim has no check of kX
  add_trials(km, Layer::kSim, "missed_notify/binary_heap", {std::nullopt, std::nullopt});
  EXPECT_THAT(km.disagreements(), ElementsAre(HasSubstr("model catches it, sim best 0/")));
  EXPECT_EQ(km.exit_code(), 1);
  EXPECT_THAT(km.to_json()["summary"]["disagreements"].dump(), HasSubstr("sim best"));
}

// When sim catches at every trial, model and sim agree and the gate passes.
TEST(KillMatrixSim, AgreementPasses) {
  KillMatrix km = all_caught_but_x();
  add_trials(km, Layer::kModel, "model.timer.notify/random", {0.5});
  add_trials(km, Layer::kSim, "missed_notify/binary_heap", {0.001, 0.003});
  EXPECT_THAT(km.disagreements(), IsEmpty());
  EXPECT_THAT(km.sim_unreliable(), IsEmpty());
  EXPECT_EQ(km.exit_code(), 0);
}

}  // namespace
}  // namespace tlab::tool
