// tlab/tool/layers/kill_matrix.cc: see kill_matrix.h.
#include "layers/kill_matrix.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tlab::tool {

namespace {

std::string_view state_name(LayerStatus::State s) {
  switch (s) {
    case LayerStatus::State::kRan:
      return "ran";
    case LayerStatus::State::kUnavailable:
      return "unavailable";
    case LayerStatus::State::kError:
      return "error";
    case LayerStatus::State::kNotRequested:
      break;
  }
  return "not_requested";
}

std::string human_seconds(double s) {
  if (s <= 0) return "<1ms";  // gtest reports whole milliseconds
  if (s < 1e-3) return fmt::format("{:.0f}us", s * 1e6);
  if (s < 1) return fmt::format("{:.1f}ms", s * 1e3);
  return fmt::format("{:.2f}s", s);
}

double detect_seconds(const CaseRecord& c) {
  if (c.model) return c.model->cpu_seconds;
  const auto it = c.result.counters.find("detect_us");
  if (it != c.result.counters.end()) return static_cast<double>(it->second) / 1e6;
  return c.result.duration_s;
}

std::string detail_of(const CaseRecord& c) {
  std::vector<std::string> parts;
  for (const auto& [name, v] : c.result.violations)
    parts.push_back(fmt::format("{}={}", name, v.count));
  if (!c.result.sanitizer_reports.empty()) parts.emplace_back("sanitizer report");
  if (c.result.verdict == Verdict::kTimeout && !c.model) parts.emplace_back("watchdog: hang");
  if (c.model && c.model->failing_iteration) {
    parts.push_back(
        fmt::format("{} at iteration {}", c.model->result, *c.model->failing_iteration));
  }
  if (parts.empty()) return c.result.verdict == Verdict::kPass ? "no violation" : c.result.message;
  return fmt::format("{}", fmt::join(parts, " "));
}

std::vector<std::string> mutant_names(const std::vector<Mutant>& ms) {
  std::vector<std::string> out;
  for (Mutant m : ms) out.emplace_back(name_of(m));
  return out;
}

}  // namespace

std::string_view name_of(Layer l) { return kLayerNames[static_cast<std::size_t>(l)]; }

std::optional<Layer> layer_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kLayerCount; ++i) {
    if (kLayerNames[i] == name) return static_cast<Layer>(i);
  }
  return std::nullopt;
}

