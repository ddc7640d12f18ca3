// tlab/tool/compare/builtin_subject.cc: see builtin_subject.h.
#include "compare/builtin_subject.h"

#include <fmt/format.h>

#include "compare/subjects.h"
#include "subjects/plugin.h"

namespace tlab::tool::compare {

std::optional<BuiltinTarget> builtin_target(std::string_view name, std::string& error) {
  BuiltinTarget t;
  t.row = find_subject(name);
  if (t.row == nullptr || t.row->abi == nullptr || t.row->bench == nullptr) {
    error = fmt::format("{} is not a built-in subject compare measures (`tlab list subjects`: "
                        "compared)",
                        name);
    return std::nullopt;
  }
  t.descriptor = open_subject(std::string(t.row->name), error);
  if (t.descriptor == nullptr) return std::nullopt;
  if (t.descriptor->kind != TLAB_KIND_FACILITY) {
    error = fmt::format("{} is a timed wait; compare's workloads need a timer facility", name);
    return std::nullopt;
  }
  t.hook = t.row->bench(t.row->name);
  if (t.hook == nullptr) {
    error = fmt::format("{}: its row gives no benchmark hook", name);
    return std::nullopt;
  }
  return t;
}

std::unique_ptr<Subject> make_builtin_subject(const BuiltinTarget& t) {
  return make_abi_subject(*t.descriptor, std::string(t.row->name), t.hook,
                          t.row->origin == SubjectOrigin::kPeer);
}

}  // namespace tlab::tool::compare
