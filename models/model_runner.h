// models/model_runner.h: the command line every model executable shares.
//
// A model binary (model_token, ...) holds several named tests, each one
// rl::simulate<Suite> over the shipped core/ code. model_main() parses
//
//   --test NAME  --mutant NAME  --iterations N  --scheduler random|bound|full
//   --context-bound N  --history FILE  --expect-fail  --list
//
// `--list` prints the catalogue as one line of JSON, one object per test:
//
//   [{"test":"stale_cancel","description":"...","clean":"pass",
//     "kills":["token_flag_only"],"bound_quick":2,"bound_slow":3,"full_quick":false,
//     "kill_reach":{"token_flag_only":"bound"}}]
//
// `clean` says whether the clean code must pass or must fail; `kills` names the
// mutants the test must catch. The other four fields are the test's search reach
// (ModelReach below): they let a planner run only the searches that end. tlab
// (tool/layers/model_runs.h) plans from this catalogue, and models/CMakeLists.txt registers
// the ctest runs from it (models/cmake/ModelDiscover.cmake).
//
// With --test, model_main runs the test once with the requested mutant switched on
// in RelacyPlatform, and prints ONE line of JSON on stdout:
//
//   {"model":"token","test":"stale_token","mutant":"token_flag_only",
//    "scheduler":"random","context_bound":null,"iterations":3,"failed":true,
//    "result":"USER ASSERT FAILED","message":"USER ASSERT FAILED (model check
//    failed: ...)","failing_iteration":2,"seconds":0.001,
//    "cpu_seconds":0.001,"iterations_per_second":3000,"expect_fail":true,
//    "verdict":"pass","history":"h.txt"}
//
// `iterations` counts the iterations run, the failing one included;
// `failing_iteration` is Relacy's number for it, counting from 1 (so it equals
// `iterations`; the random scheduler seeds iteration i with i, so it replays). `seconds` is wall
// time, `cpu_seconds` the process CPU time of the search, and iterations_per_second uses the
// latter: a model is one OS thread (Relacy's threads are fibers), and shared machines make wall
// time noisy.
//
// Exit codes: 0 the verdict is "pass" (the run was clean, or with --expect-fail it
// failed as it must); 1 the verdict is "fail" (a Relacy failure, or with
// --expect-fail a run that survived); 2 bad arguments.
//
// Relacy writes its report (test name, result, failing iteration, then the full
// execution history of the replayed failing iteration) to test_params'
// output_stream. We point that stream at an anonymous temporary FILE through a
// streambuf that never allocates: Relacy replaces the global operator new while a
// run is in progress, so a std::ostringstream growing during the run would get
// memory from Relacy's allocator and later hand it to free(). On failure the file
// is copied to --history, or its first lines go to stderr if no file was given.
//
// Iterations: --iterations applies to the random scheduler only (default 100000).
// The bound and full schedulers search until their space is exhausted, so
// --iterations with them is rejected rather than silently ignored;
// --context-bound (default 1) applies to the bound scheduler only, likewise.
//
// Ground rules: one run per process invocation; the mutant flag is set before
// rl::simulate and never touched by simulated threads (determinism, see
// relacy_platform.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <optional>
#include <span>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "relacy_platform.h"