double CheckRecord::median_s() const {
  if (detect_s.empty()) return 0;
  std::vector<double> v = detect_s;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double upper = v[mid];
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

double CheckRecord::max_s() const {
  return detect_s.empty() ? 0 : *std::max_element(detect_s.begin(), detect_s.end());
}

KillMatrix::KillMatrix() : rows_(kMutantCount) {}

void KillMatrix::add_trial(Mutant m, const Detection& d, const std::string& key) {
  // Rows are kept sorted by (layer, key): the order in which checks ran (which
  // differs between a sharded and an unsharded run) never shows, not even in
  // best()'s tie-break.
  auto& row = rows_[static_cast<std::size_t>(m)];
  auto it = std::lower_bound(
      row.begin(), row.end(), std::tie(d.layer, key),
      [](const Row& r, const auto& k) { return std::tie(r.record.layer, r.key) < k; });
  if (it == row.end() || it->record.layer != d.layer || it->key != key) {
    it = row.insert(it, Row{CheckRecord{}, key});
    it->record.layer = d.layer;
    it->record.check = d.check;
  }
  CheckRecord& rec = it->record;
  ++rec.trials;
  if (d.caught) {
    const bool fastest = rec.detect_s.empty() ||
                         d.detect_s < *std::min_element(rec.detect_s.begin(), rec.detect_s.end());
    rec.detect_s.push_back(d.detect_s);
    if (fastest) {
      rec.check = d.check;
      rec.detail = d.detail;
    }
  } else if (!rec.caught()) {
    rec.detail = d.detail;
  }
}

void KillMatrix::add_cases(const std::vector<CaseRecord>& cases,
                           const std::function<Layer(const CaseRecord&)>& layer_of) {
  // One outcome per (layer, scenario, mutant): a scenario's mutant pair is caught
  // when any of its strategies catches it (`tlab check` stops at the first), so a
  // strategy that did not is not a survivor of its own.
  std::map<std::tuple<Layer, std::string, Mutant>, Detection> outcomes;
  for (const CaseRecord& c : cases) {
    if (!c.expect_fail || !c.mutant) continue;
    const auto m = mutant_from_name(*c.mutant);
    if (!m) continue;
    if (c.result.verdict != Verdict::kPass && !c.caught()) continue;  // no outcome
    Detection d;
    d.layer = layer_of(c);
    d.check = c.scenario + "/" + c.strategy;
    d.caught = c.caught();
    d.detect_s = detect_seconds(c);
    d.detail = detail_of(c);
    auto [it, fresh] = outcomes.try_emplace({d.layer, c.scenario, *m}, d);
    Detection& kept = it->second;
    if (!fresh && d.caught && (!kept.caught || d.detect_s < kept.detect_s)) kept = std::move(d);
  }
  for (auto& [key, d] : outcomes) add_trial(std::get<2>(key), d, std::get<1>(key));
}

std::optional<CheckRecord> KillMatrix::best(Mutant m, Layer l) const {
  std::optional<CheckRecord> out;
  for (const Row& r : rows_[static_cast<std::size_t>(m)]) {
    const CheckRecord& c = r.record;
    if (c.layer != l || !c.caught()) continue;
    // Rates compared exactly: a/b > c/d as a*d > c*b.
    const std::size_t lhs = c.detections() * (out ? out->trials : 1);
    const std::size_t rhs = out ? out->detections() * c.trials : 0;
    if (!out || lhs > rhs || (lhs == rhs && c.median_s() < out->median_s())) out = c;
  }
  return out;
}

std::vector<Mutant> KillMatrix::uncaught() const {
  std::vector<Mutant> out;
  for (std::size_t i = 0; i < kMutantCount; ++i) {
    const auto& row = rows_[i];
    if (std::none_of(row.begin(), row.end(), [](const Row& r) { return r.record.caught(); })) {
      out.push_back(static_cast<Mutant>(i));
    }
  }
  return out;
}

std::vector<Mutant> KillMatrix::only_flaky() const {
  std::vector<Mutant> out;
  for (std::size_t i = 0; i < kMutantCount; ++i) {
    const auto& row = rows_[i];
    const bool caught =
        std::any_of(row.begin(), row.end(), [](const Row& r) { return r.record.caught(); });
    const bool reliable =
        std::any_of(row.begin(), row.end(), [](const Row& r) { return r.record.reliable(); });
    if (caught && !reliable) out.push_back(static_cast<Mutant>(i));
  }
  return out;
}

std::vector<std::string> KillMatrix::survivors() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < kMutantCount; ++i) {
    for (const Row& r : rows_[i]) {
      if (r.record.caught()) continue;
      out.push_back(fmt::format("{}@{}:{}", name_of(static_cast<Mutant>(i)),
                                name_of(r.record.layer), r.record.check));
    }
  }
  return out;
}

std::vector<std::string> KillMatrix::flaky_checks() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < kMutantCount; ++i) {
    for (const Row& r : rows_[i]) {
      if (!r.record.flaky()) continue;
      out.push_back(fmt::format("{}@{}:{} {}/{}", name_of(static_cast<Mutant>(i)),
                                name_of(r.record.layer), r.record.check, r.record.detections(),
                                r.record.trials));
    }
  }
  return out;
}

std::vector<std::string> KillMatrix::sim_unreliable() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < kMutantCount; ++i) {
    for (const Row& r : rows_[i]) {
      if (r.record.layer != Layer::kSim || r.record.reliable()) continue;
      out.push_back(fmt::format("{}@sim:{} {}/{}", name_of(static_cast<Mutant>(i)),
                                r.record.check, r.record.detections(), r.record.trials));
    }
  }
  return out;
}

std::vector<std::string> KillMatrix::disagreements() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < kMutantCount; ++i) {
    const auto m = static_cast<Mutant>(i);
    const bool sim_targets = std::any_of(rows_[i].begin(), rows_[i].end(),
                                         [](const Row& r) { return r.record.layer == Layer::kSim; });
    if (!sim_targets || !best(m, Layer::kModel)) continue;
    const auto sim = best(m, Layer::kSim);
    if (sim && sim->reliable()) continue;
    out.push_back(fmt::format("{}: model catches it, sim best {}/{}", name_of(m),
                              sim ? sim->detections() : 0, sim ? sim->trials : layer(Layer::kSim).trials));
  }
  return out;
}

