// tlab/tool/base/process_groups.h: the process groups a case child started (an
// exec subject and whatever it forked: a JVM's helpers, a shell's children), kept
// where both the case child and the CLI can kill them.
//
// A case child that ends normally kills its groups itself (the exec session's
// shutdown); one that ends at its budget _exits from the watchdog, and one stuck
// past it is SIGKILLed by the CLI, and neither runs any destructor. PR_SET_PDEATHSIG
// then ends only a group's leader, not what it forked. So each group is recorded,
// with the pid of the process that started it, in a table in one shared anonymous
// page mapped before any case child is forked:
//
//   | call               | who                          | what                                 |
//   |--------------------|------------------------------|--------------------------------------|
//   | groups_init        | the CLI, before forking cases| maps the table (once; idempotent)    |
//   | groups_add         | a case child (or the CLI)    | records pgid as started by getpid()  |
//   | groups_remove      | the same process             | forgets pgid (it killed the group)   |
//   | groups_kill_owned  | a case child before _exit, or| SIGKILL to each group `owner` started|
//   |                    | the CLI after reaping `owner`| and forgets them                     |
//
// Cost: kMaxGroups slots scanned per call. Ground rules: every call is lock-free
// and async-signal-safe (atomics on the shared page, kill(2)); without
// groups_init (a process that forks no case) the calls do nothing but
// groups_kill_owned, which finds nothing. A full table drops the record: the
// group is then ended only by its own leader's death signal.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace tlab::tool {

inline constexpr std::size_t kMaxGroups = 256;

void groups_init();
void groups_add(pid_t pgid);
void groups_remove(pid_t pgid);
void groups_kill_owned(pid_t owner);

}  // namespace tlab::tool
