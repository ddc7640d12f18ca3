// tlab/tool/runner/callback_draws.h: what one run of a scripted callback does
// (scenario.h, an Actor's callback_* fields), drawn the same way by every engine
// that performs callback scripts (service_scripts.h, executor_scripts.h,
// engine_coro.cc): in one order, from one generator, so a seed replays.
//
// Cost: up to three Bernoulli draws and one sample. Ground rules: the caller owns
// `rng` (and whatever lock guards it). Memory ordering: none.
#pragma once

#include <cstdint>
#include <random>

#include "scenario/scenario.h"

namespace tlab::tool::runner {

struct CallbackDraws {
  bool self = false;     // cancel the firing timer itself
  bool sibling = false;  // cancel another live timer
  bool rearm = false;    // arm the chain's next timer
  std::int64_t rearm_delay_ns = 0;
};

// draw_callback: self-cancel, sibling cancel, then re-arm (kept only if
// `may_rearm`: a starved pass re-arms nothing), then the kept re-arm's delay
// (callback_rearm_delay_us; 0 when absent).
inline CallbackDraws draw_callback(const Actor& a, std::mt19937_64& rng, bool may_rearm = true) {
  auto draw = [&rng](double p) { return p > 0 && std::bernoulli_distribution(p)(rng); };
  CallbackDraws d;
  d.self = draw(a.callback_self_cancel_probability);
  d.sibling = draw(a.callback_cancel_probability);
  d.rearm = draw(a.callback_rearm_probability) && may_rearm;
  // |callback_rearm_delay_us| <= 9e15 (the schema), so * 1000 fits.
  if (d.rearm && a.callback_rearm_delay_us) {
    d.rearm_delay_ns = a.callback_rearm_delay_us->sample(rng) * 1000;
  }
  return d;
}

}  // namespace tlab::tool::runner