namespace tlab::models {

// Fails the current Relacy iteration with `message` when `cond` is false. Like
// RL_ASSERT, but the history names the property, not just the expression.
#define TLAB_MODEL_CHECK(cond, message)                                     \
  do {                                                                      \
    if (!(cond)) {                                                          \
      ::rl::ctx().fail_test("model check failed: " message " (" #cond ")",  \
                            ::rl::test_result_user_assert_failed, RL_INFO); \
    }                                                                       \
  } while (0)

// Whether a test's clean run (no mutant) must pass, or must fail: RFC 0014's
// predicted wraparound at 2-4 token bits, and the platform facade's self-checks
// (a relaxed message must be a data race), are failures the model must find.
enum class CleanRun : bool { kPasses, kFails };

// How far each scheduler gets on a test's clean code, measured (models/README.md
// has the iteration counts). Two budgets, the two ctest labels:
//   | budget  | ctest label  | a run takes       |
//   | quick   | model        | seconds           |
//   | slow    | model;slow   | minutes (< 900 s) |
// The random scheduler always ends (it runs a fixed number of iterations), so it
// has no entry. A search "ends" when it exhausts its space or, for a test whose
// clean code must fail, when it finds the failure.
struct ModelReach {
  std::uint8_t bound_quick = 0;  // deepest context bound whose search ends in seconds; 0: none
  std::uint8_t bound_slow = 0;   // deepest whose search ends in minutes; 0: none deeper
  bool full_quick = false;       // the full search ends in seconds
};

// One named test of a model binary. `kills` names, space-separated, the mutants
// (platform/mutant.h) this test must catch; `--list` publishes it, `tlab model`,
// `tlab mutants` and ctest (models/CMakeLists.txt) plan from it, and `--list`
// fails on a name that is not in the catalogue, so a renamed mutant cannot silently
// drop out of the matrix. A kill is found at once by most searches, even where the
// clean search is far too big to end: a mutant stops the search at its first
// failure. Where the full search does not find it in seconds, the kill is written
// `name:bound` (the deepest scheduler that does; `name` alone means `name:full`).
struct ModelTest {
  std::string_view name;
  std::string_view description;
  bool (*simulate)(rl::test_params&);  // rl::simulate<Suite>
  std::string_view kills;
  CleanRun clean;
  ModelReach reach;
};

namespace runner_detail {

// A streambuf over a C FILE: writing never calls operator new (see file comment).
class FileStreambuf : public std::streambuf {
 public:
  explicit FileStreambuf(std::FILE* f) : f_(f) {}

 protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    return std::fputc(ch, f_) == EOF ? traits_type::eof() : ch;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    return static_cast<std::streamsize>(std::fwrite(s, 1, static_cast<std::size_t>(n), f_));
  }

