// tlab/tool/report/report.h: the JSON report of a tlab run, and how it reaches disk.
//
// One document per run (tool/report/report_schema.json, draft 7, is its contract; tests
// validate produced reports against it):
//   schema_version  kReportSchemaVersion; bumped on any incompatible change
//   command         run | check | replay | compare | model | mutants
//   environment     compiler, build type, flags, sanitizer, CPUs, kernel, timer
//                   slack, git revision, tlab version (Environment::detect)
//   scenarios       name -> {source, document}: the scenario as run, so `tlab
//                   replay` needs nothing but the report
//   cases           one per (scenario x strategy x mutant): spec, verdict,
//                   violations {name: {count, first_example}}, counters, latency
//                   {name: histogram summary}, sanitizer_reports, duration_s;
//                   repeated cases also trials, failures, trial_verdicts and
//                   median_detect_us (TrialTally)
//   summary         counts per verdict, mutant pairs caught and survived
//   interrupted     true when Ctrl-C cut the run short (cases holds what ran)
//   until_fail      optional: `run --until-fail N`: the round this report is of
//   kill_matrix     optional: which layer catches which mutant (kill_matrix.h)
//   shard           optional: `--shard i/n` (plan/shard.h): this report holds shard i
//                   of n; plan_cases, plan_digest and scenario_digest describe the
//                   whole (unsharded) plan, and each case carries its plan_index
//   merged          optional: `tlab merge` (report/merge.h): the shards it joined
//
// Files are written atomically (write_file_atomic): readers see the old file or
// the whole new one, never a torn one, also when tlab is killed mid-write.
//
// Costs: to_json O(cases); write_file_atomic one write + two fsyncs + rename.
// Ground rules: a Report is a plain value owned by the CLI thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_input.h"
#include "runner/runner.h"

namespace tlab::tool {

inline constexpr int kReportSchemaVersion = 1;

struct Environment {
  std::string compiler;              // "g++ 12.2.0"
  std::string build_type;            // CMAKE_BUILD_TYPE
  std::string flags;                 // CMAKE_CXX_FLAGS + per-config flags
  std::string sanitizer;             // "none", "thread", "address,undefined", ...
  int cpus_online = 0;               // sysconf(_SC_NPROCESSORS_ONLN)
  int cpus_available = 0;            // sched_getaffinity: what this process may use
  std::string kernel;                // uname: sysname release version machine
  std::int64_t timer_slack_ns = -1;  // prctl(PR_GET_TIMERSLACK); -1 if unavailable
  std::string git_revision;
  std::string tlab_version;

