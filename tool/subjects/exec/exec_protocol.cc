// tlab/tool/subjects/exec/exec_protocol.cc: see exec_protocol.h.
#include "subjects/exec/exec_protocol.h"

#include <array>
#include <memory>

#include <fmt/format.h>

#include "base/embedded.h"
#include "base/json_input.h"
#include "tlab/subject.h"

namespace tlab::tool::exec {

namespace {

struct TypeInfo {
  MessageType type;
  std::string_view name;
};
// What a subject may send; the other $defs (schedule, cancel, shutdown) are tlab's.
constexpr std::array<TypeInfo, 6> kSubjectTypes{{
    {MessageType::kHello, "hello"},
    {MessageType::kScheduled, "scheduled"},
    {MessageType::kCancelled, "cancelled"},
    {MessageType::kError, "error"},
    {MessageType::kFired, "fired"},
    {MessageType::kPending, "pending"},
}};
constexpr std::array<std::string_view, 3> kHostTypes{"schedule", "cancel", "shutdown"};

// One compiled validator per subject message type, from $defs of the embedded
// schema (each definition is self-contained: no $ref).
const std::array<std::unique_ptr<SchemaValidator>, kSubjectTypes.size()>& validators() {
  static const auto v = [] {
    std::array<std::unique_ptr<SchemaValidator>, kSubjectTypes.size()> out;
    const nlohmann::json schema = nlohmann::json::parse(embedded_protocol_schema());
    for (std::size_t i = 0; i < kSubjectTypes.size(); ++i) {
      nlohmann::json def = schema.at("$defs").at(std::string(kSubjectTypes[i].name));
      def["$schema"] = schema.at("$schema");
      out[i] = std::make_unique<SchemaValidator>(def.dump());
    }
    return out;
  }();
  return v;
}

struct PeriodicInfo {
  std::uint32_t kind;
  std::string_view name;
};
constexpr std::array<PeriodicInfo, 3> kPeriodicKinds{{
    {TLAB_PERIODIC_FIXED_RATE, "fixed_rate"},
    {TLAB_PERIODIC_FIXED_RATE_SKIP, "fixed_rate_skip"},
    {TLAB_PERIODIC_FIXED_DELAY, "fixed_delay"},
}};

std::optional<CancelResult> result_from(std::string_view s) {
  if (s == "prevented") return CancelResult::kPrevented;
  if (s == "too_late") return CancelResult::kTooLate;
  if (s == "unknown") return CancelResult::kUnknown;
  return std::nullopt;
}

}  // namespace

std::string_view periodic_name(std::uint32_t kind) {
  for (const PeriodicInfo& p : kPeriodicKinds) {
    if (p.kind == kind) return p.name;
  }
  return "?";
}

std::optional<std::uint32_t> periodic_from(std::string_view name) {
  for (const PeriodicInfo& p : kPeriodicKinds) {
    if (p.name == name) return p.kind;
  }
  return std::nullopt;
}

std::string_view name_of(MessageType t) { return kSubjectTypes[static_cast<std::size_t>(t)].name; }

std::string quote_line(std::string_view line) {
  constexpr std::size_t kShown = 160;
  std::string shown(line.substr(0, kShown));
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  }
  return fmt::format("`{}`{}", shown, line.size() > kShown ? " (shortened)" : "");
}

std::optional<Message> read_message(std::string_view line, std::uint64_t number, std::string& why) {
  const std::string where = fmt::format("line {} {}", number, quote_line(line));
  auto refuse = [&](std::string_view pointer, const std::string& what) {
    why = fmt::format("{}: {}: {}", where, pointer, what);
    return std::nullopt;
  };
  if (line.size() > kMaxLineBytes) {
    return refuse("/", fmt::format("longer than {} bytes", kMaxLineBytes));
  }
  InputErrors errors;
  std::optional<nlohmann::json> doc = parse_json_text(line, "line", errors);
  if (!doc) return refuse(errors.front().pointer, errors.front().message);
  if (!doc->is_object())
    return refuse("/", fmt::format("is a JSON {}, not an object", type_name(*doc)));
  auto t = doc->find("type");
  if (t == doc->end()) return refuse("/type", "missing: every message has a \"type\"");
  if (!t->is_string()) return refuse("/type", fmt::format("is a {}, not a string", type_name(*t)));
  const std::string type = t->get<std::string>();
  std::size_t k = 0;
  while (k < kSubjectTypes.size() && kSubjectTypes[k].name != type) ++k;
  if (k == kSubjectTypes.size()) {
    for (std::string_view h : kHostTypes) {
      if (h == type) {
        return refuse("/type",
                      fmt::format("\"{}\" is a message tlab sends, not the subject", type));
      }
    }
    return refuse("/type", fmt::format("unknown message type \"{}\" (the subject sends hello, "
                                       "scheduled, cancelled, error, fired or pending)",
                                       type));
  }
  if (!validators()[k]->validate(*doc, "line", errors)) {
    return refuse(errors.front().pointer, errors.front().message);
  }
  Message m;
  m.type = kSubjectTypes[k].type;
  const nlohmann::json& j = *doc;
  switch (m.type) {
    case MessageType::kHello:
      m.doc = std::move(*doc);
      break;
    case MessageType::kScheduled:
    case MessageType::kFired:
      m.id = j.at("id").get<std::uint64_t>();
      m.t_ns = j.at("t_ns").get<std::int64_t>();
      m.by = j.value("by", std::uint64_t{0});
      break;
    case MessageType::kCancelled:
      m.id = j.at("id").get<std::uint64_t>();
      m.by = j.value("by", std::uint64_t{0});
      m.result = result_from(j.at("result").get<std::string>()).value();  // the schema's enum
      break;
    case MessageType::kError:
      m.id = j.at("id").get<std::uint64_t>();
      m.by = j.value("by", std::uint64_t{0});
      m.text = j.at("message").get<std::string>();
      break;
    case MessageType::kPending:
      m.ids = j.at("ids").get<std::vector<std::uint64_t>>();
      break;
  }
  return m;
}