 private:
  std::FILE* f_;
};

inline void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

inline std::optional<std::uint64_t> parse_count(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

inline const char* scheduler_name(rl::scheduler_type_e s) {
  switch (s) {
    case rl::sched_bound:
      return "bound";
    case rl::sched_full:
      return "full";
    default:
      return "random";
  }
}

inline int usage(std::string_view model, std::span<const ModelTest> tests, std::string_view why) {
  std::fprintf(stderr, "model_%.*s: %.*s\n", static_cast<int>(model.size()), model.data(),
               static_cast<int>(why.size()), why.data());
  std::fprintf(stderr,
               "usage: model_%.*s --test NAME [--mutant NAME] [--iterations N]\n"
               "         [--scheduler random|bound|full] [--context-bound N]\n"
               "         [--history FILE] [--expect-fail] | --list\n"
               "tests:\n",
               static_cast<int>(model.size()), model.data());
  for (const ModelTest& t : tests) {
    std::fprintf(stderr, "  %-20.*s %.*s\n", static_cast<int>(t.name.size()), t.name.data(),
                 static_cast<int>(t.description.size()), t.description.data());
  }
  return 2;
}

// One entry of a ModelTest's `kills`: "name" or "name:reach".
struct Kill {
  std::string_view mutant;
  std::string_view reach;  // "random", "bound" or "full"
};

// Splits `kills` into entries; false (and a message naming the test) if a name is
// not a mutant or a reach is not a scheduler.
inline bool parse_kills(std::string_view model, const ModelTest& t, std::vector<Kill>& out) {
  for (std::string_view rest = t.kills; !rest.empty();) {
    const std::size_t sp = rest.find(' ');
    const std::string_view entry = rest.substr(0, sp);
    rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
    if (entry.empty()) continue;
    const std::size_t colon = entry.find(':');
    Kill k{entry.substr(0, colon),
           colon == std::string_view::npos ? std::string_view("full") : entry.substr(colon + 1)};
    const char* bad = nullptr;
    if (!mutant_from_name(k.mutant)) {
      bad = "mutant";
    } else if (k.reach != "random" && k.reach != "bound" && k.reach != "full") {
      bad = "reach";
    }
    if (bad != nullptr) {
      std::fprintf(stderr, "model_%.*s: test %.*s kills '%.*s': unknown %s\n",
                   static_cast<int>(model.size()), model.data(), static_cast<int>(t.name.size()),
                   t.name.data(), static_cast<int>(entry.size()), entry.data(), bad);
      return false;
    }
    out.push_back(k);
  }
  return true;
}

// `--list`: the catalogue as one line of JSON (see the file comment); exit code 0,
// or 3 if a test's kills name an unknown mutant or reach.
inline int print_list(std::string_view model, std::span<const ModelTest> tests) {
  std::string out = "[";
  for (const ModelTest& t : tests) {
    std::vector<Kill> kills;
    if (!parse_kills(model, t, kills)) return 3;
    if (out.size() > 1) out += ',';
    out += "{\"test\":";
    json_string(out, t.name);
    out += ",\"description\":";
    json_string(out, t.description);
    out += ",\"clean\":";
    out += t.clean == CleanRun::kPasses ? "\"pass\"" : "\"fail\"";
    std::string reach;
    for (const Kill& k : kills) {
      out += reach.empty() ? ",\"kills\":[" : ",";
      reach += reach.empty() ? "{" : ",";
      json_string(out, k.mutant);
      json_string(reach, k.mutant);
      reach += ':';
      json_string(reach, k.reach);
    }
    out += kills.empty() ? ",\"kills\":[]" : "]";
    out += ",\"bound_quick\":" + std::to_string(t.reach.bound_quick);
    out += ",\"bound_slow\":" + std::to_string(t.reach.bound_slow);
    out += std::string(",\"full_quick\":") + (t.reach.full_quick ? "true" : "false");
    out += ",\"kill_reach\":" + (kills.empty() ? std::string("{}") : reach + "}");
    out += '}';
  }
  std::printf("%s]\n", out.c_str());
  return 0;
}

}  // namespace runner_detail

// tlab::models::model_main: the whole CLI of a model binary; returns the exit code.
inline int model_main(std::string_view model, std::span<const ModelTest> tests, int argc,
                      char** argv) {
  using runner_detail::usage;
  const ModelTest* test = nullptr;
  std::optional<Mutant> mutant;
  std::optional<std::uint64_t> iterations;
  std::optional<std::uint64_t> context_bound;
  rl::scheduler_type_e scheduler = rl::sched_random;
  std::string history_path;
  bool expect_fail = false;

  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--list") return runner_detail::print_list(model, tests);
    if (arg == "--expect-fail") {
      expect_fail = true;
      continue;
    }
    if (i + 1 >= argc) return usage(model, tests, std::string("missing value for ") + argv[i]);
    const std::string_view value = argv[++i];
    if (arg == "--test") {
      for (const ModelTest& t : tests) {
        if (t.name == value) test = &t;
      }
      if (test == nullptr) return usage(model, tests, std::string("unknown test ") + argv[i]);
    } else if (arg == "--mutant") {
      if (value != "none") {
        mutant = mutant_from_name(value);
        if (!mutant) return usage(model, tests, std::string("unknown mutant ") + argv[i]);
      }
    } else if (arg == "--iterations") {
      iterations = runner_detail::parse_count(value);
      if (!iterations || *iterations == 0) {
        return usage(model, tests, std::string("bad --iterations ") + argv[i]);
      }
    } else if (arg == "--context-bound") {
      context_bound = runner_detail::parse_count(value);
      if (!context_bound || *context_bound > 64) {
        return usage(model, tests, std::string("bad --context-bound ") + argv[i]);
      }
    } else if (arg == "--scheduler") {
      if (value == "random") {
        scheduler = rl::sched_random;
      } else if (value == "bound") {
        scheduler = rl::sched_bound;
      } else if (value == "full") {
        scheduler = rl::sched_full;
      } else {
        return usage(model, tests, std::string("unknown scheduler ") + argv[i]);
      }
    } else if (arg == "--history") {
      history_path = value;
    } else {
      return usage(model, tests, std::string("unknown option ") + argv[i - 1]);
    }
  }
  if (test == nullptr) return usage(model, tests, "--test is required");
  if (iterations && scheduler != rl::sched_random) {
    return usage(model, tests, "--iterations applies to --scheduler random only");
  }
  if (context_bound && scheduler != rl::sched_bound) {
    return usage(model, tests, "--context-bound applies to --scheduler bound only");
  }