  // Environment::detect: the facts for this process and binary.
  static Environment detect();
  nlohmann::ordered_json to_json() const;
};

// ModelRunRecord: the Relacy side of a `tlab model` case (model_runs.h).
struct ModelRunRecord {
  std::string model;
  std::string test;
  std::string scheduler;  // random | bound | full
  std::optional<unsigned> context_bound;
  std::uint64_t iterations = 0;  // run, the failing one included
  std::optional<std::uint64_t> failing_iteration;
  double iterations_per_second = 0;  // per CPU second
  double cpu_seconds = 0;
  std::string result;  // Relacy's: "no error", "USER ASSERT FAILED", "DEADLOCK", ...
  std::optional<std::string> history;  // the execution history file of a failure
  std::string command;                 // the command line that reproduces the run
};

// TrialTally: a case run N times (`check --repeat N`, `replay --repeat N`;
// plan/trials.h combines the trials). Its record shows one trial (which one:
// trials.h) and this tally of all of them.
struct TrialTally {
  std::vector<Verdict> verdicts;  // one per finished trial, in order; size() = trials
  // Trials that failed: for a mutant (expect_fail) case the trials that caught it
  // (CaseRecord::caught), for a plain case the trials whose verdict is not pass.
  std::uint32_t failures = 0;
  // Mutant cases: the lower median of counters["detect_us"] over the trials that
  // caught it and recorded the counter; nullopt when none did.
  std::optional<std::uint64_t> median_detect_us;
};

// CaseRecord: what the report keeps of one case: its spec, flattened, and result.
// Scenario cases come from a CaseSpec; model cases (model != nullopt) from
// model_runs.h, which also sets scenario/strategy/operations (see there).
struct CaseRecord {
  std::string id;
  std::string scenario;
  std::string strategy;
  std::optional<std::string> mutant;
  std::uint64_t seed = 0;
  std::uint64_t operations = 0;
  double budget_s = 0;
  bool expect_fail = false;
  std::optional<std::string> subject_spec;  // --subject (CaseSpec::subject), for replay
  std::optional<SimSpec> sim;               // --sim (CaseSpec::sim), for replay
  CaseResult result;
  std::optional<ModelRunRecord> model;
  // A property-layer run on a subject (layers/subject_property_run.h): the
  // promises judged and the command line that replays it (replay refuses it).
  std::optional<std::string> property_command;
  // A failed property case: the promise its counterexample breaks, or "abi".
  std::optional<std::string> property_broken;
  // Set when the case ran as N trials (TrialTally).
  std::optional<TrialTally> trials;
  // A mutant case of a detection search (plan/plan.h): the rounds this strategy
  // ran; the record is its catching round's, or its last.
  std::optional<std::uint32_t> search_rounds;
  // Sharded reports only: the case's position in the whole plan, so `tlab merge`
  // restores the unsharded order.
  std::optional<std::size_t> plan_index;

  static CaseRecord from(const CaseSpec& spec, CaseResult result);
  // CaseRecord::caught: for expect_fail cases, whether the mutant was detected
  // (verdict fail; for a scenario case also timeout: the watchdog saw the hang;
  // for a model case a timeout is a search that ran out of time and found nothing).
  bool caught() const;
};

// Outcome: what one case means for the gate, once its (scenario, mutant) pair is
// known. The table, the JUnit XML and the exit code all read it, so they agree:
//   | outcome     | when                                                  | JUnit    | exit |
//   |-------------|-------------------------------------------------------|----------|------|
//   | kPass       | a clean case held every expectation                   | pass     | 0    |
//   | kViolation  | a clean case failed                                   | failure  | 1    |
//   | kCaught     | a mutant (or expected-failure) case failed, as it must | pass     | 0    |
//   | kMissedHere | a mutant case passed, but its pair was caught by      | pass     | 0    |
//   |             | another case (another strategy shows it)              |          |      |
//   | kSurvived   | a mutant case passed and no case of its pair caught it| failure  | 1    |
//   | kError      | error; a clean case's timeout; a model search timeout | error    | 3    |
//   | kInterrupted| Ctrl-C                                                | skipped  | 130  |
enum class Outcome : std::uint8_t {
  kPass,
  kViolation,
  kCaught,
  kMissedHere,
  kSurvived,
  kError,
  kInterrupted
};

struct Summary {
  std::size_t planned = 0;
  std::size_t cases = 0;  // run (or started)
  std::size_t passed = 0, failed = 0, errors = 0, timeouts = 0, interrupted = 0;
  std::size_t not_run = 0;
  std::size_t mutant_pairs = 0;
  std::vector<std::string> mutants_caught;    // "scenario:mutant"
  std::vector<std::string> mutants_survived;  // "scenario:mutant", every case passed
};

struct ScenarioSource {
  std::string source;
  Json document;
};

// pair_key: "scenario:mutant" (or "scenario:expected_failure" for a clean run that
// must fail): the unit `check` gates on.
std::string pair_key(const CaseRecord& c);

// UntilFail: `tlab run --until-fail N`: this report is of round `round` of at most
// `rounds`; with `vary_seed`, round r ran each case at its seed + r - 1 (plan.h).
struct UntilFail {
  std::uint32_t round = 1;
  std::uint32_t rounds = 1;
  bool vary_seed = false;
};

// ShardRecord: a report of one shard of a plan (plan/shard.h). Two shard reports
// belong to one run when command, tlab version, total and both digests agree.
struct ShardRecord {
  std::uint32_t index = 0;
  std::uint32_t total = 1;
  std::size_t plan_cases = 0;   // cases of the whole plan, all shards together
  std::string plan_digest;      // select_shard: every case key of the whole plan
  std::string scenario_digest;  // scenario_set_digest of the report's scenarios
  std::string source;           // "--shard" or the variables it came from
};

// MergedRecord: `tlab merge`'s report: it joined `shards` shard reports of one plan.
struct MergedRecord {
  std::uint32_t shards = 0;
  std::size_t plan_cases = 0;
  std::string plan_digest;
  std::string scenario_digest;
};

struct Report {
  std::string command;
  Environment environment;
  std::map<std::string, ScenarioSource> scenarios;
  std::vector<CaseRecord> cases;
  std::size_t planned = 0;
  bool interrupted = false;
  // `tlab mutants` and `tlab check --models`: KillMatrix::to_json() (kill_matrix.h).
  std::optional<nlohmann::ordered_json> kill_matrix;
  std::optional<UntilFail> until_fail;
  std::optional<ShardRecord> shard;
  std::optional<MergedRecord> merged;

