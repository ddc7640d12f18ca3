// tests/support/cli_run.h: running the real tlab binary from an end-to-end test.
//
// run_tlab(bin, args, scratch, cwd) runs `bin args...` through the shell, stdin
// from /dev/null, stdout and stderr captured separately through files in
// `scratch`, and returns the exit code (-1 if killed by a signal) and both streams.
// Arguments are single-quoted, so tests pass them verbatim.
//
// Ground rules: one call at a time per scratch directory.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tlab::testing {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline CliResult run_tlab(const std::string& bin, const std::vector<std::string>& args,
                          const std::filesystem::path& scratch, const std::string& cwd = "") {
  std::string cmd = cwd.empty() ? "" : "cd " + shell_quote(cwd) + " && ";
  cmd += shell_quote(bin);
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote((scratch / "out").string()) + " 2>" +
         shell_quote((scratch / "err").string()) + " </dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(scratch / "out"),
          slurp(scratch / "err")};
}

}  // namespace tlab::testing
