// tlab/tool/report/report.cc: see report.h.
#include "report/report.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/build_info.h"
#include "base/digest.h"
#include "base/embedded.h"

namespace tlab::tool {

namespace {

std::string compiler_string() {
#if defined(__clang__)
  return fmt::format("clang++ {}", __clang_version__);
#elif defined(__GNUC__)
  return fmt::format("g++ {}", __VERSION__);
#else
  return "unknown";
#endif
}

std::string sanitizer_string() {
#if defined(TLAB_SANITIZER)
  return TLAB_SANITIZER;
#elif defined(__SANITIZE_THREAD__)
  return "thread";
#elif defined(__SANITIZE_ADDRESS__)
  return "address";
#else
  return "none";
#endif
}

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

nlohmann::ordered_json case_json(const CaseRecord& c) {
  nlohmann::ordered_json j;
  j["id"] = c.id;
  j["scenario"] = c.scenario;
  j["strategy"] = c.strategy;
  j["mutant"] = c.mutant ? nlohmann::ordered_json(*c.mutant) : nlohmann::ordered_json(nullptr);
  j["seed"] = c.seed;
  j["operations"] = c.operations;
  j["budget_s"] = c.budget_s;
  j["expect_fail"] = c.expect_fail;
  if (c.subject_spec) j["subject_spec"] = *c.subject_spec;
  if (c.sim) {
    j["sim"] = {{"strategy", name_of(c.sim->strategy)}, {"pct_depth", c.sim->pct_depth}};
  }
  // The result's own JSON (types/case_result.h), with "caught" after the verdict.
  const nlohmann::ordered_json result = c.result.to_json();
  for (auto it = result.begin(); it != result.end(); ++it) {
    j[it.key()] = it.value();
    if (it.key() == "verdict" && c.expect_fail) j["caught"] = c.caught();
  }
  if (c.model) {
    const ModelRunRecord& m = *c.model;
    auto opt = [](const auto& v) {
      return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
    };
    j["model"] = {{"model", m.model},
                  {"test", m.test},
                  {"scheduler", m.scheduler},
                  {"context_bound", opt(m.context_bound)},
                  {"iterations", m.iterations},
                  {"failing_iteration", opt(m.failing_iteration)},
                  {"iterations_per_second", m.iterations_per_second},
                  {"cpu_seconds", m.cpu_seconds},
                  {"result", m.result},
                  {"history", opt(m.history)},
                  {"command", m.command}};
  }
  if (c.property_command) j["property"] = {{"command", *c.property_command}};
  if (c.property_command && c.property_broken) j["property"]["broken"] = *c.property_broken;
  if (c.plan_index) j["plan_index"] = *c.plan_index;
  if (c.search_rounds) j["search_rounds"] = *c.search_rounds;
  if (c.trials) {
    const TrialTally& t = *c.trials;
    j["trials"] = t.verdicts.size();
    j["failures"] = t.failures;
    nlohmann::ordered_json verdicts = nlohmann::ordered_json::array();
    for (Verdict v : t.verdicts) verdicts.push_back(std::string(name_of(v)));
    j["trial_verdicts"] = std::move(verdicts);
    if (t.median_detect_us) j["median_detect_us"] = *t.median_detect_us;
  }
  return j;
}

}  // namespace

Environment Environment::detect() {
  Environment e;
  e.compiler = compiler_string();
  e.build_type = kBuildType;
  e.flags = kCxxFlags;
  e.sanitizer = sanitizer_string();
  e.cpus_online = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  cpu_set_t set;
  CPU_ZERO(&set);
  e.cpus_available =
      ::sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : e.cpus_online;
  struct utsname u {};
  if (::uname(&u) == 0) {
    e.kernel = fmt::format("{} {} {} {}", u.sysname, u.release, u.version, u.machine);
  } else {
    e.kernel = "unknown";
  }
  const int slack = ::prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  e.timer_slack_ns = slack >= 0 ? slack : -1;
  e.git_revision = kGitRevision;
  e.tlab_version = kTlabVersion;
  return e;
}

nlohmann::ordered_json Environment::to_json() const {
  nlohmann::ordered_json j;
  j["compiler"] = compiler;
  j["build_type"] = build_type;
  j["flags"] = flags;
  j["sanitizer"] = sanitizer;
  j["cpus"] = {{"online", cpus_online}, {"available", cpus_available}};
  j["kernel"] = kernel;
  j["timer_slack_ns"] = timer_slack_ns;
  j["git_revision"] = git_revision;
  j["tlab_version"] = tlab_version;
  return j;
}

CaseRecord CaseRecord::from(const CaseSpec& spec, CaseResult result) {
  CaseRecord c;
  c.id = spec.id;
  c.scenario = spec.scenario ? spec.scenario->name : std::string();
  c.strategy = spec.strategy;
  if (spec.mutant) c.mutant = std::string(name_of(*spec.mutant));
  c.seed = spec.seed;
  c.operations = spec.operations;
  c.budget_s = spec.budget_s;
  c.expect_fail = spec.expect_fail;
  if (!spec.subject.empty()) c.subject_spec = spec.subject;
  c.sim = spec.sim;
  c.result = std::move(result);
  return c;
}

bool CaseRecord::caught() const {
  if (model) return result.verdict == Verdict::kFail;
  return result.verdict == Verdict::kFail || result.verdict == Verdict::kTimeout;
}

Summary Report::summary() const {
  Summary s;
  s.planned = planned;
  s.cases = cases.size();
  // A (scenario, mutant) pair is caught when any of its cases caught it; it
  // survived when all its cases ran to a verdict and none did.
  std::map<std::string, std::pair<bool, bool>> pairs;  // key -> {caught, complete}
  for (const CaseRecord& c : cases) {
    switch (c.result.verdict) {
      case Verdict::kPass:
        ++s.passed;
        break;
      case Verdict::kFail:
        ++s.failed;
        break;
      case Verdict::kError:
        ++s.errors;
        break;
      case Verdict::kTimeout:
        ++s.timeouts;
        break;
      case Verdict::kInterrupted:
        ++s.interrupted;
        break;
    }
    if (c.expect_fail) {
      // A clean run that must fail (a model's expected finding) counts as a pair
      // too: if it passes, the check it stands for has lost its teeth.
      auto& [caught, complete] = pairs.try_emplace(pair_key(c), false, true).first->second;
      caught = caught || c.caught();
      complete = complete && (c.result.verdict == Verdict::kPass || c.caught());
    }
  }
  s.not_run = planned > cases.size() ? planned - cases.size() : 0;
  s.mutant_pairs = pairs.size();
  for (const auto& [key, state] : pairs) {
    if (state.first) {
      s.mutants_caught.push_back(key);
    } else if (state.second && !interrupted) {
      s.mutants_survived.push_back(key);
    }
  }
  return s;
}

std::string pair_key(const CaseRecord& c) {
  return c.scenario + ":" + c.mutant.value_or("expected_failure");
}

Outcome Report::outcome(const CaseRecord& c) const {
  const Verdict v = c.result.verdict;
  if (v == Verdict::kInterrupted) return Outcome::kInterrupted;
  if (v == Verdict::kError) return Outcome::kError;
  if (!c.expect_fail) {
    if (v == Verdict::kTimeout) return Outcome::kError;
    return v == Verdict::kFail ? Outcome::kViolation : Outcome::kPass;
  }
  // A model search that ran out of time decided nothing; a scenario's watchdog
  // timeout is a caught hang (CaseRecord::caught).
  if (c.model && v == Verdict::kTimeout) return Outcome::kError;
  if (c.caught()) return Outcome::kCaught;
  const std::string key = pair_key(c);
  for (const CaseRecord& other : cases) {
    if (&other != &c && other.expect_fail && other.caught() && pair_key(other) == key) {
      return Outcome::kMissedHere;
    }
  }
  return Outcome::kSurvived;
}

int Report::exit_code() const {
  if (interrupted) return 130;
  if (command == "mutants" && kill_matrix) {
    // The kill matrix's gate (kill_matrix.h); a shard's part of it is no gate
    // (layer_shard.h): only a layer error counts there.
    const int gate = kill_matrix->at("summary").at("exit_code").get<int>();
    return shard && gate != 3 ? 0 : gate;
  }
  bool internal = false;
  bool violation = false;
  for (const CaseRecord& c : cases) {
    const Verdict v = c.result.verdict;
    if (c.expect_fail) {
      // A scenario's watchdog timeout is a caught hang; a model search that ran
      // out of time decided nothing.
      internal = internal || v == Verdict::kError || (c.model && v == Verdict::kTimeout);
    } else {
      internal = internal || v == Verdict::kError || v == Verdict::kTimeout;
      violation = violation || v == Verdict::kFail;
    }
  }
  if (internal) return 3;
  if (violation || !summary().mutants_survived.empty()) return 1;
  return 0;
}

nlohmann::ordered_json Report::to_json(bool complete) const {
  nlohmann::ordered_json j;
  j["schema_version"] = kReportSchemaVersion;
  j["command"] = command;
  j["environment"] = environment.to_json();
  j["interrupted"] = interrupted;
  j["complete"] = complete && !interrupted;
  j["scenarios"] = nlohmann::ordered_json::object();
  for (const auto& [name, src] : scenarios) {
    j["scenarios"][name] = {{"source", src.source},
                            {"document", nlohmann::ordered_json::parse(src.document.dump())}};
  }
  j["cases"] = nlohmann::ordered_json::array();
  for (const CaseRecord& c : cases) j["cases"].push_back(case_json(c));
  if (kill_matrix) j["kill_matrix"] = *kill_matrix;
  if (until_fail) {
    j["until_fail"] = {{"round", until_fail->round},
                       {"rounds", until_fail->rounds},
                       {"vary_seed", until_fail->vary_seed}};
  }
  if (shard) {
    j["shard"] = {{"index", shard->index},
                  {"total", shard->total},
                  {"plan_cases", shard->plan_cases},
                  {"plan_digest", shard->plan_digest},
                  {"scenario_digest", shard->scenario_digest},
                  {"source", shard->source}};
  }
  if (merged) {
    j["merged"] = {{"shards", merged->shards},
                   {"plan_cases", merged->plan_cases},
                   {"plan_digest", merged->plan_digest},
                   {"scenario_digest", merged->scenario_digest}};
  }
  const Summary s = summary();
  j["summary"] = {{"planned", s.planned},
                  {"cases", s.cases},
                  {"passed", s.passed},
                  {"failed", s.failed},
                  {"errors", s.errors},
                  {"timeouts", s.timeouts},
                  {"interrupted", s.interrupted},
                  {"not_run", s.not_run},
                  {"mutant_pairs", s.mutant_pairs},
                  {"mutants_caught", s.mutants_caught},
                  {"mutants_survived", s.mutants_survived},
                  {"exit_code", exit_code()}};
  return j;
}

std::string scenario_set_digest(const std::map<std::string, ScenarioSource>& scenarios) {
  // The map is ordered by name and dump() sorts object keys: one byte string per set.
  std::string all;
  for (const auto& [name, src] : scenarios) {
    all += name + '\n' + src.document.dump() + '\n';
  }
  return digest_hex(all);
}

void write_file_atomic(const std::string& path, std::string_view content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw_errno("cannot create a temporary file next to " + path);
  auto fail = [&](const std::string& what) {
    const int saved = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    errno = saved;
    throw_errno(what);
  };
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write " + path + " (through " + tmpl + ", now removed)");
    }
    done += static_cast<std::size_t>(n);
  }
  // mkstemp creates 0600; a report is an ordinary file.
  if (::fchmod(fd, 0644) != 0) fail("cannot chmod " + tmpl);
  if (::fsync(fd) != 0) fail("cannot write " + path + " (fsync of " + tmpl + ", now removed)");
  if (::close(fd) != 0) {
    ::unlink(tmpl.c_str());
    throw_errno("cannot close " + tmpl);
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmpl.c_str());
    errno = saved;
    throw_errno("cannot rename " + tmpl + " to " + path);
  }
  // Make the rename itself durable.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

