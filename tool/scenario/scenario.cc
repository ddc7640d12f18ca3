// tlab/tool/scenario/scenario.cc: see scenario.h.
#include "scenario/scenario.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/embedded.h"
#include "base/interrupt.h"
#include "base/strategies.h"
#include "base/suggest.h"

namespace tlab::tool {

namespace {

std::vector<std::string_view> mutant_names() {
  std::vector<std::string_view> v;
  for (const MutantInfo& m : kMutantInfo) v.push_back(m.name);
  return v;
}

std::vector<std::string_view> fault_point_names() {
  std::vector<std::string_view> v;
  for (const auto& f : kFaultPointInfo) v.push_back(f.name);
  return v;
}

// Exponential draws are capped where every other duration field is: 600 s.
constexpr double kMaxSampleUs = 600e6;

// Checker: the semantic pass. Holds the file name and the error list so every
// check is one line; `ok()` says whether anything was added.
class Checker {
 public:
  Checker(const std::string& file, InputErrors& errors)
      : file_(file), errors_(errors), start_(errors.size()) {}
  void error(const std::string& pointer, std::string message) {
    errors_.push_back({file_, pointer, std::move(message)});
  }
  bool ok() const { return errors_.size() == start_; }

 private:
  const std::string& file_;
  InputErrors& errors_;
  std::size_t start_;
};

Distribution read_distribution(const Json& j, const std::string& ptr, Checker& check) {
  Distribution d;
  if (auto it = j.find("fixed"); it != j.end()) {
    d.kind = Distribution::Kind::kFixed;
    d.lo = d.hi = it->get<std::int64_t>();
  } else if (auto it = j.find("uniform"); it != j.end()) {
    d.kind = Distribution::Kind::kUniform;
    d.lo = (*it)[0].get<std::int64_t>();
    d.hi = (*it)[1].get<std::int64_t>();
    if (d.lo > d.hi) {
      check.error(append_pointer(ptr, "uniform"),
                  fmt::format("lower bound {} is greater than upper bound {}", d.lo, d.hi));
    }
  } else {
    d.kind = Distribution::Kind::kExponential;
    d.mean = j.at("exponential").get<double>();
  }
  return d;
}

std::optional<Distribution> optional_distribution(const Json& actor, std::string_view key,
                                                  const std::string& ptr, Checker& check) {
  auto it = actor.find(key);
  if (it == actor.end()) return std::nullopt;
  return read_distribution(*it, append_pointer(ptr, key), check);
}

LatencyBound read_bound(const Json& expect, std::string_view key) {
  LatencyBound b;
  auto it = expect.find(key);
  if (it == expect.end()) return b;
  auto get = [&](const char* k) -> std::optional<std::int64_t> {
    if (auto f = it->find(k); f != it->end()) return f->get<std::int64_t>();
    return std::nullopt;
  };
  b.p50_max = get("p50_max");
  b.p90_max = get("p90_max");
  b.p99_max = get("p99_max");
  b.p999_max = get("p999_max");
  b.max = get("max");
  return b;
}

void read_engine(const Json& doc, Scenario& s, Checker& check) {
  auto it = doc.find("engine");
  std::vector<std::string> names{"all"};
  if (it != doc.end()) {
    const Json& e = *it;
    if (e.contains("strategies")) names = e["strategies"].get<std::vector<std::string>>();
    s.engine.tick_us = e.value("tick_us", s.engine.tick_us);
    s.engine.workers = e.value("workers", s.engine.workers);
    s.engine.token_bits = e.value("token_bits", s.engine.token_bits);
    s.engine.pool_size = e.value("pool_size", s.engine.pool_size);
    s.engine.subject = e.value("subject", std::string());
    s.engine.max_pending = e.value("max_pending", std::size_t{0});
    s.engine.clock = e.value("clock", std::string("steady")) == "virtual" ? ClockKind::kVirtual
                                                                          : ClockKind::kSteady;
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string ptr = fmt::format("/engine/strategies/{}", i);
    if (names[i] == "all") {
      if (names.size() != 1) check.error(ptr, "\"all\" must be the only entry when present");
      for (std::string& n : strategy_names()) s.engine.strategies.push_back(std::move(n));
    } else if (!is_strategy(names[i])) {
      check.error(ptr, fmt::format("unknown strategy '{}'{} (known: {})", names[i],
                                   did_you_mean(names[i], strategy_names(/*with_all=*/true)),
                                   fmt::join(strategy_names(/*with_all=*/true), ", ")));
    } else {
      s.engine.strategies.push_back(names[i]);
    }
  }
}

void read_actors(const Json& doc, Scenario& s, Checker& check) {
  const Json& actors = doc.at("actors");
  static constexpr std::array<std::pair<ActorField, std::string_view>, 13> kFieldNames{{
      {kFieldTimeout, "timeout_us"},
      {kFieldDelay, "delay_us"},
      {kFieldPeriod, "period_us"},
      {kFieldHold, "hold_us"},
      {kFieldMode, "mode"},
      {kFieldCancelProbability, "cancel_probability"},
      {kFieldStaleProbability, "stale_probability"},
      {kFieldRearmProbability, "rearm_probability"},
      {kFieldRearmDelay, "rearm_delay_us"},
      {kFieldCallbackRearm, "callback_rearm_probability"},
      {kFieldCallbackRearmDelay, "callback_rearm_delay_us"},
      {kFieldCallbackCancel, "callback_cancel_probability"},
      {kFieldCallbackSelfCancel, "callback_self_cancel_probability"},
  }};
  for (std::size_t i = 0; i < actors.size(); ++i) {
    const Json& a = actors[i];
    const std::string ptr = fmt::format("/actors/{}", i);
    Actor actor;
    actor.role = *role_from_name(a.at("role").get<std::string>());  // schema enum
    actor.count = a.at("count").get<int>();
    const RoleInfo& info = kRoleInfo[static_cast<std::size_t>(actor.role)];
    std::vector<std::string_view> accepted;
    for (const auto& [bit, name] : kFieldNames) {
      if (info.allowed & bit) accepted.push_back(name);
    }
    for (const auto& [bit, name] : kFieldNames) {
      const bool present = a.contains(name);
      if ((info.required & bit) && !present) {
        check.error(append_pointer(ptr, name), fmt::format("required for role '{}'", info.name));
      } else if (!(info.allowed & bit) && present) {
        check.error(append_pointer(ptr, name),
                    fmt::format("not used by role '{}' (it takes: {})", info.name,
                                accepted.empty() ? std::string("no other fields")
                                                 : fmt::format("{}", fmt::join(accepted, ", "))));
      }
    }
    actor.timeout_us = optional_distribution(a, "timeout_us", ptr, check);
    actor.delay_us = optional_distribution(a, "delay_us", ptr, check);
    actor.period_us = optional_distribution(a, "period_us", ptr, check);
    actor.hold_us = optional_distribution(a, "hold_us", ptr, check);
    actor.cancel_probability = a.value("cancel_probability", 0.0);
    if (a.contains("stale_probability"))
      actor.stale_probability = a["stale_probability"].get<double>();
    actor.rearm_probability = a.value("rearm_probability", 0.0);
    actor.rearm_delay_us = optional_distribution(a, "rearm_delay_us", ptr, check);
    if (actor.rearm_delay_us && actor.rearm_probability == 0) {
      check.error(append_pointer(ptr, "rearm_delay_us"),
                  "only used with rearm_probability above 0 (nothing is re-armed)");
    }
    actor.callback_rearm_probability = a.value("callback_rearm_probability", 0.0);
    actor.callback_rearm_delay_us = optional_distribution(a, "callback_rearm_delay_us", ptr, check);
    actor.callback_cancel_probability = a.value("callback_cancel_probability", 0.0);
    actor.callback_self_cancel_probability = a.value("callback_self_cancel_probability", 0.0);
    if (actor.callback_rearm_delay_us && actor.callback_rearm_probability == 0) {
      check.error(append_pointer(ptr, "callback_rearm_delay_us"),
                  "only used with callback_rearm_probability above 0 (no callback re-arms)");
    }
    const std::string mode = a.value("mode", std::string("once"));
    actor.mode = mode == "fixed_rate"        ? ScheduleMode::kFixedRate
                 : mode == "fixed_rate_skip" ? ScheduleMode::kFixedRateSkip
                 : mode == "fixed_delay"     ? ScheduleMode::kFixedDelay
                                             : ScheduleMode::kOnce;
    if (actor.role == Role::kScheduler) {
      if (actor.mode != ScheduleMode::kOnce && !actor.period_us) {
        check.error(append_pointer(ptr, "period_us"),
                    fmt::format("required when mode is '{}'", mode));
      } else if (actor.mode == ScheduleMode::kOnce && actor.period_us) {
        check.error(append_pointer(ptr, "period_us"),
                    "only used when mode is 'fixed_delay', 'fixed_rate' or 'fixed_rate_skip'");
      }
    }
    s.actors.push_back(std::move(actor));
  }
}

void read_faults(const Json& doc, Scenario& s, Checker& check) {
  auto it = doc.find("faults");
  if (it == doc.end()) return;
  std::map<FaultPoint, std::size_t> first_index;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Json& f = (*it)[i];
    const std::string ptr = fmt::format("/faults/{}", i);
    FaultSpec spec;
    const std::string point = f.at("point").get<std::string>();
    auto fp = fault_point_from_name(point);
    if (!fp) {
      check.error(append_pointer(ptr, "point"),
                  fmt::format("unknown fault point '{}'{} (see `tlab list faults`)", point,
                              did_you_mean(point, fault_point_names())));
      continue;
    }
    spec.point = *fp;
    if (auto [pos, fresh] = first_index.emplace(*fp, i); !fresh) {
      check.error(
          append_pointer(ptr, "point"),
          fmt::format("fault point '{}' is already planned at /faults/{}", point, pos->second));
    }
    const std::string action = f.value("action", std::string("delay"));
    spec.action = action == "yield"  ? stress::FaultAction::kYield
                  : action == "spin" ? stress::FaultAction::kSpin
                                     : stress::FaultAction::kDelay;
    spec.probability = f.at("probability").get<double>();
    const bool has_delay = f.contains("delay_us");
    if (spec.action == stress::FaultAction::kYield && has_delay) {
      check.error(append_pointer(ptr, "delay_us"), "not used by action 'yield'");
    } else if (spec.action != stress::FaultAction::kYield && !has_delay) {
      check.error(append_pointer(ptr, "delay_us"), fmt::format("required for action '{}'", action));
    }
    if (has_delay)
      spec.delay_us = read_distribution(f["delay_us"], append_pointer(ptr, "delay_us"), check);
    s.faults.push_back(spec);
  }
}

void read_expect(const Json& doc, Scenario& s) {
  auto it = doc.find("expect");
  if (it == doc.end()) return;
  for (const OracleInfo& o : kOracleInfo) {
    if (!o.boundable) continue;
    const auto i = static_cast<std::size_t>(o.id);
    s.expect.max_violations[i] = it->value(std::string(o.name), std::uint64_t{0});
    if (auto least = it->find("at_least"); least != it->end()) {
      s.expect.min_violations[i] = least->value(std::string(o.name), std::uint64_t{0});
    }
  }
  s.expect.fire_lateness_us = read_bound(*it, "fire_lateness_us");
  s.expect.cancel_to_resume_us = read_bound(*it, "cancel_to_resume_us");
}

void read_catches(const Json& doc, Scenario& s, Checker& check, const char* key = "catches") {
  auto it = doc.find(key);
  if (it == doc.end()) return;
  const std::string_view k = key;
  std::vector<Mutant>& out = k == "catches"        ? s.catches
                             : k == "tsan_catches" ? s.tsan_catches
                                                   : s.sim_catches;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const std::string name = (*it)[i].get<std::string>();
    if (auto m = mutant_from_name(name)) {
      out.push_back(*m);
    } else {
      check.error(fmt::format("/{}/{}", key, i),
                  fmt::format("unknown mutant '{}'{} (see `tlab list mutants`)", name,
                              did_you_mean(name, mutant_names())));
    }
  }
}

}  // namespace