std::size_t KillMatrix::caught_by_at_least(std::size_t layers) const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < kMutantCount; ++i) {
    std::size_t k = 0;
    for (std::size_t l = 0; l < kLayerCount; ++l) {
      if (best(static_cast<Mutant>(i), static_cast<Layer>(l))) ++k;
    }
    if (k >= layers) ++n;
  }
  return n;
}

bool KillMatrix::errored() const {
  return std::any_of(layers_.begin(), layers_.end(),
                     [](const LayerStatus& s) { return s.state == LayerStatus::State::kError; });
}

int KillMatrix::exit_code() const {
  if (errored()) return 3;
  return uncaught().empty() && only_flaky().empty() && survivors().empty() &&
                 sim_unreliable().empty() && disagreements().empty()
             ? 0
             : 1;
}

nlohmann::ordered_json KillMatrix::to_json() const {
  nlohmann::ordered_json j;
  j["layers"] = nlohmann::ordered_json::array();
  for (std::size_t l = 0; l < kLayerCount; ++l) {
    const LayerStatus& s = layers_[l];
    j["layers"].push_back({{"layer", kLayerNames[l]},
                           {"state", state_name(s.state)},
                           {"source", s.source},
                           {"reason", s.reason},
                           {"checks", s.checks},
                           {"trials", s.trials},
                           {"seconds", s.seconds}});
  }
  j["mutants"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < kMutantCount; ++i) {
    const MutantInfo& info = kMutantInfo[i];
    nlohmann::ordered_json row;
    row["name"] = info.name;
    row["component"] = info.component;
    row["failure_class"] = info.failure_class;
    row["caught_by"] = nlohmann::ordered_json::array();
    for (std::size_t l = 0; l < kLayerCount; ++l) {
      const auto d = best(static_cast<Mutant>(i), static_cast<Layer>(l));
      if (!d) continue;
      std::size_t checks = 0;
      for (const Row& x : rows_[i]) checks += x.record.layer == d->layer && x.record.caught();
      row["caught_by"].push_back({{"layer", kLayerNames[l]},
                                  {"time_to_detection_s", d->median_s()},
                                  {"check", d->check},
                                  {"detail", d->detail},
                                  {"checks_catching", checks},
                                  {"trials", d->trials},
                                  {"detections", d->detections()},
                                  {"max_time_to_detection_s", d->max_s()},
                                  {"flaky", d->flaky()}});
    }
    row["survived"] = nlohmann::ordered_json::array();
    row["flaky"] = nlohmann::ordered_json::array();
    for (const Row& x : rows_[i]) {
      const CheckRecord& c = x.record;
      if (!c.caught()) {
        row["survived"].push_back({{"layer", name_of(c.layer)},
                                   {"check", c.check},
                                   {"detail", c.detail},
                                   {"trials", c.trials}});
      } else if (c.flaky()) {
        row["flaky"].push_back({{"layer", name_of(c.layer)},
                                {"check", c.check},
                                {"trials", c.trials},
                                {"detections", c.detections()},
                                {"time_to_detection_s", c.median_s()},
                                {"max_time_to_detection_s", c.max_s()}});
      }
    }
    j["mutants"].push_back(std::move(row));
  }
  j["checks"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < kMutantCount; ++i) {
    for (const Row& x : rows_[i]) {
      j["checks"].push_back({{"mutant", kMutantInfo[i].name},
                             {"layer", name_of(x.record.layer)},
                             {"key", x.key},
                             {"check", x.record.check},
                             {"trials", x.record.trials},
                             {"detect_s", x.record.detect_s},
                             {"detail", x.record.detail}});
    }
  }
  const std::vector<std::string> uncaught_names = mutant_names(uncaught());
  j["summary"] = {{"mutants", kMutantCount},
                  {"caught", kMutantCount - uncaught_names.size()},
                  {"caught_by_two_or_more_layers", caught_by_at_least(2)},
                  {"uncaught", uncaught_names},
                  {"only_flaky", mutant_names(only_flaky())},
                  {"survivors", survivors()},
                  {"sim_unreliable", sim_unreliable()},
                  {"disagreements", disagreements()},
                  {"flaky_checks", flaky_checks()},
                  {"exit_code", exit_code()}};
  return j;
}