  std::FILE* report = std::tmpfile();
  if (report == nullptr) {
    std::perror("tmpfile");
    return 2;
  }
  runner_detail::FileStreambuf report_buf(report);
  std::ostream report_stream(&report_buf);
  std::ostream null_stream(nullptr);  // badbit: progress lines go nowhere

  rl::test_params params;
  params.iteration_count = iterations.value_or(100000);
  params.output_stream = &report_stream;
  params.progress_stream = &null_stream;
  params.search_type = scheduler;
  params.context_bound = static_cast<unsigned>(context_bound.value_or(1));

  RelacyPlatform::set_mutant(mutant);
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  test->simulate(params);
  const double cpu_seconds = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  RelacyPlatform::set_mutant(std::nullopt);
  report_stream.flush();

  const bool failed = params.test_result != rl::test_result_success;
  // Relacy numbers iterations from 1 and leaves stop_iteration at the last one
  // run: the failing one, or the last of the search.
  const std::uint64_t runs = static_cast<std::uint64_t>(params.stop_iteration);
  const bool pass = failed == expect_fail;

  bool history_written = false;
  std::string message;  // Relacy's "RESULT (what failed)" line
  if (failed) {
    std::rewind(report);
    std::FILE* sink = history_path.empty() ? nullptr : std::fopen(history_path.c_str(), "w");
    if (!history_path.empty() && sink == nullptr) std::perror(history_path.c_str());
    char line[4096];
    int shown = 0;
    const std::string_view result_str = rl::test_result_str(params.test_result);
    while (std::fgets(line, sizeof line, report) != nullptr) {
      if (message.empty() && std::string_view(line).starts_with(result_str)) {
        message = line;
        while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) {
          message.pop_back();
        }
      }
      if (sink != nullptr) {
        std::fputs(line, sink);
      } else if (shown++ < 4) {
        std::fputs(line, stderr);  // test name, result, iteration
      }
    }
    if (sink != nullptr) history_written = std::fclose(sink) == 0;
    if (sink == nullptr) std::fputs("(pass --history FILE for the execution history)\n", stderr);
  }
  std::fclose(report);

  std::string out = "{\"model\":";
  runner_detail::json_string(out, model);
  out += ",\"test\":";
  runner_detail::json_string(out, test->name);
  out += ",\"mutant\":";
  if (mutant) {
    runner_detail::json_string(out, name_of(*mutant));
  } else {
    out += "null";
  }
  out += ",\"scheduler\":";
  runner_detail::json_string(out, runner_detail::scheduler_name(scheduler));
  out += ",\"context_bound\":";
  out += scheduler == rl::sched_bound ? std::to_string(params.context_bound) : "null";
  out += ",\"iterations\":" + std::to_string(runs);
  out += std::string(",\"failed\":") + (failed ? "true" : "false");
  out += ",\"result\":";
  runner_detail::json_string(out, rl::test_result_str(params.test_result));
  out += ",\"message\":";
  runner_detail::json_string(out, message);
  out += ",\"failing_iteration\":" + (failed ? std::to_string(params.stop_iteration) : "null");
  char num[64];
  std::snprintf(num, sizeof num, "%.6f", seconds);
  out += std::string(",\"seconds\":") + num;
  std::snprintf(num, sizeof num, "%.6f", cpu_seconds);
  out += std::string(",\"cpu_seconds\":") + num;
  // Per CPU second: a model is one OS thread, and CI machines are shared.
  std::snprintf(num, sizeof num, "%.0f",
                cpu_seconds > 0 ? static_cast<double>(runs) / cpu_seconds : 0.0);
  out += std::string(",\"iterations_per_second\":") + num;
  out += std::string(",\"expect_fail\":") + (expect_fail ? "true" : "false");
  out += std::string(",\"verdict\":") + (pass ? "\"pass\"" : "\"fail\"");
  out += ",\"history\":";
  if (history_written) {
    runner_detail::json_string(out, history_path);
  } else {
    out += "null";
  }
  out += '}';
  std::printf("%s\n", out.c_str());
  return pass ? 0 : 1;
}

}  // namespace tlab::models
