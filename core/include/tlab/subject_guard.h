// tlab/subject_guard.h: the subject ABI's exception fence for C++ subjects.
//
// tlab/subject.h's ground rule: nothing unwinds through the ABI; errors cross as
// tlab_status codes. subject_guarded(f) runs f (which returns a tlab_status) and
// turns std::bad_alloc into TLAB_ENOMEM and any other exception into TLAB_EFAIL.
// The C++ adapter (subject_adapter.h), tlab's built-in peers and its timed-wait
// subjects all call through it.
//
// Cost: a try block (zero-cost on the no-throw path). Ground rules: a pure
// function template; thread-safe if f is.
#pragma once

#include <new>

#include "tlab/subject.h"

namespace tlab {

template <class F>
tlab_status subject_guarded(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return TLAB_ENOMEM;
  } catch (...) {
    return TLAB_EFAIL;
  }
}

}  // namespace tlab