std::int64_t Distribution::sample(std::mt19937_64& rng) const {
  switch (kind) {
    case Kind::kFixed:
      return lo;
    case Kind::kUniform:
      return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
    case Kind::kExponential: {
      const double v = std::exponential_distribution<double>(1.0 / mean)(rng);
      return static_cast<std::int64_t>(std::llround(std::min(v, kMaxSampleUs)));
    }
  }
  return lo;
}

std::optional<Role> role_from_name(std::string_view name) {
  for (const auto& row : kRoleInfo) {
    if (row.name == name) return row.id;
  }
  return std::nullopt;
}

int Scenario::total_threads() const {
  int n = engine.workers;
  for (const Actor& a : actors) n += a.count;
  return n;
}

std::array<stress::FaultPlan, kFaultPointCount> Scenario::fault_plans() const {
  std::array<stress::FaultPlan, kFaultPointCount> plans{};
  for (const FaultSpec& f : faults) {
    stress::FaultPlan& p = plans[static_cast<std::size_t>(f.point)];
    p.action = f.action;
    p.probability = f.probability;
    p.min_ns = static_cast<std::uint64_t>(f.delay_us.lo) * 1000;
    p.max_ns = static_cast<std::uint64_t>(f.delay_us.hi) * 1000;
  }
  return plans;
}