  Summary summary() const;
  // Report::outcome: what case `c` (one of `cases`) means for the gate.
  Outcome outcome(const CaseRecord& c) const;
  // Report::exit_code: 130 interrupted; 3 an error, or a timeout outside a scenario
  // mutant case; 1 a failed case or a surviving mutant; else 0. A `mutants` report
  // exits by its kill matrix's gate (kill_matrix.h), except that a shard's exits 0
  // unless a layer erred (layers/layer_shard.h): the gate is merge's.
  int exit_code() const;
  // Report::to_json: the document; `complete` false marks a report written while
  // the run is still going (a killed run leaves that on disk, never "complete").
  nlohmann::ordered_json to_json(bool complete = true) const;
};

// scenario_set_digest: digest_hex (base/digest.h) of the scenarios' names
// and documents, canonically serialised: equal for equal scenario sets.
std::string scenario_set_digest(const std::map<std::string, ScenarioSource>& scenarios);

// write_file_atomic: writes `content` to `path` through a temporary file in the same
// directory, fsync, rename, fsync of the directory.
// Ensures: on success `path` holds exactly `content`; on failure `path` is
// untouched, the temporary is removed and std::system_error is thrown.
void write_file_atomic(const std::string& path, std::string_view content);

// check_output_path: whether `path` can be created (its directory exists and is
// writable, and it is not a directory). Appends an error for the `flag` otherwise.
bool check_output_path(const std::string& path, const std::string& flag, InputErrors& errors);

// read_report_document: the JSON of report file `path`, validated against the
// report schema; nullopt with errors naming the file and JSON pointer otherwise.
std::optional<Json> read_report_document(const std::string& path, InputErrors& errors);

// ReplayTarget: one case of a stored report, with the scenario it ran.
struct ReplayTarget {
  std::string case_id;
  std::string scenario_source;
  Json scenario_document;
  std::string strategy;
  std::optional<std::string> mutant;
  std::uint64_t seed = 0;
  std::uint64_t operations = 0;
  double budget_s = 0;
  std::optional<std::string> subject_spec;
  std::optional<SimSpec> sim;
  std::string recorded_verdict;
  // The recorded result (a simulated case replays bit for bit: replay compares it).
  CaseResult recorded;
};

// load_replay_target: reads a report file, validates it against the report schema
// and picks case `case_id`; with no id, the only failing case (error if there are
// none or several, listing them).
std::optional<ReplayTarget> load_replay_target(const std::string& path,
                                               const std::optional<std::string>& case_id,
                                               InputErrors& errors);

}  // namespace tlab::tool