std::optional<KillMatrix> KillMatrix::from_json(const nlohmann::ordered_json& j,
                                                std::string& pointer, std::string& error) {
  KillMatrix m;
  // each: f on every element of j[key], with `pointer` naming the one being read.
  const auto each = [&](const char* key, const auto& f) {
    pointer = fmt::format("/{}", key);
    const auto& list = j.at(key);
    for (std::size_t i = 0; i < list.size(); ++i) {
      pointer = fmt::format("/{}/{}", key, i);
      f(list[i]);
    }
  };
  try {
    each("layers", [&](const nlohmann::ordered_json& l) {
      const auto which = layer_from_name(l.at("layer").get<std::string>());
      const std::string state = l.at("state").get<std::string>();
      std::optional<LayerStatus::State> st;
      for (auto s : {LayerStatus::State::kNotRequested, LayerStatus::State::kRan,
                     LayerStatus::State::kUnavailable, LayerStatus::State::kError}) {
        if (state_name(s) == state) st = s;
      }
      if (!which || !st) throw std::invalid_argument("unknown layer or state");
      LayerStatus& out = m.layer(*which);
      out = {*st,
             l.at("source").get<std::string>(),
             l.at("reason").get<std::string>(),
             l.at("checks").get<std::size_t>(),
             l.at("trials").get<std::size_t>(),
             l.at("seconds").get<double>()};
    });
    each("checks", [&](const nlohmann::ordered_json& c) {
      const auto mutant = mutant_from_name(c.at("mutant").get<std::string>());
      const auto layer = layer_from_name(c.at("layer").get<std::string>());
      if (!mutant || !layer) throw std::invalid_argument("unknown mutant or layer");
      CheckRecord rec{*layer, c.at("check").get<std::string>(), c.at("trials").get<std::size_t>(),
                      c.at("detect_s").get<std::vector<double>>(),
                      c.at("detail").get<std::string>()};
      if (rec.detections() > rec.trials) throw std::invalid_argument("more detections than trials");
      const std::string key = c.at("key").get<std::string>();
      if (!m.insert_record(*mutant, std::move(rec), key)) {
        throw std::invalid_argument(fmt::format("check '{}' is listed twice", key));
      }
    });
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
  return m;
}

bool KillMatrix::insert_record(Mutant m, CheckRecord rec, const std::string& key) {
  auto& row = rows_[static_cast<std::size_t>(m)];
  const auto less = [](const Row& a, const Row& b) {
    return std::tie(a.record.layer, a.key) < std::tie(b.record.layer, b.key);
  };
  Row fresh{std::move(rec), key};
  const auto it = std::lower_bound(row.begin(), row.end(), fresh, less);
  if (it != row.end() && !less(fresh, *it)) return false;
  row.insert(it, std::move(fresh));
  return true;
}

std::vector<std::string> KillMatrix::absorb(const KillMatrix& other) {
  // Higher wins: error over ran over unavailable over not_requested.
  const auto rank = [](LayerStatus::State s) {
    switch (s) {
      case LayerStatus::State::kError:
        return 3;
      case LayerStatus::State::kRan:
        return 2;
      case LayerStatus::State::kUnavailable:
        return 1;
      case LayerStatus::State::kNotRequested:
        break;
    }
    return 0;
  };
  for (std::size_t l = 0; l < kLayerCount; ++l) {
    LayerStatus& mine = layers_[l];
    const LayerStatus& theirs = other.layers_[l];
    if (rank(theirs.state) > rank(mine.state)) {
      mine.state = theirs.state;
      mine.reason = theirs.reason;
    }
    if (mine.source.empty()) mine.source = theirs.source;
    mine.checks += theirs.checks;
    mine.trials = std::max(mine.trials, theirs.trials);
    mine.seconds += theirs.seconds;
  }
  std::vector<std::string> twice;
  for (std::size_t i = 0; i < kMutantCount; ++i) {
    const auto m = static_cast<Mutant>(i);
    for (const Row& r : other.rows_[i]) {
      if (!insert_record(m, r.record, r.key)) {
        twice.push_back(fmt::format("{}@{}:{}", name_of(m), name_of(r.record.layer), r.key));
      }
    }
  }
  return twice;
}

namespace {

// cell: the layer's best check of a mutant: its time when it ran once, else its
// detections/trials and median; "FLAKY" marks a rate below 100%.
std::string cell(const CheckRecord& c) {
  if (c.trials <= 1) return human_seconds(c.median_s());
  return fmt::format("{}{}/{} {}", c.flaky() ? "FLAKY " : "", c.detections(), c.trials,
                     human_seconds(c.median_s()));
}

std::string aligned(const std::vector<std::array<std::string, kLayerCount + 1>>& rows) {
  std::array<std::size_t, kLayerCount + 1> width{};
  for (const auto& r : rows) {
    for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t c = 0; c < r.size(); ++c) {
      line += fmt::format("{:<{}}", r[c], width[c]);
      if (c + 1 < r.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string KillMatrix::table() const {
  std::vector<std::array<std::string, kLayerCount + 1>> rows;
  std::array<std::string, kLayerCount + 1> header{"MUTANT"};
  bool trials = false;
  for (std::size_t l = 0; l < kLayerCount; ++l) {
    std::string h(kLayerNames[l]);
    std::transform(h.begin(), h.end(), h.begin(), [](unsigned char c) { return std::toupper(c); });
    if (layers_[l].state != LayerStatus::State::kRan) h += "*";
    header[l + 1] = h;
    trials = trials || layers_[l].trials > 1;
  }
  rows.push_back(header);
  for (std::size_t i = 0; i < kMutantCount; ++i) {
    std::array<std::string, kLayerCount + 1> r;
    r[0] = std::string(kMutantInfo[i].name);
    for (std::size_t l = 0; l < kLayerCount; ++l) {
      const auto d = best(static_cast<Mutant>(i), static_cast<Layer>(l));
      bool targeted = false;
      for (const Row& x : rows_[i]) targeted = targeted || x.record.layer == static_cast<Layer>(l);
      r[l + 1] = d ? cell(*d) : targeted ? "SURVIVED" : "-";
    }
    rows.push_back(r);
  }
  std::string out = aligned(rows);
  out += trials ? "\ncells: the layer's best check: detections/trials and the median time to "
                  "detection over the caught trials (a check run once: its time); FLAKY = "
                  "caught in some trials only; - = no check in that layer targets the mutant\n"
                : "\ncells: fastest time to detection in that layer; - = no check in that layer "
                  "targets the mutant\n";
  for (std::size_t l = 0; l < kLayerCount; ++l) {
    const LayerStatus& s = layers_[l];
    if (s.state == LayerStatus::State::kRan) {
      out += fmt::format("{}: {} checks{} in {:.1f}s ({})\n", kLayerNames[l], s.checks,
                         s.trials > 1 ? fmt::format(" x {} trials", s.trials) : "", s.seconds,
                         s.source);
    } else {
      out += fmt::format("{}*: {}{}\n", kLayerNames[l], state_name(s.state),
                         s.reason.empty() ? "" : ": " + s.reason);
    }
  }
  std::string flaky;
  for (std::size_t i = 0; i < kMutantCount; ++i) {
    for (const Row& x : rows_[i]) {
      const CheckRecord& c = x.record;
      if (!c.flaky()) continue;
      flaky +=
          fmt::format("  {}@{}:{} caught {}/{}, median {}, max {}\n",
                      name_of(static_cast<Mutant>(i)), name_of(c.layer), c.check, c.detections(),
                      c.trials, human_seconds(c.median_s()), human_seconds(c.max_s()));
    }
  }
  if (!flaky.empty()) out += "\nflaky detection (caught in some trials only):\n" + flaky;
  const std::vector<Mutant> missing = uncaught();
  const std::vector<Mutant> unreliable = only_flaky();
  const std::vector<std::string> surv = survivors();
  out += fmt::format("\n{}/{} mutants caught, {} by two or more layers",
                     kMutantCount - missing.size(), kMutantCount, caught_by_at_least(2));
  if (!missing.empty())
    out += fmt::format("; CAUGHT BY NO LAYER: {}", fmt::join(mutant_names(missing), ", "));
  if (!unreliable.empty())
    out += fmt::format("; ONLY FLAKY DETECTION: {}", fmt::join(mutant_names(unreliable), ", "));
  if (!surv.empty()) out += fmt::format("; SURVIVED: {}", fmt::join(surv, ", "));
  if (const auto u = sim_unreliable(); !u.empty())
    out += fmt::format("; SIM BELOW 100%: {}", fmt::join(u, ", "));
  if (const auto d = disagreements(); !d.empty())
    out += fmt::format("; RELACY/SIM DISAGREE: {}", fmt::join(d, ", "));
  out += "\n";
  return out;
}

}  // namespace tlab::tool
