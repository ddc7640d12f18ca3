// End-to-end tests of tlab against hand-made hostile input (issue 10 §3). Each
// input is made at run time, tlab runs as a child process under RLIMIT_AS = 1 GiB
// (so a memory blow-up fails the test instead of the machine), and every case must
// end in exit 2 with the file and a JSON pointer (or the file and a reason) on
// stderr, and at most kMaxErrorsPerFile + 1 lines of it. Work is bounded by what
// tlab prints (lines), never by time.
//
// Signals are arranged so that nothing depends on timing: a SIGTERM is made pending
// before exec (blocked, raised, then exec), and RLIMIT_FSIZE makes the report write
// fail at a fixed size.
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_input.h"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Lines tlab may print for one bad file: kMaxErrorsPerFile errors plus the
// "... and K more errors" line.
constexpr std::size_t kMaxLinesPerFile = tlab::tool::kMaxErrorsPerFile + 1;

// Sanitizers reserve terabytes of address space, so RLIMIT_AS cannot apply there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kLimitMemory = false;
#else
constexpr bool kLimitMemory = true;
#endif

struct Child {
  int code = -1;   // exit status; -1 when a signal killed it
  int signal = 0;  // the signal that killed it, if any
  std::string out;
  std::string err;
};

struct Limits {
  rlim_t file_size = RLIM_INFINITY;  // RLIMIT_FSIZE, bytes
  bool pending_sigterm = false;      // SIGTERM already pending when tlab starts
};

// tlab: runs the binary with `args` in the fixture directory under RLIMIT_AS = 1 GiB
// and `limits`; stdin is /dev/null, stdout and stderr are pipes read to the end.
Child tlab(const std::vector<std::string>& args, Limits limits = {}) {
  int out_pipe[2], err_pipe[2];
  if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) std::abort();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a killed test (ctest timeout) leaves no tlab behind
    if (kLimitMemory) {
      const rlimit as{rlim_t{1} << 30, rlim_t{1} << 30};
      ::setrlimit(RLIMIT_AS, &as);
    }
    const rlimit fsize{limits.file_size, limits.file_size};
    ::setrlimit(RLIMIT_FSIZE, &fsize);
    if (limits.pending_sigterm) {
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, SIGTERM);
      ::sigprocmask(SIG_BLOCK, &set, nullptr);
      ::raise(SIGTERM);  // pending: the blocked mask and the signal survive exec
    }
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    if (::chdir(TLAB_E2E_DIR) != 0) ::_exit(126);
    std::vector<char*> argv{const_cast<char*>(TLAB_BIN)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(TLAB_BIN, argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  Child c;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&c.out, &c.err};
  int open_fds = 2;
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) continue;  // EINTR
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[65536];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) c.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) c.signal = WTERMSIG(status);
  return c;
}

std::size_t lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

