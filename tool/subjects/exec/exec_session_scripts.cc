// tlab/tool/subjects/exec/exec_session_scripts.cc: an exec session's callback
// scripts (exec_session.h, docs/protocol.md "Scripts: callbacks that act"): the
// scripted schedule, and each answer `by` a callback performing its script,
// checked for order and handed to the bound ScriptHost.
#include <algorithm>
#include <deque>
#include <iterator>

#include <fmt/format.h>

#include "subjects/exec/exec_session.h"

namespace tlab::tool::exec {

namespace {
// max_id_of: the highest id in `then`, nested actions included.
std::uint64_t max_id_of(const std::vector<runner::ScriptAction>& then) {
  std::uint64_t m = 0;
  for (const runner::ScriptAction& a : then) m = std::max({m, a.id, max_id_of(a.then)});
  return m;
}
}  // namespace

void ExecSession::bind_script_host(runner::ScriptHost* host) {
  std::lock_guard lk(mu_);
  script_host_ = host;
}

tlab_status ExecSession::schedule_scripted(std::int64_t delay_ns, std::uint64_t id,
                                           const std::vector<runner::ScriptAction>& then,
                                           std::uint64_t* handle) {
  Waiter w;
  w.delay_ns = delay_ns;
  w.then = then;
  {
    // The ids the script will schedule are tlab's too (a `fired` for them is
    // not "an id tlab never scheduled").
    std::lock_guard lk(mu_);
    max_id_ = std::max(max_id_, max_id_of(then));
  }
  if (!request(Kind::kSchedule, id, schedule_scripted_line(id, delay_ns, then), w)) {
    return TLAB_ENOMEM;
  }
  if (w.answer == MessageType::kError) return TLAB_EINVAL;
  *handle = id;
  return TLAB_OK;
}

void ExecSession::expect_script(std::uint64_t id, std::vector<runner::ScriptAction> then) {
  for (const runner::ScriptAction& a : then) {
    if (!a.cancel) unarmed_[a.id] = id;
  }
  scripted_[id] = std::move(then);
}

bool ExecSession::on_script_answer(const Message& m, const std::string& where) {
  std::unique_lock lk(mu_);
  auto it = reporting_.find(m.by);
  if ((it == reporting_.end() || it->second.empty()) && performed_.contains(m.by)) {
    // A second performance of a script: its timer fired again (a double_resume
    // the driver judged); its actions are not told twice.
    return true;
  }
  if (it == reporting_.end() || it->second.empty()) {
    lk.unlock();
    end(Oracle::kProtocolError,
        fmt::format("{}: {} for id {} by id {}, but no callback of id {} is performing a script "
                    "with an action left to answer",
                    where, name_of(m.type), m.id, m.by, m.by));
    return false;
  }
  runner::ScriptAction a = std::move(it->second.front());
  const bool fits = a.id == m.id && (m.type == MessageType::kError ||
                                     (m.type == MessageType::kScheduled) == !a.cancel);
  if (!fits) {
    lk.unlock();
    end(Oracle::kProtocolError,
        fmt::format("{}: the callback of id {} must answer its script's actions in order, and "
                    "the next is {}",
                    where, m.by, action_sentence(a)));
    return false;
  }
  it->second.pop_front();
  if (it->second.empty()) reporting_.erase(it);
  runner::ScriptHost* host = script_host_;
  if (m.type == MessageType::kScheduled) {
    format_.saw(m.t_ns);
    unarmed_.erase(m.id);
    LedgerSchedule ls;
    ls.at = LedgerInstant{m.t_ns, 0};
    ls.delay = a.delay_ns;
    ledger_.schedule(m.id, ls);
    ledger_.armed(m.id, m.id);
    if (!a.then.empty()) expect_script(m.id, std::move(a.then));
  } else if (m.type == MessageType::kCancelled) {
    LedgerCancel c;
    c.cookie = c.handle = m.id;
    ledger_.cancelled(c, abi_result_of(m.result));
  } else if (!a.cancel) {
    unarmed_.erase(m.id);
  }
  lk.unlock();
  if (host == nullptr) return true;
  if (!a.cancel) {
    host->script_scheduled(m.by, m.id, m.type == MessageType::kScheduled);
  } else {
    host->script_cancelled(m.by, m.id, m.type == MessageType::kCancelled, abi_result_of(m.result));
  }
  return true;
}

}  // namespace tlab::tool::exec