ScenarioLoader::ScenarioLoader() : schema_(embedded_scenario_schema()) {}

std::optional<Scenario> ScenarioLoader::load_file(const std::string& path,
                                                  InputErrors& errors) const {
  std::string text;
  if (!read_text_file(path, text, errors)) return std::nullopt;
  return load_text(text, path, errors);
}

std::optional<Scenario> ScenarioLoader::load_text(std::string_view text, const std::string& source,
                                                  InputErrors& errors) const {
  auto doc = parse_json_text(text, source, errors);
  if (!doc) return std::nullopt;
  return load_document(*doc, source, errors);
}

std::optional<Scenario> ScenarioLoader::load_document(const Json& doc, const std::string& source,
                                                      InputErrors& errors) const {
  // Lengths before patterns: valijson checks `pattern` with std::regex, which
  // recurses once per character (a 28 KB name overflowed the stack), and it does so
  // even after maxLength failed. No field takes more than kMaxStringBytes, so a
  // longer string is refused here, before the schema sees it. Iterative walk: no
  // recursion proportional to the input here either.
  const std::size_t before = errors.size();
  std::vector<std::pair<const Json*, std::string>> stack{{&doc, ""}};
  while (!stack.empty()) {
    auto [j, ptr] = std::move(stack.back());
    stack.pop_back();
    if (j->is_string()) {
      const std::size_t n = j->get_ref<const std::string&>().size();
      if (n > kMaxStringBytes) {
        errors.push_back(
            {source, ptr.empty() ? "/" : ptr,
             fmt::format("string of {} bytes; no field takes more than {}", n, kMaxStringBytes)});
      }
    } else if (j->is_object()) {
      for (auto it = j->begin(); it != j->end(); ++it) {
        if (it.key().size() > kMaxStringBytes) {
          errors.push_back(
              {source, ptr.empty() ? "/" : ptr,
               fmt::format("a key of {} bytes; no key is longer than 64", it.key().size())});
          continue;
        }
        stack.emplace_back(&it.value(), append_pointer(ptr, it.key()));
      }
    } else if (j->is_array()) {
      for (std::size_t i = 0; i < j->size(); ++i) {
        stack.emplace_back(&(*j)[i], fmt::format("{}/{}", ptr, i));
      }
    }
  }
  if (errors.size() != before) return std::nullopt;
  if (!schema_.validate(doc, source, errors)) return std::nullopt;
  // The schema guarantees every type and range read below; the semantic checks add
  // what a schema cannot know.
  Checker check(source, errors);
  Scenario s;
  s.source = source;
  s.document = doc;
  s.name = doc.at("name").get<std::string>();
  s.description = doc.at("description").get<std::string>();
  read_engine(doc, s, check);
  read_actors(doc, s, check);
  read_faults(doc, s, check);
  const Json& run = doc.at("run");
  s.run.operations = run.at("operations").get<std::uint64_t>();
  s.run.budget_s = run.at("budget_s").get<double>();
  s.run.seed = run.value("seed", s.run.seed);
  s.run.max_pending = run.value("max_pending", s.run.max_pending);
  if (run.contains("sim")) {
    // The schema's enum admits only the names sim_strategy_from_name knows.
    s.run.sim = SimSpec{.strategy = *sim_strategy_from_name(run["sim"].get<std::string>())};
  }
  read_expect(doc, s);
  read_catches(doc, s, check);
  read_catches(doc, s, check, "tsan_catches");
  read_catches(doc, s, check, "sim_catches");
  if (!s.sim_catches.empty() && !s.engine.subject.empty()) {
    // A built-in subject runs through the generic driver on real threads, never
    // simulated: these pairs would never run.
    check.error("/sim_catches",
                "a scenario on a built-in subject (engine.subject) never runs "
                "under simulation; list its mutants in catches");
  }
  if (const int threads = s.total_threads(); threads > kMaxThreads) {
    check.error("/actors", fmt::format("{} threads (actor counts plus engine.workers) exceed the "
                                       "cap of {}",
                                       threads, kMaxThreads));
  }
  if (!check.ok()) return std::nullopt;
  return s;
}

