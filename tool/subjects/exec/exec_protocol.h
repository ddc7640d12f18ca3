// tlab/tool/subjects/exec/exec_protocol.h: the messages of the exec protocol
// (docs/protocol.md): reading one line a subject process wrote, checked against
// docs/protocol.schema.json (embedded in tlab), and writing tlab's requests.
//
//   | call          | what                                                         |
//   |---------------|--------------------------------------------------------------|
//   | read_message  | one stdout line -> a Message, or a sentence naming the line, |
//   |               | the JSON pointer and what is wrong (the protocol_error text) |
//   | hello_of      | a checked hello -> Hello (the subject's facts)               |
//   | *_line        | tlab's requests, one line each ("\n"-terminated)             |
//
// What read_message refuses: a line that is not one JSON object (syntax errors,
// duplicate keys, numbers outside int64, nesting), a "type" that is missing, not a
// string, or not one the subject may send (schedule, cancel and shutdown are
// tlab's), and anything its $defs schema refuses (a missing or unknown field, an
// id outside [1, 2^53 - 1], a result not in the enum). Rules that need the
// session's state (an id never scheduled, a second answer) are the session's
// (exec_session.h).
//
// Cost: one SAX parse and one valijson pass per line, O(line). The validators are
// compiled once per process (a function-local static). Ground rules: pure
// functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/subject_extras.h"
#include "types/promise.h"

namespace tlab::tool::exec {

inline constexpr int kProtocolVersion = 1;
// A longer line is a protocol error (the longest legal line is a `pending` list;
// 4 MiB holds ~300k ids, far beyond run.max_pending).
inline constexpr std::size_t kMaxLineBytes = std::size_t{4} << 20;

enum class MessageType : std::uint8_t { kHello, kScheduled, kCancelled, kError, kFired, kPending };
std::string_view name_of(MessageType t);

enum class CancelResult : std::uint8_t { kPrevented, kTooLate, kUnknown };

struct Message {
  MessageType type = MessageType::kHello;
  std::uint64_t id = 0;   // scheduled, cancelled, error, fired
  std::uint64_t by = 0;   // scheduled, cancelled, error: a script's answer (0: none)
  std::int64_t t_ns = 0;  // scheduled, fired: the subject's clock
  CancelResult result = CancelResult::kUnknown;  // cancelled
  std::string text;                              // error: its message
  std::vector<std::uint64_t> ids;                // pending
  nlohmann::json doc;                            // hello: the whole object (hello_of reads it)
};

// read_message: the message on `line` (without its "\n"), or nullopt with `why`:
// "line 7 `{\"type\":\"fired\"}`: /id: required property missing" (`number` is
// the line's 1-based number on the subject's stdout).
std::optional<Message> read_message(std::string_view line, std::uint64_t number, std::string& why);

// quote_line: `line` shortened to 160 bytes for a sentence, in backquotes.
std::string quote_line(std::string_view line);

struct Hello {
  std::string name, version, summary;
  PromiseSet promises;
  std::vector<std::string> promise_names;  // as given, for the report
  bool can_fail = false;                   // features has "fail"
  bool scripts = false;                    // features has "scripts"
  std::uint32_t periodic = 0;              // TLAB_PERIODIC_* bits of its `periodic` kinds
  std::int64_t max_delay_ns = 0;           // 0: none given
};

// periodic_name / periodic_from: a periodic kind's protocol name ("fixed_rate",
// "fixed_rate_skip", "fixed_delay") and back; one TLAB_PERIODIC_* bit each.
std::string_view periodic_name(std::uint32_t kind);
std::optional<std::uint32_t> periodic_from(std::string_view name);

// hello_of: the facts of a hello that read_message accepted.
Hello hello_of(const Message& hello);

std::string schedule_line(std::uint64_t id, std::int64_t delay_ns, bool fail);
// schedule_periodic_line: a `schedule` of a periodic series (period_ns > 0; `kind`
// one TLAB_PERIODIC_* bit).
std::string schedule_periodic_line(std::uint64_t id, std::int64_t delay_ns, std::int64_t period_ns,
                                   std::uint32_t kind);
// schedule_scripted_line: a one-shot `schedule` whose callback performs `then`
// (1 to 3 actions, nested; a hello with the feature "scripts").
std::string schedule_scripted_line(std::uint64_t id, std::int64_t delay_ns,
                                   const std::vector<runner::ScriptAction>& then);
std::string cancel_line(std::uint64_t id);

// abi_result_of: a `cancelled` result as the ABI's tlab_cancel_result.
std::int32_t abi_result_of(CancelResult r);
// action_sentence: a script action for a sentence ("schedule id 7", "cancel id 3").
std::string action_sentence(const runner::ScriptAction& a);
std::string shutdown_line();

}  // namespace tlab::tool::exec
