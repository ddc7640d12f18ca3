// tlab/tool/subjects/case_targets.cc: see case_targets.h.
#include "subjects/case_targets.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "subjects/exec/exec_subject.h"
#include "subjects/plugin.h"
#include "subjects/subjects.h"

namespace tlab::tool {

CaseTarget engine_target(const Scenario& s, std::string_view strategy) {
  CaseTarget t;
  std::string why;
  const SubjectInfo* engine = engine_for(s, why);
  if (engine == nullptr) {
    t.refusal = "scenario not supported by the stress runner: " + why;
    return t;
  }
  t.subject = std::string(engine->name);
  t.engine = t.subject;
  t.promises = promises_of_case(*engine, strategy);
  t.drive = engine->run_case;
  // The timer_service engine performs callback scripts (runner/service_scripts.h);
  // on the other engines the scenario runs as written but for the callback_* fields.
  if (!engine->promises.has(Promise::kReentrant) &&
      std::any_of(s.actors.begin(), s.actors.end(),
                  [](const Actor& a) { return a.scripts_callbacks(); })) {
    t.drive = [run = engine->run_case, name = engine->name](runner::CaseContext& ctx) {
      ctx.note(fmt::format(
          "callback scripts not performed: the {} engine does not run them (the timer_service, "
          "executor and coroutine_loop engines do, and a subject whose callbacks may call it "
          "does, under --subject)",
          name));
      run(ctx);
    };
  }
  return t;
}

CaseTarget subject_target(const SubjectFacts& facts) {
  CaseTarget t;
  t.subject = facts.name;
  t.engine = "subject " + facts.name;
  t.promises = facts.promises;
  t.drive = [open = subject_opener(facts.spec)](runner::CaseContext& ctx) {
    runner::run_subject_engine(ctx, open);
  };
  return t;
}

CaseTarget subject_target(const std::string& spec) {
  std::string error;
  const std::optional<SubjectFacts> facts = probe_subject(spec, error);
  if (facts) return subject_target(*facts);
  CaseTarget refused;
  refused.refusal = error;
  return refused;
}

runner::SubjectOpener subject_opener(const std::string& spec) {
  return [spec](runner::CaseContext& ctx) {
    std::string error;
    if (exec::is_exec_spec(spec)) {
      const tlab_subject* d = exec::open_exec_subject(spec, error);
      if (d == nullptr) throw std::runtime_error(error);
      return runner::OpenedSubject{d, exec::bind_exec_case(ctx)};
    }
    const tlab_subject* d = open_subject(spec, error);
    if (d == nullptr) throw std::runtime_error(error);
    return runner::OpenedSubject{d, {}};
  };
}

}  // namespace tlab::tool
