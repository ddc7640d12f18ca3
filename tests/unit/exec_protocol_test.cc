// Unit tests of the exec protocol's messages (tool/subjects/exec/exec_protocol.h):
// every line a subject writes is one message that fits its schema, and every line
// that is not is refused with its number, its text and the JSON pointer of what is
// wrong; tlab's own requests fit the schema's definitions of them.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "base/embedded.h"
#include "base/json_input.h"
#include "subjects/exec/exec_protocol.h"
#include "tlab/subject.h"

namespace {

using namespace tlab::tool;
using namespace tlab::tool::exec;

// Each message the subject may send is read with its fields.
TEST(ExecProtocol, ReadsEveryMessageTheSubjectSends) {
  std::string why;
  auto m = read_message(R"({"type":"scheduled","id":7,"t_ns":-5})", 3, why);
  ASSERT_TRUE(m) << why;
  EXPECT_EQ(m->type, MessageType::kScheduled);
  EXPECT_EQ(m->id, 7u);
  EXPECT_EQ(m->t_ns, -5);
  m = read_message(R"({"type":"cancelled","id":9007199254740991,"result":"too_late"})", 1, why);
  ASSERT_TRUE(m) << why;
  EXPECT_EQ(m->result, CancelResult::kTooLate);
  EXPECT_EQ(m->id, 9007199254740991u);
  m = read_message(R"({"type":"error","id":2,"message":"Timer already cancelled."})", 1, why);
  ASSERT_TRUE(m) << why;
  EXPECT_EQ(m->text, "Timer already cancelled.");
  m = read_message(R"({"type":"pending","ids":[4,5]})", 1, why);
  ASSERT_TRUE(m) << why;
  EXPECT_EQ(m->ids, (std::vector<std::uint64_t>{4, 5}));
  m = read_message(R"({"type":"fired","id":1,"t_ns":100})", 1, why);
  ASSERT_TRUE(m) << why;
  EXPECT_EQ(m->type, MessageType::kFired);
}

// A hello's facts: promises as a set (contains_errors included), the fail feature,
// max_delay_ns.
TEST(ExecProtocol, HelloFacts) {
  std::string why;
  const auto m = read_message(
      R"({"type":"hello","protocol":1,"name":"x-1.2","version":"1.2","kind":"facility",)"
      R"("promises":["delivery","contains_errors"],"features":["fail"],"max_delay_ns":1000})",
      1, why);
  ASSERT_TRUE(m) << why;
  const Hello h = hello_of(*m);
  EXPECT_EQ(h.name, "x-1.2");
  EXPECT_TRUE(h.promises.has(tlab::tool::Promise::kDelivery));
  EXPECT_TRUE(h.promises.has(tlab::tool::Promise::kContainsErrors));
  EXPECT_FALSE(h.promises.has(tlab::tool::Promise::kNeverEarly));
  EXPECT_TRUE(h.can_fail);
  EXPECT_EQ(h.max_delay_ns, 1000);
  EXPECT_EQ(h.periodic, 0u);
}

// The periodic kinds a hello lists are the ABI's TLAB_PERIODIC_* bits, and back.
TEST(ExecProtocol, HelloPeriodicKinds) {
  std::string why;
  const auto m =
      read_message(R"({"type":"hello","protocol":1,"name":"p","version":"1","kind":"facility",)"
                   R"("promises":[],"periodic":["fixed_delay","fixed_rate_skip"]})",
                   1, why);
  ASSERT_TRUE(m) << why;
  EXPECT_EQ(hello_of(*m).periodic, TLAB_PERIODIC_FIXED_DELAY | TLAB_PERIODIC_FIXED_RATE_SKIP);
  for (std::uint32_t k :
       {TLAB_PERIODIC_FIXED_RATE, TLAB_PERIODIC_FIXED_RATE_SKIP, TLAB_PERIODIC_FIXED_DELAY}) {
    EXPECT_EQ(periodic_from(periodic_name(k)), k);
  }
  EXPECT_FALSE(periodic_from("cron"));
}

struct Bad {
  const char* line;
  const char* says;  // a substring of the refusal, after "line 12 `...`: "
};

// Every malformed line is refused naming its number, its text and the pointer.
TEST(ExecProtocol, RefusesEveryMalformedLineWithPointer) {
  const Bad rows[] = {
      {"not json", "/: not JSON"},
      {"[1,2]", "/: is a JSON array, not an object"},
      {R"({"id":1})", "/type: missing"},
      {R"({"type":7})", "/type: is a integer, not a string"},
      {R"({"type":"boom"})", "unknown message type \"boom\""},
      {R"({"type":"schedule","id":1,"delay_ns":5})", "is a message tlab sends"},
      {R"({"type":"fired","id":1})", "t_ns"},
      {R"({"type":"fired","id":0,"t_ns":1})", "/id"},
      {R"({"type":"fired","id":9007199254740992,"t_ns":1})", "/id"},
      {R"({"type":"fired","id":1,"t_ns":1,"extra":true})", "extra"},
      {R"({"type":"cancelled","id":1,"result":"maybe"})", "/result"},
      {R"({"type":"fired","id":1,"id":2,"t_ns":1})", "duplicate"},
      {R"({"type":"pending","ids":[1,1]})", "/ids"},
      {R"({"type":"hello","protocol":2,"name":"a","version":"1","kind":"facility","promises":[]})",
       "/protocol"},
      {R"({"type":"hello","protocol":1,"name":"a","version":"1","kind":"facility","promises":["fifo_ties"]})",
       "/promises/0"},
      {R"({"type":"hello","protocol":1,"name":"a b","version":"1","kind":"facility","promises":[]})",
       "/name"},
      {R"({"type":"hello","protocol":1,"name":"a","version":"1","kind":"facility","promises":[],"periodic":["cron"]})",
       "/periodic/0"},
  };
  for (const Bad& b : rows) {
    SCOPED_TRACE(b.line);
    std::string why;
    EXPECT_FALSE(read_message(b.line, 12, why));
    EXPECT_EQ(why.rfind("line 12 `", 0), 0u) << why;
    EXPECT_NE(why.find(b.says), std::string::npos) << why;
  }
}

// tlab's requests are one line each and fit the schema's own definitions.
TEST(ExecProtocol, RequestsFitTheSchema) {
  const nlohmann::json schema = nlohmann::json::parse(embedded_protocol_schema());
  for (const std::string& line :
       {schedule_line(1, -3, false), schedule_line(9007199254740991, INT64_MAX, true),
        schedule_periodic_line(2, 0, 1, TLAB_PERIODIC_FIXED_RATE),
        schedule_periodic_line(3, -1, INT64_MAX, TLAB_PERIODIC_FIXED_DELAY), cancel_line(5),
        shutdown_line()}) {
    SCOPED_TRACE(line);
    ASSERT_EQ(line.back(), '\n');
    ASSERT_EQ(line.find('\n'), line.size() - 1);
    const nlohmann::json doc = nlohmann::json::parse(line);
    nlohmann::json def = schema["$defs"][doc["type"].get<std::string>()];
    def["$schema"] = schema["$schema"];
    SchemaValidator v(def.dump());
    InputErrors errors;
    EXPECT_TRUE(v.validate(doc, "request", errors)) << (errors.empty() ? "" : errors[0].str());
  }
}

}  // namespace