std::vector<Scenario> ScenarioLoader::load_paths(const std::vector<std::string>& paths,
                                                 InputErrors& errors) const {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(p, ec)) {
        const fs::path& f = entry.path();
        if (f.extension() == ".json" && f.filename() != "schema.json" &&
            entry.is_regular_file(ec)) {
          found.push_back(f.string());
        }
      }
      if (ec) errors.push_back({p, "/", fmt::format("cannot list directory: {}", ec.message())});
      std::sort(found.begin(), found.end());
      if (found.empty() && !ec) errors.push_back({p, "/", "directory holds no scenario files"});
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }
  std::vector<Scenario> out;
  std::map<std::string, std::string> seen;  // name -> source
  for (const std::string& f : files) {
    if (interrupted()) break;  // Ctrl-C: the caller says so (exit 130); no more files
    auto s = load_file(f, errors);
    if (!s) continue;
    if (auto [it, fresh] = seen.emplace(s->name, f); !fresh) {
      errors.push_back(
          {f, "/name", fmt::format("scenario name '{}' is also used by {}", s->name, it->second)});
      continue;
    }
    out.push_back(std::move(*s));
  }
  return out;
}

std::vector<Scenario> ScenarioLoader::load_builtin(InputErrors& errors) const {
  std::vector<Scenario> out;
  for (const EmbeddedFile& f : embedded_scenarios()) {
    if (auto s = load_text(f.text, fmt::format("builtin:{}", f.name), errors)) {
      out.push_back(std::move(*s));
    }
  }
  return out;
}

}  // namespace tlab::tool