bool check_output_path(const std::string& path, const std::string& flag, InputErrors& errors) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (path.empty()) {
    errors.push_back({flag, "/", "empty file name"});
    return false;
  }
  if (fs::is_directory(p, ec)) {
    errors.push_back({path, "/", fmt::format("{}: is a directory", flag)});
    return false;
  }
  // Reports are written only as regular files (atomically, by rename): a symbolic
  // link or a device node in the way is refused, never replaced or written through.
  const fs::file_status st = fs::symlink_status(p, ec);
  if (!ec && fs::is_symlink(st)) {
    errors.push_back({path, "/",
                      fmt::format("{}: is a symbolic link; tlab writes reports only as regular "
                                  "files (name the target instead)",
                                  flag)});
    return false;
  }
  if (!ec && fs::exists(st) && !fs::is_regular_file(st)) {
    errors.push_back(
        {path, "/",
         fmt::format("{}: is not a regular file (a device, FIFO or socket); tlab writes reports "
                     "only as regular files",
                     flag)});
    return false;
  }
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec) || ::access(dir.c_str(), W_OK | X_OK) != 0) {
    errors.push_back(
        {path, "/",
         fmt::format("{}: directory {} does not exist or is not writable", flag, dir.string())});
    return false;
  }
  return true;
}

