// End-to-end tests of `--subject exec:CMD` (docs/protocol.md): the real tlab binary
// against tests/exec/reference_subject.py, a correct subject in Python with seeded
// timer bugs (--bug=NAME) and protocol misbehaviours (--misbehave=NAME). The correct
// subject passes the built-in suite; each bug is caught by its oracle; each
// misbehaviour gets the verdict docs/protocol.md gives it; a command that cannot be
// run is exit 2 naming --subject; and no process of the subject's group outlives tlab.
//
// Time limits: every run gets tlab's own hello limit (kDefaultHelloLimitS, 20 s) and
// short_races.json's 60 s budget, watchdogs far above what a Python subject needs on a
// loaded machine. Only the runs whose subject never does the thing get short limits,
// so that a limit decides how long the test waits, never whether it passes: no_hello
// never says hello (TLAB_HELLO_TIMEOUT_S=1 for that run alone), and silent and slow
// never finish (tests/exec/stalling.json, 12 s).
//
// Cost: about a minute on 2 cores, most of it the four runs that wait out
// stalling.json's budget; every case runs short_races (or throwing_tasks, the one
// built-in scenario with the thrower role) or stalling.
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_run.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using tlab::testing::CliResult;

const std::string kSource = TLAB_SOURCE_DIR;
const std::string kShortRaces = kSource + "/tests/exec/short_races.json";
const std::string kStalling = kSource + "/tests/exec/stalling.json";
const std::string kThrowingTasks = kSource + "/scenarios/throwing_tasks.json";
const std::string kPeriodicSeries = kSource + "/scenarios/periodic_series.json";
// The hello limit of the no_hello run, whose subject never says hello: it only sets
// how long that run waits.
constexpr const char* kNoHelloLimit = "TLAB_HELLO_TIMEOUT_S=1";
// A hang guard on a run's wall time, not a measurement: far above any load (a run
// ends by its budget, at most 60 s, plus the 5 s after which tlab kills the case),
// and far below an hour, which a run that waited for the subject's helpers or its
// hello (they sleep an hour) would take.
constexpr double kHangGuardS = 180;

// The reference subject with `flags`, as a --subject value.
std::string subject(const std::string& flags) {
  return "exec:" + tlab::testing::shell_quote(kSource + "/tests/exec/reference_subject.py") +
         (flags.empty() ? "" : " " + flags);
}

// The pids of processes whose command line holds `marker`, other than this one.
std::vector<pid_t> processes_with(const std::string& marker) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (pid == ::getpid()) continue;
    std::string cmdline = tlab::testing::slurp(e.path() / "cmdline");  // "" once it is gone
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    if (cmdline.find(marker) != std::string::npos) found.push_back(pid);
  }
  return found;
}

class ExecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The pid keeps two runs of this test on one machine out of each other's way.
    scratch_ = fs::temp_directory_path() /
               ("tlab-exec-" + std::to_string(::getpid()) + "-" +
                std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(scratch_);
    fs::create_directories(scratch_);
  }
  void TearDown() override { fs::remove_all(scratch_); }
  // tlab(args): runs tlab with tlab's own hello limit (TLAB_HELLO_TIMEOUT_S removed
  // from the environment, a CI runner's included) or, with `env`, that assignment;
  // `seconds` gets its wall time.
  CliResult tlab(const std::vector<std::string>& args, double* seconds = nullptr,
                 const std::string& env = "") {
    std::vector<std::string> all{"-u", "TLAB_HELLO_TIMEOUT_S"};
    if (!env.empty()) all.push_back(env);
    all.push_back(TLAB_BIN);
    all.insert(all.end(), args.begin(), args.end());
    const auto t0 = std::chrono::steady_clock::now();
    CliResult r = tlab::testing::run_tlab("env", all, scratch_);
    if (seconds != nullptr)
      *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
  // report(res): the --json report on stdout; an empty object (and a failure) if none.
  static json report(const CliResult& res) {
    json doc = json::parse(res.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(doc.is_object() && doc.contains("cases")) << res.out << res.err;
    return doc.is_object() && doc.contains("cases") ? doc : json{{"cases", json::array()}};
  }
  // leftovers_of(flags, scenario, code): runs `scenario` on the reference subject
  // with `flags` and a unique --tag (tlab must exit with `code`); "" if no process
  // with the tag is left once tlab has exited, else one line per leftover (which it
  // kills).
  std::string leftovers_of(const std::string& flags, const std::string& scenario, int code) {
    const std::string tag =
        "--tag=exec_test-" + std::to_string(::getpid()) + "-" + std::to_string(runs_++);
    const CliResult res =
        tlab({"check", "--subject", subject(flags + " " + tag), scenario, "--json"});
    EXPECT_EQ(res.code, code) << res.out << res.err;
    // A process SIGKILLed just before tlab exited may take a moment to be gone: a
    // hang guard of 30 s (1500 naps of 20 ms), left at once when none is.
    std::vector<pid_t> left = processes_with(tag);
    for (int i = 0; i < 1500 && !left.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      left = processes_with(tag);
    }
    std::string lines;
    for (const pid_t pid : left) {
      // /proc/PID/stat: "pid (comm) state ppid pgrp ..."
      const std::string stat = tlab::testing::slurp("/proc/" + std::to_string(pid) + "/stat");
      std::istringstream rest(stat.substr(stat.rfind(')') + 1));
      char state = '?';
      long parent = 0, group = 0;
      rest >> state >> parent >> group;
      lines += "pid " + std::to_string(pid) + " (parent " + std::to_string(parent) + ", group " +
               std::to_string(group) + ") " + tag + "\n";
      ::kill(pid, SIGKILL);  // not left to sleep for an hour
    }
    return lines;
  }
  fs::path scratch_;
  int runs_ = 0;
};

// The correct subject passes every built-in scenario that applies to a facility,
// throwing_tasks among them, and the report names the subject and what it promised.
TEST_F(ExecTest, ReferenceSubjectPassesTheBuiltinSuite) {
  const std::string spec = subject("");
  const CliResult res = tlab({"check", "--subject", spec, "--json"});
  EXPECT_EQ(res.code, 0) << res.err;
  const json doc = report(res);
  ASSERT_GE(doc["cases"].size(), 6u) << res.out;
  std::set<std::string> scenarios;
  for (const json& c : doc["cases"]) {
    scenarios.insert(c.value("scenario", ""));
    EXPECT_EQ(c["verdict"], "pass") << c.dump();
    EXPECT_EQ(c["subject_spec"], spec);
    EXPECT_EQ(c["subject"], "reference");
    EXPECT_EQ(c["promises_judged"], json({"delivery", "exactly_once", "never_early",
                                          "accurate_cancel", "pending_count", "contains_errors"}))
        << c.dump();
  }
  EXPECT_TRUE(scenarios.count("throwing_tasks")) << res.out;
  EXPECT_TRUE(scenarios.count("facility_races")) << res.out;
  // Its hello lists the three periodic kinds, so the periodic scenarios run.
  EXPECT_TRUE(scenarios.count("periodic_series")) << res.out;
  EXPECT_TRUE(scenarios.count("fixed_rate_drift")) << res.out;
  EXPECT_TRUE(scenarios.count("missed_tick_skip")) << res.out;
  // Its hello lists the feature "scripts": callback_chains' callbacks act.
  for (const json& c : doc["cases"]) {
    if (c.value("scenario", "") != "callback_chains") continue;
    EXPECT_GT(c["counters"].value("callback_rearms", 0), 0) << c.dump();
    EXPECT_GT(c["counters"].value("callback_cancels", 0), 0) << c.dump();
    EXPECT_GT(c["counters"].value("callback_self_cancels", 0), 0) << c.dump();
  }
}

struct SeededBug {
  const char* bug;
  const char* oracle;   // must find it
  const char* also;     // a finding the bug may cause as well ("" if none)
  const char* example;  // a phrase of the oracle's first example
};

// Each seeded timer bug is caught by its own oracle, in a case that fails, and no
// oracle reports anything the bug cannot cause (no protocol_error, no crash).
// Why each must show, whatever the machine's load: short_races has no canceller, so
// a timer escapes a bug only through its own scheduler's cancel right after it was
// armed, a seeded draw of probability 0.3 that knows nothing of the timer's id.
// early (every fire is 2 ms early), double (every 7th id fires twice) and lost
// (every 5th id never fires; throwing_tasks has no cancels at all) each have 40 or
// more timers eligible in a run, so a miss is at most 0.3^40. wrong_result needs a
// cancel of a fired timer: the ~30 stale cancels of a run each name a settled timer,
// fired unless its own cancel settled it (0.3), so a miss is at most 0.3^30.
// after_cancel needs a cancel to find its timer (every 3rd id) still armed: ~30
// eligible cancels, each sent as soon as the schedule is answered, against delays
// of 0-3 ms (28 showed with the machine's load average above 7). die_on_fail dies
// at throwing_tasks' first failing callback; pending_list drops an id from the
// pending list at shutdown, when the driver always leaves timers pending.
TEST_F(ExecTest, EachSeededBugIsCaughtByItsOracle) {
  const SeededBug bugs[] = {
      {"early", "early_fire", "", "by the subject's own clock (t=0 at its first answer, t_ns "},
      {"lost", "lost_timer", "", "neither fired nor prevented"},
      {"double", "double_resume", "", "fired twice"},
      // A cancel that says prevented and leaves the timer armed lets a second
      // cancel of it say prevented too: wrong_result.
      {"after_cancel", "fired_after_cancel", "wrong_result", "had returned TLAB_CANCEL_PREVENTED"},
      {"wrong_result", "wrong_result", "", "returned PREVENTED"},
      {"pending_list", "conservation", "", "the pending list omits id"},
      // Only throwing_tasks sends `fail` timers.
      {"die_on_fail", "task_exceptions", "", "a failing callback took the subject down"},
  };
  for (const SeededBug& b : bugs) {
    SCOPED_TRACE(b.bug);
    const CliResult res = tlab({"check", "--subject", subject(std::string("--bug=") + b.bug),
                                kShortRaces, kThrowingTasks, "--json"});
    EXPECT_EQ(res.code, 1) << res.err;
    const json doc = report(res);
    bool caught = false;
    for (const json& c : doc["cases"]) {
      for (const auto& [key, v] : c["violations"].items()) {
        EXPECT_TRUE(key == b.oracle || key == b.also) << key << " in " << c.dump();
        if (key != b.oracle || v["count"].get<int>() == 0) continue;
        caught = true;
        EXPECT_EQ(c["verdict"], "fail") << c.dump();
        EXPECT_NE(v["first_example"].get<std::string>().find(b.example), std::string::npos)
            << v.dump();
      }
    }
    EXPECT_TRUE(caught) << b.oracle << " found nothing: " << res.out;
  }
}

// Each seeded bug of a periodic series is caught by its oracle on periodic_series,
// over the protocol's `period_ns` and `periodic` fields. Why each must show:
// periodic_early rounds each period down to whole milliseconds, so run 1 of every
// series whose period (uniform 0.3-3 ms) has a fraction of a millisecond above 1 ms
// is early by the subject's own clock and tlab's: dozens of series a run.
// periodic_stop lets a stopped series run once more after a cancel that said
// prevented: the canceller's cancels (2-8 ms apart) find series that have run
// (their first run is due within 2 ms), dozens a run; a second cancel of such a
// series says prevented again (wrong_result), which the bug may cause too.
TEST_F(ExecTest, EachSeededPeriodicBugIsCaughtByItsOracle) {
  const SeededBug bugs[] = {
      {"periodic_early", "early_fire", "", "series (period "},
      {"periodic_stop", "fired_after_cancel", "wrong_result", "a run of the stopped series"},
  };
  for (const SeededBug& b : bugs) {
    SCOPED_TRACE(b.bug);
    const CliResult res = tlab({"check", "--subject", subject(std::string("--bug=") + b.bug),
                                kPeriodicSeries, "--json"});
    EXPECT_EQ(res.code, 1) << res.err;
    const json doc = report(res);
    ASSERT_EQ(doc["cases"].size(), 1u) << res.out;
    const json& c = doc["cases"][0];
    EXPECT_EQ(c["verdict"], "fail") << c.dump();
    for (const auto& [key, v] : c["violations"].items()) {
      EXPECT_TRUE(key == b.oracle || key == b.also) << key << " in " << c.dump();
    }
    ASSERT_TRUE(c["violations"].contains(b.oracle)) << c.dump();
    EXPECT_NE(c["violations"][b.oracle]["first_example"].get<std::string>().find(b.example),
              std::string::npos)
        << c.dump();
  }
}

// A script's seeded bug is caught by its oracle on callback_chains, whose
// callbacks cancel a sibling due just after them: batch_cancel takes every due
// timer off its queue before running their callbacks, so a sibling cancelled
// (prevented) by a callback of the same pass runs anyway. About 30 of the ~2300
// sibling cancels of a run land in one pass (the Python loop finds several timers
// due at each wake-up, more so on a loaded machine), so a run without one is
// far-fetched.
TEST_F(ExecTest, ASiblingCancelledInTheSamePassMustNotRun) {
  const CliResult res = tlab({"check", "--subject", subject("--bug=batch_cancel"),
                              kSource + "/scenarios/callback_chains.json", "--json"});
  EXPECT_EQ(res.code, 1) << res.err;
  const json doc = report(res);
  ASSERT_EQ(doc["cases"].size(), 1u) << res.out;
  const json& c = doc["cases"][0];
  EXPECT_EQ(c["verdict"], "fail") << c.dump();
  for (const auto& [key, v] : c["violations"].items()) {
    EXPECT_EQ(key, "fired_after_cancel") << c.dump();
  }
  ASSERT_TRUE(c["violations"].contains("fired_after_cancel")) << c.dump();
  EXPECT_NE(c["violations"]["fired_after_cancel"]["first_example"].get<std::string>().find(
                "callback#0's cancel"),
            std::string::npos)
      << c.dump();
}

struct Misbehaviour {
  const char* mode;
  const std::string* scenario;  // short_races, or stalling for a subject that never finishes
  int code;                     // tlab's exit code
  const char* verdict;          // of the one case; "" for exit 2 (no case runs)
  const char* oracle;           // its only violation; "" for none
  const char* says;  // a pattern (ECMAScript) in the first example, the message, or stderr
};

// Each protocol misbehaviour gets the verdict docs/protocol.md gives it, with the
// subject's line or the unanswered request named, and no run hangs (kHangGuardS).
TEST_F(ExecTest, EachMisbehaviourGetsItsVerdict) {
  const std::string* races = &kShortRaces;
  const Misbehaviour rows[] = {
      {"garbage", races, 1, "fail", "protocol_error",
       "^line [0-9]+ `this is not json`: /: not JSON"},
      {"unknown_id", races, 1, "fail", "protocol_error",
       "^line [0-9]+ `.*`: fired id [0-9]+, which tlab never scheduled"},
      // The second `scheduled` may find a cancel of that id awaiting its answer:
      // "scheduled answers line N `{cancel}`, which is a cancel".
      {"second_answer", races, 1, "fail", "protocol_error",
       "^line [0-9]+ `\\{\"type\":\"scheduled\".*`: scheduled (for id [0-9]+, but no request "
       "for id [0-9]+ awaits|answers line [0-9]+ .*, which is a cancel)"},
      {"fire_after_pending", races, 1, "fail", "protocol_error",
       "^line [0-9]+ `.*`: fired after `pending`"},
      {"exit_early", races, 1, "fail", "crash",
       "exit status 3\\); the last lines of its stderr:\nreference_subject.py: exiting early by "
       "design"},
      // The leader exits while a process it forked still holds its stdout open: its
      // exit, not the end of the pipe, is the crash.
      {"exit_early --helpers=1", races, 1, "fail", "crash", "exit status 3\\)"},
      // The 20th request is never answered: the case ends at stalling's budget.
      {"silent", &kStalling, 3, "timeout", "", "no answer after 1\\.000s to line 20 `\\{\"type\":"},
      // Each answer takes 0.5 s: stalling's budget runs out with one request in flight.
      {"slow", &kStalling, 3, "timeout", "",
       "budget of 12s expired[\\s\\S]*pipe#0: waiting on 0x[0-9a-f]+ for"},
      {"stderr", races, 0, "pass", "", "^engine subject reference"},
      // Never says hello: the one run with a short hello limit.
      {"no_hello", races, 2, "", "", "--subject exec:.*: timeout: no hello within 1 s"},
      {"bad_hello", races, 2, "", "",
       "--subject exec:.*: protocol_error: line 1 `.*`( \\(shortened\\))?: /promises/1: "
       "value \"virtual_time\" is not one of the allowed values"},
  };
  for (const Misbehaviour& m : rows) {
    SCOPED_TRACE(m.mode);
    double seconds = 0;
    const CliResult res = tlab({"check", "--subject", subject(std::string("--misbehave=") + m.mode),
                                *m.scenario, "--json"},
                               &seconds, m.mode == std::string("no_hello") ? kNoHelloLimit : "");
    EXPECT_EQ(res.code, m.code) << res.out << res.err;
    EXPECT_LT(seconds, kHangGuardS);
    const std::regex says(m.says);
    if (m.code == 2) {
      EXPECT_EQ(res.out, "") << "nothing may run";
      EXPECT_TRUE(std::regex_search(res.err, says)) << res.err;
      continue;
    }
    const json doc = report(res);
    if (doc["cases"].size() != 1u) {
      ADD_FAILURE() << "one case expected: " << res.out;
      continue;
    }
    const json& c = doc["cases"][0];
    EXPECT_EQ(c["verdict"], m.verdict) << c.dump();
    // The oracle's first example, or the case's message when there is no finding.
    std::string text = c.value("message", "");
    if (*m.oracle == '\0') {
      EXPECT_TRUE(c["violations"].empty()) << c.dump();
    } else if (c["violations"].size() != 1u || !c["violations"].contains(m.oracle)) {
      ADD_FAILURE() << "only " << m.oracle << " expected: " << c.dump();
      continue;
    } else {
      EXPECT_GT(c["violations"][m.oracle]["count"].get<int>(), 0);
      text = c["violations"][m.oracle]["first_example"].get<std::string>();
    }
    EXPECT_TRUE(std::regex_search(text, says)) << text;
  }
}

// A subject that promises thread_safe gets several senders at once (requests
// pipelined: max_in_flight above 1) and still passes, and a seeded bug is still
// caught under pipelining; without the promise there is never more than one request
// in flight. Two in flight is certain, not a race that must show: with
// --thread-safe the reference subject answers its first schedule only once a second
// request has come (a tlab that did not pipeline would wait out the budget).
TEST_F(ExecTest, ThreadSafeSubjectsArePipelinedOthersSerialised) {
  auto max_in_flight = [](const json& doc) {
    std::uint64_t most = 0;
    for (const json& c : doc["cases"]) {
      most = std::max<std::uint64_t>(most, c["counters"].value("max_in_flight", 0));
    }
    return most;
  };
  const CliResult safe = tlab({"check", "--subject", subject("--thread-safe"), kShortRaces,
                               kThrowingTasks, "--json"});
  ASSERT_EQ(safe.code, 0) << safe.out << safe.err;
  EXPECT_GE(max_in_flight(report(safe)), 2u) << safe.out;
  const CliResult serial =
      tlab({"check", "--subject", subject(""), kShortRaces, kThrowingTasks, "--json"});
  ASSERT_EQ(serial.code, 0) << serial.out << serial.err;
  EXPECT_EQ(max_in_flight(report(serial)), 1u) << serial.out;
  const CliResult buggy = tlab({"check", "--subject", subject("--thread-safe --bug=wrong_result"),
                                kShortRaces, "--json"});
  EXPECT_EQ(buggy.code, 1) << buggy.out << buggy.err;
  EXPECT_TRUE(report(buggy)["cases"][0]["violations"].contains("wrong_result")) << buggy.out;
}

// A command that cannot be run (missing, not found in PATH, not executable, a
// directory, unbalanced quotes, a command substitution, nothing) is exit 2 naming
// --subject and why, before any case runs.
TEST_F(ExecTest, UnrunnableCommandIsExit2NamingTheFlag) {
  struct Case {
    std::string spec, says;
  } cases[] = {
      {"exec:" + (scratch_ / "missing").string(), "No such file or directory"},
      {"exec:tlab_exec_test_no_such_command", "not found in PATH"},
      {"exec:" + kSource + "/docs/protocol.md", "not executable"},
      {"exec:" + kSource + "/tests/exec", "not a regular file"},
      {subject("'--tag=unbalanced"), "unbalanced quote"},
      {subject("$(touch " + (scratch_ / "ran").string() + ")"), "command substitution"},
      {"exec:", "no command after exec:"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    const CliResult res = tlab({"check", "--subject", c.spec, kShortRaces, "--json"});
    EXPECT_EQ(res.code, 2) << res.err;
    EXPECT_NE(res.err.find("--subject " + c.spec + ": "), std::string::npos) << res.err;
    EXPECT_NE(res.err.find(c.says), std::string::npos) << res.err;
    EXPECT_EQ(res.out, "") << "nothing may run";
  }
  EXPECT_FALSE(fs::exists(scratch_ / "ran")) << "tlab ran a command substitution";
}

// No process of the subject's group outlives tlab (its leader included), when the
// subject has forked helpers that hold its pipes (a JVM's, a shell's children):
// only a kill of the whole group ends those, after the probe, a case that passed,
// a case that timed out waiting for an answer, or one that timed out while slow.
TEST_F(ExecTest, NoProcessOfTheSubjectsGroupOutlivesTlab) {
  const struct {
    const char* mode;
    const std::string* scenario;
    int code;
  } runs[] = {{"", &kShortRaces, 0}, {"--misbehave=silent", &kStalling, 3},
              {"--misbehave=slow", &kStalling, 3}};
  for (const auto& run : runs) {
    SCOPED_TRACE(run.mode);
    EXPECT_EQ(leftovers_of(std::string(run.mode) + " --helpers=2", *run.scenario, run.code), "");
  }
}

}  // namespace