// A scratch directory for the inputs of this process.
fs::path scratch() {
  static const fs::path dir =
      fs::temp_directory_path() / ("tlab_hostile_input_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

fs::path write(const std::string& name, const std::string& bytes) {
  const fs::path p = scratch() / name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

// A scenario that validates; the cases below break one thing in it.
Json good_scenario() {
  return Json::parse(R"({"name": "hostile", "description": "d",
    "actors": [{"role": "waiter", "count": 1, "timeout_us": {"fixed": 1}}],
    "run": {"operations": 1, "budget_s": 1}})");
}

// with_text: the good scenario with `text` spliced in as the value at the top-level
// key `key` (so the text can be anything, valid JSON or not).
std::string with_text(const std::string& key, const std::string& text) {
  std::string doc = good_scenario().dump();
  doc.insert(1, "\"" + key + "\": " + text + ", ");
  return doc;
}

std::string repeated(const std::string& item, std::size_t n) {
  std::string s = "[";
  for (std::size_t i = 0; i < n; ++i) s += (i ? "," : "") + item;
  return s + "]";
}

struct Case {
  std::string name;
  std::string bytes;
  std::string pointer;  // expected after "file: "
  std::string needle;   // expected in the message
};

// expect_bad: `tlab validate` on `bytes` exits 2 with "file: pointer: ...needle",
// within kMaxLinesPerFile lines and without being killed.
void expect_bad(const Case& c) {
  const fs::path file = write(c.name + ".json", c.bytes);
  const Child r = tlab({"validate", file.string()});
  EXPECT_EQ(r.signal, 0) << c.name << " killed by signal " << r.signal;
  EXPECT_EQ(r.code, 2) << c.name << ": " << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find(file.string() + ": " + c.pointer), std::string::npos)
      << c.name << ": " << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.name << ": " << r.err.substr(0, 2000);
  EXPECT_LE(lines(r.err), kMaxLinesPerFile) << c.name;
}

// Syntax-level hostility: nesting, numbers past int64 either way, non-JSON number
// literals and invalid UTF-8 are each one error with the pointer where it is.
TEST(HostileInputTest, SyntaxLevelInputsAreOneErrorWithAPointer) {
  const std::vector<Case> cases{
      {"deep_nesting", std::string(100000, '['), "/0/0/0/0", "nested deeper than 32 levels"},
      {"deep_objects",
       with_text("x",
                 [] {
                   std::string s;
                   for (int i = 0; i < 100000; ++i) s += "{\"a\":";
                   return s;
                 }()),
       "/x/a/a/a", "nested deeper than 32 levels"},
      {"int64_max_plus_one", with_text("seed", "9223372036854775808"), "/seed", "out of range"},
      {"int64_min_minus_one", with_text("seed", "-9223372036854775809"), "/seed", "out of range"},
      {"huge_positive_float", with_text("seed", "1e400"), "/seed", "out of range"},
      {"huge_negative_float", with_text("seed", "-1e400"), "/seed", "out of range"},
      {"nan_literal", with_text("seed", "NaN"), "/seed", "not JSON"},
      {"infinity_literal", with_text("seed", "Infinity"), "/seed", "not JSON"},
      {"minus_infinity_literal", with_text("seed", "-Infinity"), "/seed", "not JSON"},
      {"invalid_utf8", with_text("description", "\"caf\xC3\x28\""), "/description",
       "ill-formed UTF-8"},
      {"lone_continuation_byte", with_text("name", "\"\x80\""), "/name", "ill-formed UTF-8"},
      {"utf16_bom", "\xFE\xFF" + good_scenario().dump(), "/", "not JSON"},
  };
  for (const Case& c : cases) expect_bad(c);
}

// Arrays longer than the schema's maxItems are one error at the array, whatever
// their length: 300 and 500 identical strategies (once 21 s and 44,851 lines for
// 300, minutes for 500) and a 1 MiB array (once bad_alloc). Duplicates within
// maxItems are one error per repeat, capped at 20 lines plus "... and K more".
TEST(HostileInputTest, HugeArraysAreOneErrorAndOutputIsBounded) {
  const auto strategies = [](std::size_t n) {
    return with_text("engine", "{\"strategies\": " + repeated("\"binary_heap\"", n) + "}");
  };
  std::string mib = "[";
  while (mib.size() < (1 << 20) - 1000) mib += "0,";
  mib += "0]";
  std::string mib_file = good_scenario().dump();
  mib_file.insert(1, "\"engine\": {\"strategies\": " + mib + "}, ");
  expect_bad({"strategies_300", strategies(300), "/engine/strategies: ", "at most 16 allowed"});
  expect_bad({"strategies_500", strategies(500), "/engine/strategies: ", "array of 500 items"});
  expect_bad({"strategies_1mib", mib_file, "/engine/strategies: ", "at most 16 allowed"});
  expect_bad({"faults_too_many", with_text("faults", repeated("{}", 65)),
              "/faults: ", "array of 65 items; at most 64"});
  expect_bad({"strategies_duplicate", strategies(16),
              "/engine/strategies/15: ", "duplicate of /engine/strategies/0"});
  // 64 identical catches: 63 duplicates, so the cap shows.
  const fs::path dup =
      write("catches_duplicate.json", with_text("catches", repeated("\"token_flag_only\"", 64)));
  const Child r = tlab({"validate", dup.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), kMaxLinesPerFile) << r.err;
  EXPECT_NE(r.err.find(dup.string() + ": /catches/1: duplicate of /catches/0"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(dup.string() + ": ... and 43 more errors"), std::string::npos) << r.err;
}

// Many errors in one file are printed as 20 and a count: 64 empty faults (two
// missing properties each, from valijson) and 500 over-long strings (from the
// length pass, before valijson).
TEST(HostileInputTest, ManyErrorsAreCappedAtTwenty) {
  std::string strings = "{";
  for (int i = 0; i < 500; ++i) {
    strings += (i ? ",\"k" : "\"k") + std::to_string(i) + "\": \"" + std::string(2001, 'a') + "\"";
  }
  strings += "}";
  const std::vector<std::tuple<std::string, std::string, std::string>> cases{
      {"empty_faults", with_text("faults", repeated("{}", 64)), "/faults/0/point: "},
      {"long_strings", with_text("x", strings), "/x/k"},
  };
  for (const auto& [name, bytes, pointer] : cases) {
    const fs::path file = write(name + ".json", bytes);
    const Child r = tlab({"validate", file.string()});
    EXPECT_EQ(r.code, 2) << r.err.substr(0, 2000);
    EXPECT_EQ(lines(r.err), kMaxLinesPerFile) << r.err.substr(0, 2000);
    EXPECT_NE(r.err.find(file.string() + ": " + pointer), std::string::npos)
        << r.err.substr(0, 2000);
    EXPECT_NE(r.err.find(file.string() + ": ... and "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("more errors (the first 20 are shown)"), std::string::npos) << r.err;
  }
}

// patterned_pointers: a document pointer for every string with a "pattern" in the
// scenario schema (properties -> "/key", items -> "/0", local $refs followed), so a
// new patterned field is covered without touching this test.
std::vector<std::string> patterned_pointers(const Json& schema) {
  std::vector<std::string> out;
  std::vector<std::pair<const Json*, std::string>> stack{{&schema, ""}};
  while (!stack.empty()) {
    auto [node, ptr] = stack.back();
    stack.pop_back();
    for (int hop = 0; hop < 8 && node->contains("$ref"); ++hop) {
      node = &schema.at(Json::json_pointer(node->at("$ref").get<std::string>().substr(1)));
    }
    if (node->contains("pattern")) out.push_back(ptr);
    if (auto p = node->find("properties"); p != node->end()) {
      for (auto it = p->begin(); it != p->end(); ++it)
        stack.push_back({&it.value(), ptr + "/" + it.key()});
    }
    if (auto items = node->find("items"); items != node->end() && items->is_object()) {
      stack.push_back({&*items, ptr + "/0"});
    }
  }
  return out;
}

// A huge string in every patterned field of scenarios/schema.json is exit 2 with
// its pointer from validate and run (std::regex once overflowed the stack on a
// 28 KB name).
TEST(HostileInputTest, HugeStringInEveryPatternedField) {
  std::ifstream in(TLAB_SCENARIO_SCHEMA);
  const Json schema = Json::parse(in);
  const std::vector<std::string> pointers = patterned_pointers(schema);
  ASSERT_GE(pointers.size(), 5u) << "name, strategies, catches, tsan_catches, fault point";
  for (const std::string& ptr : pointers) {
    Json doc = good_scenario();
    doc[Json::json_pointer(ptr)] = std::string(500000, 'a');
    std::string name = "pattern" + ptr;
    std::replace(name.begin(), name.end(), '/', '_');
    expect_bad({name, doc.dump(), ptr + ": ", "string of 500000 bytes"});
    // run loads through the same loader, before any runner is involved.
    const Child run = tlab({"run", (scratch() / (name + ".json")).string()});
    EXPECT_EQ(run.code, 2) << name << ": " << run.err.substr(0, 2000);
    EXPECT_NE(run.err.find(ptr + ": string of 500000 bytes"), std::string::npos) << run.err;
  }
}

// A UTF-8 byte-order mark at the start is skipped (RFC 8259 §8.1 allows it;
// scenarios/README.md says so): the file validates, and errors keep their pointers.
TEST(HostileInputTest, Utf8BomIsSkipped) {
  const std::string bom = "\xEF\xBB\xBF";
  const fs::path good = write("bom_good.json", bom + good_scenario().dump());
  const Child ok = tlab({"validate", good.string()});
  EXPECT_EQ(ok.code, 0) << ok.err;
  expect_bad({"bom_bad", bom + with_text("seed", "-1"), "/seed: ", "unknown key"});
  expect_bad({"bom_twice", bom + bom + good_scenario().dump(), "/", "not JSON"});
}

// What cannot be read says why, on the open descriptor, never "no such file"
// unless nothing is there: a dangling link, a link loop (ELOOP), a directory where a
// report is expected, an empty scenario directory, /dev/zero (endless) and a FIFO
// with no writer (would block without O_NONBLOCK).
TEST(HostileInputTest, UnreadableInputsNameTheirCause) {
  const fs::path dangling = scratch() / "dangling.json";
  fs::remove(dangling);
  fs::create_symlink(scratch() / "no_such_target.json", dangling);
  const fs::path loop = scratch() / "loop.json";
  fs::remove(loop);
  fs::create_symlink(loop, loop);
  const fs::path fifo = scratch() / "scenario.fifo";
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path empty_dir = scratch() / "empty_dir";
  fs::create_directories(empty_dir);
  const std::vector<std::tuple<std::string, std::string, std::string>> cases{
      {"validate", dangling.string(), "a symbolic link whose target does not exist"},
      {"validate", (scratch() / "absent.json").string(), "no such file"},
      {"validate", loop.string(), "Too many levels of symbolic links"},
      {"validate", "/dev/zero", "not a regular file"},
      {"validate", fifo.string(), "not a regular file"},
      {"validate", empty_dir.string(), "directory holds no scenario files"},
      {"replay", empty_dir.string(), "is a directory"},
  };
  for (const auto& [command, path, needle] : cases) {
    const Child r = tlab({command, path});
    EXPECT_EQ(r.code, 2) << path << ": " << r.err;
    EXPECT_NE(r.err.find(path + ": /: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << path << ": " << r.err;
  }
}

// A chmod 000 file is "Permission denied". Root reads it anyway (CAP_DAC_OVERRIDE),
// so as root this is skipped; the link cases above cover errno-as-itself there.
TEST(HostileInputTest, UnreadableFileIsPermissionDenied) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: chmod 000 does not stop root";
  const fs::path file = write("no_access.json", good_scenario().dump());
  fs::permissions(file, fs::perms::none);
  const Child r = tlab({"validate", file.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(file.string() + ": /: cannot read file: Permission denied"),
            std::string::npos)
      << r.err;
}

// A SIGTERM that arrives while many files are being validated stops tlab before
// the next file with exit 130 (made deterministic by making it pending before exec:
// tlab unblocks it first thing, so no file is read).
TEST(HostileInputTest, SigtermDuringValidationExits130) {
  std::vector<std::string> args{"validate"};
  for (int i = 0; i < 2000; ++i) args.emplace_back("good/racing_minimal.json");
  const Child r = tlab(args, {.pending_sigterm = true});
  EXPECT_EQ(r.code, 130) << r.err << " signal " << r.signal;
  EXPECT_NE(r.err.find("tlab: interrupted; stopped after 0 of 2000 arguments"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find(": ok"), std::string::npos) << "no file is validated after the signal";
  const Child run = tlab({"run", "good/racing_minimal.json"}, {.pending_sigterm = true});
  EXPECT_EQ(run.code, 130) << run.err;
  EXPECT_NE(run.err.find("interrupted while loading scenarios; nothing was run"), std::string::npos)
      << run.err;
}

// Past RLIMIT_FSIZE the report write fails with EFBIG (SIGXFSZ is ignored, so it
// does not kill tlab silently): exit 3 naming the file, no temporary left behind.
TEST(HostileInputTest, FileSizeLimitIsAnErrorNamingTheReport) {
  const fs::path dir = scratch() / "fsize";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string report = (dir / "out.json").string();
  const Child r = tlab({"run", "good/racing_minimal.json", "--strategy", "binary_heap",
                        "--operations", "50", "--report", report},
                       {.file_size = 512});
  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal << ": " << r.err;
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("tlab: cannot write " + report), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir)) << "no report and no temporary file: "
                                 << fs::begin(fs::directory_iterator(dir))->path();
}

}  // namespace
