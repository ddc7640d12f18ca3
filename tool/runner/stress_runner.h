// tlab/tool/runner/stress_runner.h: StressRunner, the Runner (runner.h) that plays a
// scenario's actors as real threads against the core engine on StressPlatform.
//
// One case = one forked child process:
//
//   parent (the CLI thread)                    child
//   -----------------------                    -----
//   (a subject case: the generic ABI driver, runner/engine_subject.h, opens the
//   subject in the child, so a plugin that crashes or hangs is that case's verdict)
//   spec.target (case_target.h): its driver,
//   or its refusal (error: no fork)
//   pipe + temp file (in $TMPDIR, unlinked at once); fork  -->  dies with the parent (PDEATHSIG)
//                                              stderr -> temp file (TSan, TLAB_CHECK)
//   poll the pipe every 50 ms:                 stress::configure(mutant, fault plans)
//     Ctrl-C       -> SIGKILL, interrupted     monitor thread: budget watchdog,
//     budget + 5 s -> SIGKILL, timeout            lost-wakeup detector + rescue
//   read the result JSON, waitpid              engine driver (engines.h): actor
//   no JSON: crash (signal, TLAB_CHECK)          threads seeded per actor, oracles
//   TSan reports from the temp file            result JSON -> pipe; _exit
//   histograms, latency bounds, verdict
//
// Why a child process: the budget must be a watchdog that NEVER hangs, and a
// mutant may block a thread forever (timer_shutdown_no_wake blocks a join until a
// far head; a lost wakeup parks a waiter forever). Threads cannot be killed, but a
// child can simply report and _exit without joining what is stuck, and the parent
// can SIGKILL a child that does not even manage that. It also isolates the case:
// an aborting TLAB_CHECK (a core invariant caught by a mutant) becomes a verdict
// instead of killing tlab; the stress switchboard is configured only in the child,
// so the parent never runs instrumented code; and the child's stderr, redirected to
// a temp file, is where ThreadSanitizer writes its reports (g++ 12's libtsan prints
// them to fd 2; log_path cannot be changed after start-up, but a dup2 can), so they
// are collected per case without any TSan hook. Cost: one fork (~1 ms) per case.
//
// Verdict (runner.h): fail when any oracle count exceeds its expect bound, an
// expect.at_least requirement is not met, a latency bound is broken, a TSan report
// appeared, or the child crashed on an invariant; timeout when the child's watchdog
// fired at the budget (message: every actor's state) or the child had to be killed;
// error when the case's target was refused (the scenario's roles, width or clock
// are not supported, or its subject could not be probed) or the driver threw.
//
// Ground rules: run_case from one thread at a time (the CLI's). The parent must be
// single-threaded when it forks (it is: the CLI runs no threads of its own).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/sanitizer.h"  // under_tsan() (was declared here)
#include "runner/runner.h"

namespace tlab::tool {

class StressRunner final : public Runner {
 public:
  CaseResult run_case(const CaseSpec& spec, const RunContext& context) override;
};

// make_stress_runner: the RunnerFactory main.cc hands to the CLI.
std::unique_ptr<Runner> make_stress_runner();

// extract_tsan_reports: the "WARNING: ThreadSanitizer: ..." blocks of a stderr
// capture, each up to its closing "==================" line.
std::vector<std::string> extract_tsan_reports(const std::string& text);

}  // namespace tlab::tool
