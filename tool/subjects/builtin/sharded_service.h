// tlab/tool/subjects/builtin/sharded_service.h: ShardedTimerService
// (core/include/tlab/sharded_timer_service.h) as a self-driven subject of the
// subject ABI (tlab/subject.h), so the generic driver's scheduler, canceller and
// timer_thread roles (scenarios/README.md, "On a subject") run on it, and the
// built-in scenario sharded_races (scenarios/sharded_races.json, engine.subject)
// puts its mutants under the kill matrix's scenario layer.
//
// Ground rules: returns a descriptor with static storage duration; any thread.
#pragma once

#include <string_view>

#include "tlab/subject.h"

namespace tlab::tool::builtin {

const tlab_subject* sharded_service_abi(std::string_view name);

}  // namespace tlab::tool::builtin