Hello hello_of(const Message& hello) {
  const nlohmann::json& j = hello.doc;
  Hello h;
  h.name = j.at("name").get<std::string>();
  h.version = j.at("version").get<std::string>();
  h.summary = j.value("summary", std::string());
  for (const nlohmann::json& p : j.at("promises")) {
    h.promise_names.push_back(p.get<std::string>());
    h.promises = h.promises | promise_from_name(h.promise_names.back()).value();  // the enum
  }
  if (auto f = j.find("features"); f != j.end()) {
    for (const nlohmann::json& x : *f) {
      h.can_fail = h.can_fail || x == "fail";
      h.scripts = h.scripts || x == "scripts";
    }
  }
  if (auto p = j.find("periodic"); p != j.end()) {
    for (const nlohmann::json& x : *p) h.periodic |= periodic_from(x.get<std::string>()).value();
  }
  h.max_delay_ns = j.value("max_delay_ns", std::int64_t{0});
  return h;
}

std::string schedule_line(std::uint64_t id, std::int64_t delay_ns, bool fail) {
  return fail ? fmt::format(R"({{"type":"schedule","id":{},"delay_ns":{},"fail":true}})"
                            "\n",
                            id, delay_ns)
              : fmt::format(R"({{"type":"schedule","id":{},"delay_ns":{}}})"
                            "\n",
                            id, delay_ns);
}

std::string schedule_periodic_line(std::uint64_t id, std::int64_t delay_ns, std::int64_t period_ns,
                                   std::uint32_t kind) {
  return fmt::format(R"({{"type":"schedule","id":{},"delay_ns":{},"period_ns":{},"periodic":"{}"}})"
                     "\n",
                     id, delay_ns, period_ns, periodic_name(kind));
}

namespace {
nlohmann::json actions_json(const std::vector<runner::ScriptAction>& then) {
  nlohmann::json out = nlohmann::json::array();
  for (const runner::ScriptAction& a : then) {
    nlohmann::json j;
    if (a.cancel) {
      j = {{"do", "cancel"}, {"id", a.id}};
    } else {
      j = {{"do", "schedule"}, {"id", a.id}, {"delay_ns", a.delay_ns}};
      if (!a.then.empty()) j["then"] = actions_json(a.then);
    }
    out.push_back(std::move(j));
  }
  return out;
}
}  // namespace

std::string schedule_scripted_line(std::uint64_t id, std::int64_t delay_ns,
                                   const std::vector<runner::ScriptAction>& then) {
  const nlohmann::json j = {
      {"type", "schedule"}, {"id", id}, {"delay_ns", delay_ns}, {"then", actions_json(then)}};
  return j.dump() + "\n";
}

std::string cancel_line(std::uint64_t id) {
  return fmt::format(R"({{"type":"cancel","id":{}}})"
                     "\n",
                     id);
}

std::int32_t abi_result_of(CancelResult r) {
  return r == CancelResult::kPrevented ? TLAB_CANCEL_PREVENTED
         : r == CancelResult::kTooLate ? TLAB_CANCEL_TOO_LATE
                                       : TLAB_CANCEL_UNKNOWN;
}

std::string action_sentence(const runner::ScriptAction& a) {
  return fmt::format("{} id {}", a.cancel ? "cancel" : "schedule", a.id);
}

std::string shutdown_line() { return "{\"type\":\"shutdown\"}\n"; }

}  // namespace tlab::tool::exec
