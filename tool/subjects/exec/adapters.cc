// tlab/tool/subjects/exec/adapters.cc: see adapters.h.
#include "subjects/exec/adapters.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace tlab::tool::exec {

namespace {

namespace fs = std::filesystem;

// on_path: whether `program` is an executable in a $PATH directory.
bool on_path(std::string_view program) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path == nullptr ? "" : path;
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    const std::string candidate = fmt::format("{}/{}", dir.empty() ? "." : dir, program);
    if (::access(candidate.c_str(), X_OK) == 0) return true;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return false;
}

}  // namespace

std::string adapters_dir() {
  if (const char* dir = std::getenv("TLAB_ADAPTERS_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return (exe.parent_path().parent_path() / "share" / "tlab" / "adapters").string();
}

const ExecAdapter* find_adapter(std::string_view name) {
  for (const ExecAdapter& a : kExecAdapters) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::vector<std::string> adapter_argv(const ExecAdapter& a, std::string& error) {
  const std::string dir = adapters_dir();
  if (dir.empty()) {
    error = fmt::format(
        "cannot find the adapters: this executable's path is unreadable; set "
        "TLAB_ADAPTERS_DIR to the directory that holds {}",
        a.file);
    return {};
  }
  const fs::path file = fs::path(dir) / a.file;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    error = fmt::format("the {} adapter is not in {} ({} is missing): {}", a.name, dir,
                        std::string(a.file), a.missing);
    return {};
  }
  if (!a.runtime.empty() && !on_path(a.runtime)) {
    error = fmt::format("the {} adapter needs `{}` on PATH: {}", a.name, a.runtime, a.missing);
    return {};
  }
  if (a.runtime.empty()) return {file.string()};
  const fs::path classes = fs::path(dir) / "java" / "classes";
  if (!a.java_class.empty() &&
      fs::is_regular_file(classes / fmt::format("{}.class", a.java_class), ec)) {
    return {std::string(a.runtime), "-cp", classes.string(), std::string(a.java_class)};
  }
  return {std::string(a.runtime), file.string()};
}

bool adapter_available(const ExecAdapter& a, std::string& why) {
  return !adapter_argv(a, why).empty();
}

}  // namespace tlab::tool::exec
