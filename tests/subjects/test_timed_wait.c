/* tests/subjects/test_timed_wait.c: a small, correct counting semaphore behind
 * the subject ABI's timed wait (TLAB_KIND_TIMED_WAIT, tlab/subject.h), and, under
 * one compile-time define each, the bugs the generic driver's timed-wait oracles
 * must catch.
 *
 * The semaphore: `permits` free at creation; acquire_for(t) waits on a condition
 * variable (CLOCK_MONOTONIC) until a permit is free or t has elapsed; release()
 * returns one and wakes one waiter. Thread-safe (one pthread mutex).
 *
 *   | define                  | bug                                               | oracle            |
 *   |-------------------------|---------------------------------------------------|-------------------|
 *   | (none)                  | correct                                           | none              |
 *   | TLAB_TEST_BUG_EARLY     | gives up after half the timeout                   | early_fire        |
 *   | TLAB_TEST_BUG_EXCLUSION | a timed-out wait takes the lock anyway            | mutual_exclusion  |
 *   | TLAB_TEST_BUG_NO_TIMEOUT| waits without a deadline (only a release wakes)   | lost_wakeup       |
 *   | TLAB_TEST_BUG_LOST_     | release() loses the permit (nothing is returned,  | undeserved_timeout|
 *   |   RELEASE               | nobody is woken): the next wait times out though  |                   |
 *   |                         | tlab's own release left it free                   |                   |
 *
 * Cost: acquire_for and release are one lock each, plus the wait.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "tlab/subject.h"

#ifndef TLAB_TEST_SUBJECT_NAME
#define TLAB_TEST_SUBJECT_NAME "test_wait_correct"
#endif

typedef struct semaphore {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int64_t free_permits; /* below 0 only under TLAB_TEST_BUG_EXCLUSION */
} semaphore;

static tlab_status create(const tlab_subject_config* config, void** self) {
  semaphore* s = calloc(1, sizeof *s);
  if (s == NULL) return TLAB_ENOMEM;
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, &attr);
  pthread_condattr_destroy(&attr);
  s->free_permits = config->permits;
  *self = s;
  return TLAB_OK;
}

static void destroy(void* self) {
  semaphore* s = self;
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

static tlab_status acquire_for(void* self, int64_t timeout_ns, int32_t* acquired) {
  semaphore* s = self;
  if (timeout_ns < 0) timeout_ns = 0;
#ifdef TLAB_TEST_BUG_EARLY
  timeout_ns /= 2;
#endif
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  const int64_t ns = until.tv_nsec + timeout_ns % 1000000000;
  until.tv_sec += (time_t)(timeout_ns / 1000000000 + ns / 1000000000);
  until.tv_nsec = (long)(ns % 1000000000);
  pthread_mutex_lock(&s->mu);
  int timed_out = 0;
  while (s->free_permits <= 0 && !timed_out) {
#ifdef TLAB_TEST_BUG_NO_TIMEOUT
    pthread_cond_wait(&s->cv, &s->mu);
#else
    timed_out = pthread_cond_timedwait(&s->cv, &s->mu, &until) == ETIMEDOUT;
#endif
  }
#ifdef TLAB_TEST_BUG_EXCLUSION
  timed_out = 0; /* takes it anyway */
#endif
  if (s->free_permits > 0 || !timed_out) {
    --s->free_permits;
    *acquired = 1;
  } else {
    *acquired = 0;
  }
  pthread_mutex_unlock(&s->mu);
  return TLAB_OK;
}

static tlab_status release(void* self) {
  semaphore* s = self;
  pthread_mutex_lock(&s->mu);
#ifndef TLAB_TEST_BUG_LOST_RELEASE
  ++s->free_permits;
  pthread_cond_signal(&s->cv);
#endif
  pthread_mutex_unlock(&s->mu);
  return TLAB_OK;
}

static const tlab_subject kSubject = {
    TLAB_SUBJECT_ABI_VERSION,
    sizeof(tlab_subject),
    TLAB_TEST_SUBJECT_NAME,
    "tests/subjects/test_timed_wait.c: a counting semaphore (one bug per build)",
    TLAB_KIND_TIMED_WAIT,
    0,
    TLAB_CLOCK_MONOTONIC,
    0,
    TLAB_PROMISE_DELIVERY | TLAB_PROMISE_NEVER_EARLY | TLAB_PROMISE_THREAD_SAFE |
        TLAB_PROMISE_MUTUAL_EXCLUSION | TLAB_PROMISE_NO_SPURIOUS_TIMEOUT,
    0,
    create,
    destroy,
    NULL,
    NULL,
    NULL,
    NULL,
    acquire_for,
    release,
    0,
    0,
    0,
    NULL,
};

__attribute__((visibility("default"))) const tlab_subject* tlab_subject_entry(
    uint32_t host_abi_version) {
  return host_abi_version == TLAB_SUBJECT_ABI_VERSION ? &kSubject : NULL;
}
