// tlab/coro/task.h: Task<T>, a lazily started coroutine that produces one T.
//
// Task<T> is the unit of work of the coroutine loop (coro/event_loop.h). It is the
// C++20 counterpart of the `async { ... }` block in seed 004: creating one runs
// nothing; `co_await task` starts it, suspends the awaiting coroutine and resumes
// it, by symmetric transfer, when the task finishes. A value is returned from
// co_await; an exception escaping the task's body is captured and rethrown from
// the co_await expression in the awaiter. Tuned for being cheap to chain: no
// allocation beyond the coroutine frame itself, no atomics, no virtual calls.
//
//   create      one frame allocation (the compiler's), nothing runs
//   co_await    O(1): stores the continuation, transfers to the task
//   completion  O(1): symmetric transfer back to the continuation (no stack growth)
//   destroy     O(frame): ~Task destroys the frame if the Task still owns it
//
// Follows Lewis Baker's cppcoro::task (lazy start, symmetric transfer via a final
// awaiter that returns the continuation). Departs from it in one respect: a Task
// that is destroyed while its frame is suspended destroys the frame (and with it
// every awaiter and nested Task in it); the awaiters of coro/ are written so that
// their destructors withdraw whatever they registered (timers, event slots), so
// destruction at a suspension point is safe. The loop relies on that only when it
// is itself destroyed with tasks still suspended.
//
// Ownership: the Task object owns the frame, always. co_await does not transfer
// ownership; the frame dies with the Task (normally a temporary or parameter in
// the awaiting frame, so frames die innermost first). Spawned tasks are owned by
// the loop's root coroutines (event_loop.h).
//
// Ground rules: a Task is move-only and may be awaited once. Everything runs on
// the thread that resumes it (for tasks on an EventLoop: the loop thread).
//
// Memory ordering: none; a Task is single-threaded. Cross-thread wake-ups go
// through EventLoop::post(), whose mutex orders them.
#pragma once

#include <coroutine>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "tlab/base/check.h"

namespace tlab {

template <class T = void>
class Task;

namespace detail {

// The part of the promise shared by Task<T> and Task<void>.
class TaskPromiseBase {
 public:
  // Lazy start: nothing runs until the task is awaited.
  std::suspend_always initial_suspend() noexcept { return {}; }

  // At the end, transfer to whoever awaited the task (symmetric transfer, so a
  // chain of a million tasks completing synchronously does not grow the stack).
  struct FinalAwaiter {
    bool await_ready() const noexcept { return false; }
    template <class Promise>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> h) noexcept {
      std::coroutine_handle<> next = h.promise().continuation_;
      return next ? next : std::noop_coroutine();
    }
    void await_resume() const noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }

  void unhandled_exception() noexcept { error_ = std::current_exception(); }

  void set_continuation(std::coroutine_handle<> c) noexcept { continuation_ = c; }

 protected:
  void rethrow_if_failed() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::coroutine_handle<> continuation_;
  std::exception_ptr error_;
};

template <class T>
class TaskPromise final : public TaskPromiseBase {
 public:
  Task<T> get_return_object() noexcept;

  template <class U>
  requires std::convertible_to<U&&, T>
  void return_value(U&& v) { value_.emplace(std::forward<U>(v)); }

  // Requires: the task finished. Rethrows its exception, else moves the value out.
  T take() {
    rethrow_if_failed();
    TLAB_CHECK(value_.has_value(), "Task: result taken twice or task did not finish");
    T out = std::move(*value_);
    value_.reset();
    return out;
  }

 private:
  std::optional<T> value_;
};

template <>
class TaskPromise<void> final : public TaskPromiseBase {
 public:
  Task<void> get_return_object() noexcept;
  void return_void() noexcept {}
  void take() { rethrow_if_failed(); }
};

}  // namespace detail

template <class T>
class [[nodiscard]] Task {
  static_assert(!std::is_reference_v<T>, "Task<T&> is not supported; return a pointer");

 public:
  using promise_type = detail::TaskPromise<T>;
  using Handle = std::coroutine_handle<promise_type>;
  using value_type = T;

  Task() noexcept = default;
  explicit Task(Handle h) noexcept : h_(h) {}
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { destroy(); }

  bool valid() const noexcept { return static_cast<bool>(h_); }
  bool done() const noexcept { return h_ && h_.done(); }

  // tlab::Task::operator co_await
  // Requires: valid(); not awaited before.
  // Ensures: the awaiting coroutine resumes when the task finishes, with its value
  // or with its exception rethrown. A finished task does not suspend the awaiter.
  struct Awaiter {
    Handle h;
    bool await_ready() const noexcept { return h.done(); }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
      h.promise().set_continuation(caller);
      return h;  // start (or continue) the task by symmetric transfer
    }
    T await_resume() { return h.promise().take(); }
  };
  Awaiter operator co_await() && noexcept {
    TLAB_CHECK(h_, "Task: co_await on an empty (moved-from) Task");
    return Awaiter{h_};
  }
  Awaiter operator co_await() & noexcept {
    TLAB_CHECK(h_, "Task: co_await on an empty (moved-from) Task");
    return Awaiter{h_};
  }

 private:
  void destroy() noexcept {
    if (h_) std::exchange(h_, {}).destroy();
  }
  Handle h_;
};

namespace detail {
template <class T>
Task<T> TaskPromise<T>::get_return_object() noexcept {
  return Task<T>(std::coroutine_handle<TaskPromise<T>>::from_promise(*this));
}
inline Task<void> TaskPromise<void>::get_return_object() noexcept {
  return Task<void>(std::coroutine_handle<TaskPromise<void>>::from_promise(*this));
}
}  // namespace detail

}  // namespace tlab