std::optional<Json> read_report_document(const std::string& path, InputErrors& errors) {
  std::string text;
  if (!read_text_file(path, text, errors)) return std::nullopt;
  auto doc = parse_json_text(text, path, errors);
  if (!doc) return std::nullopt;
  static const SchemaValidator validator(embedded_report_schema());
  if (!validator.validate(*doc, path, errors)) return std::nullopt;
  return doc;
}

std::optional<ReplayTarget> load_replay_target(const std::string& path,
                                               const std::optional<std::string>& case_id,
                                               InputErrors& errors) {
  auto doc = read_report_document(path, errors);
  if (!doc) return std::nullopt;
  const Json& cases = doc->at("cases");
  std::optional<std::size_t> index;
  if (case_id) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if (cases[i].at("id") == *case_id) index = i;
    }
    if (!index) {
      std::vector<std::string> ids;
      for (const Json& c : cases) ids.push_back(c.at("id").get<std::string>());
      errors.push_back(
          {path, "/cases",
           fmt::format("no case with id '{}' (ids: {})", *case_id, fmt::join(ids, ", "))});
      return std::nullopt;
    }
  } else {
    std::vector<std::size_t> failing;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const std::string v = cases[i].at("verdict").get<std::string>();
      if (v != "pass" && !cases[i].at("expect_fail").get<bool>()) failing.push_back(i);
    }
    if (failing.size() != 1) {
      std::vector<std::string> ids;
      for (std::size_t i : failing) ids.push_back(cases[i].at("id").get<std::string>());
      errors.push_back({path, "/cases",
                        failing.empty()
                            ? std::string("no failing case to replay; name one with --case")
                            : fmt::format("{} failing cases; pick one with --case ({})",
                                          failing.size(), fmt::join(ids, ", "))});
      return std::nullopt;
    }
    index = failing.front();
  }
  const Json& c = cases[*index];
  const std::string ptr = fmt::format("/cases/{}", *index);
  if (c.contains("property")) {
    errors.push_back({path, ptr,
                      fmt::format("case {} is a property-layer run, not a scenario; re-run it "
                                  "with: {}",
                                  c.at("id").get<std::string>(),
                                  c.at("property").at("command").get<std::string>())});
    return std::nullopt;
  }
  if (c.contains("model")) {
    errors.push_back({path, ptr,
                      fmt::format("case {} is a Relacy model run, not a scenario; Relacy runs "
                                  "are deterministic, re-run it with: {}",
                                  c.at("id").get<std::string>(),
                                  c.at("model").at("command").get<std::string>())});
    return std::nullopt;
  }
  const std::string scenario = c.at("scenario").get<std::string>();
  const Json& scenarios = doc->at("scenarios");
  if (!scenarios.contains(scenario)) {
    errors.push_back({path, append_pointer(ptr, "scenario"),
                      fmt::format("scenario '{}' is not embedded in /scenarios", scenario)});
    return std::nullopt;
  }
  ReplayTarget t;
  t.case_id = c.at("id").get<std::string>();
  t.scenario_source = scenarios[scenario].at("source").get<std::string>();
  t.scenario_document = scenarios[scenario].at("document");
  t.strategy = c.at("strategy").get<std::string>();
  if (!c.at("mutant").is_null()) t.mutant = c.at("mutant").get<std::string>();
  t.seed = c.at("seed").get<std::uint64_t>();
  t.operations = c.at("operations").get<std::uint64_t>();
  t.budget_s = c.at("budget_s").get<double>();
  if (c.contains("subject_spec")) t.subject_spec = c.at("subject_spec").get<std::string>();
  if (c.contains("sim")) {
    // The schema admits only the catalogued names.
    t.sim = SimSpec{*sim_strategy_from_name(c.at("sim").at("strategy").get<std::string>()),
                    c.at("sim").at("pct_depth").get<int>()};
  }
  t.recorded_verdict = c.at("verdict").get<std::string>();
  t.recorded = CaseResult::from_json(c);
  return t;
}

}  // namespace tlab::tool
