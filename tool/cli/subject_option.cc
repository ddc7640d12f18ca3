// tlab/tool/cli/subject_option.cc: see subject_option.h.
#include "cli/subject_option.h"

#include <ostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "runner/engine_subject.h"
#include "subjects/exec/exec_subject.h"

namespace tlab::tool {

void add_subject_option(CLI::App& sub, std::string& spec) {
  sub.add_option("--subject", spec,
                 "run on this subject instead of the engine: a row of `tlab list subjects` "
                 "(libuv, binary_heap, ...), a shared library PATH.so[:entry] exporting the "
                 "subject ABI (tlab/subject.h), or exec:CMD [ARGS...], a process speaking the "
                 "exec protocol (docs/protocol.md)")
      ->type_name("S");
}

std::optional<SubjectFacts> resolve_subject(const std::string& spec, const CliEnv& env) {
  std::string error;
  std::optional<SubjectFacts> f = probe_subject(spec, error);
  if (!f) *env.err << "tlab: " << error << "\n";
  return f;
}

bool subject_overrides(const std::string& spec, const CliEnv& env, Overrides& ov,
                       std::optional<SubjectFacts>& facts) {
  if (spec.empty()) return true;
  facts = resolve_subject(spec, env);
  if (!facts) return false;
  ov.subject = facts;
  return true;
}

tlab_subject shape_of(const SubjectFacts& f) {
  tlab_subject d{};
  d.name = f.name.c_str();  // lives as long as `f`
  d.summary = f.summary.c_str();
  d.abi_version = TLAB_SUBJECT_ABI_VERSION;
  d.struct_size = sizeof(tlab_subject);
  d.kind = f.kind;
  d.drive = f.drive;
  d.clock = f.clock;
  d.promises = f.promise_bits;
  d.max_delay_ns = f.max_delay_ns;
  d.periodic = f.periodic;
  return d;
}

std::vector<Scenario> scenarios_for_subject(std::vector<Scenario> scenarios,
                                            const SubjectFacts& subject, Refusals refusals,
                                            InputErrors& errors, const CliEnv& env) {
  const tlab_subject shape = shape_of(subject);
  const runner::SubjectExtras extras = exec::extras_of(subject);
  const std::size_t all = scenarios.size();
  std::vector<Scenario> out;
  for (Scenario& s : scenarios) {
    std::string why, pointer;
    if (runner::subject_accepts(s, shape, why, pointer, extras)) {
      out.push_back(std::move(s));
      continue;
    }
    if (refusals == Refusals::kErrors) {
      errors.push_back(
          {s.source, pointer.empty() ? "/" : pointer,
           fmt::format("subject {} cannot play this scenario: {}", subject.name, why)});
    } else if (refusals == Refusals::kList) {
      *env.err << fmt::format("tlab: not applicable to subject {}: {} ({})\n", subject.name, s.name,
                              why);
    }
  }
  if (refusals == Refusals::kCount && out.size() < all) {
    *env.err << fmt::format(
        "tlab: {} of {} built-in scenarios do not apply to subject {} (-v lists them, with why)\n",
        all - out.size(), all, subject.name);
  }
  return out;
}

void add_verbose_option(CLI::App& sub, bool& verbose) {
  sub.add_flag("-v,--verbose", verbose,
               "with --subject: list each built-in scenario the subject cannot play, and why "
               "(else one line counts them)")
      ->needs("--subject");
}

std::string describe_subject(const SubjectFacts& f) {
  const std::string kind = f.kind == TLAB_KIND_FACILITY ? "timer facility" : "timed wait";
  std::string drive;
  if (!f.command.empty()) {
    drive = f.can_fail ? ", its own process (exec protocol; callbacks can fail)"
                       : ", its own process (exec protocol)";
  } else if (f.kind == TLAB_KIND_FACILITY) {
    drive = f.drive == TLAB_DRIVE_LOOP ? ", loop-driven" : ", self-driven (its own threads)";
  }
  const std::string clock =
      f.clock == TLAB_CLOCK_HOST ? ", on tlab's clock" : ", own monotonic clock";
  const std::string where = f.builtin()          ? "built in"
                            : !f.command.empty() ? fmt::format("exec: {}; {}", f.command, f.version)
                                                 : f.library + ":" + f.entry;
  return fmt::format("{}: {}{}{} ({}); promises {}", f.name, kind, drive, clock, where,
                     f.promises.names().empty() ? "none" : f.promises.names());
}

}  // namespace tlab::tool
