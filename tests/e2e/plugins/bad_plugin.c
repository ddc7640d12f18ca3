/* tests/e2e/plugins/bad_plugin.c: plugins that are wrong before any case runs,
 * one per BAD_* definition (tests/e2e/CMakeLists.txt builds each as a MODULE
 * library tlab_bad_plugin_<variant>). plugin_test.cc shows that each gets exit 2
 * naming the library and the symbol or field, and that tlab itself survives:
 *
 *   | variant        | what is wrong                                         |
 *   |----------------|-------------------------------------------------------|
 *   | no_entry       | exports `tlab_subject_entry_v2`, not the entry symbol  |
 *   | entry_null     | the entry returns NULL (cannot serve ABI version 1)   |
 *   | wrong_abi      | abi_version 2                                         |
 *   | short_struct   | struct_size smaller than ABI version 1's descriptor   |
 *   | null_schedule  | a facility without schedule                           |
 *   | bad_promises   | PENDING_COUNT promised, pending NULL                  |
 *   | unknown_bits   | a promise bit this ABI does not define                |
 *   | no_periodic_fn | periodic kinds named, schedule_periodic NULL          |
 *   | garbage        | the entry returns a pointer to random bytes           |
 *   | bad_name_ptr   | a name pointer into unmapped memory (probe crashes)   |
 *   | entry_crash    | the entry dereferences NULL                           |
 *   | entry_hang     | the entry never returns                               |
 *   | ctor_crash     | a constructor crashes inside dlopen                   |
 *
 * The functions are never called: the descriptor is refused first. */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "tlab/subject.h"

static tlab_status create(const tlab_subject_config* c, void** self) {
  (void)c;
  *self = NULL;
  return TLAB_OK;
}
static void destroy(void* self) { (void)self; }
static tlab_status schedule(void* self, int64_t now, int64_t delay, uint64_t cookie,
                            uint64_t* handle) {
  (void)self, (void)now, (void)delay, (void)cookie;
  *handle = 0;
  return TLAB_OK;
}
static tlab_status cancel(void* self, uint64_t handle, int32_t* result) {
  (void)self, (void)handle;
  *result = TLAB_CANCEL_UNKNOWN;
  return TLAB_OK;
}
static tlab_status poll_(void* self, int64_t now) {
  (void)self, (void)now;
  return TLAB_OK;
}

static tlab_subject descriptor = {
    TLAB_SUBJECT_ABI_VERSION, sizeof(tlab_subject), "bad_plugin", "a plugin that is wrong",
    TLAB_KIND_FACILITY, TLAB_DRIVE_LOOP, TLAB_CLOCK_HOST, 0,
    TLAB_PROMISE_DELIVERY, 0, create, destroy, schedule, cancel, poll_, NULL, NULL, NULL, 0, 0, 0,
    NULL};

static unsigned char garbage[sizeof(tlab_subject)] = {
    0x9e, 0x37, 0x79, 0xb9, 0x7f, 0x4a, 0x7c, 0x15, 0xf3, 0x9c, 0xc0, 0x60, 0x5c, 0xed, 0xc8, 0x34};

#if defined(BAD_CTOR_CRASH)
/* raise(), not a NULL store: the optimiser may drop a store it can prove is UB. */
__attribute__((constructor)) static void crash_on_load(void) { raise(SIGSEGV); }
#endif

#if defined(BAD_NO_ENTRY)
const tlab_subject* tlab_subject_entry_v2(uint32_t v) {
#else
const tlab_subject* tlab_subject_entry(uint32_t v) {
#endif
  (void)v;
  (void)garbage;
#if defined(BAD_ENTRY_NULL)
  return NULL;
#elif defined(BAD_WRONG_ABI)
  descriptor.abi_version = 2;
#elif defined(BAD_SHORT_STRUCT)
  descriptor.struct_size = 16;
#elif defined(BAD_NULL_SCHEDULE)
  descriptor.schedule = NULL;
#elif defined(BAD_BAD_PROMISES)
  descriptor.promises |= TLAB_PROMISE_PENDING_COUNT;
#elif defined(BAD_UNKNOWN_BITS)
  descriptor.promises |= UINT64_C(1) << 40;
#elif defined(BAD_NO_PERIODIC_FN)
  descriptor.periodic = TLAB_PERIODIC_FIXED_RATE;
#elif defined(BAD_GARBAGE)
  return (const tlab_subject*)garbage;
#elif defined(BAD_BAD_NAME_PTR)
  descriptor.name = (const char*)(uintptr_t)0x10;
#elif defined(BAD_ENTRY_CRASH)
  raise(SIGSEGV);
#elif defined(BAD_ENTRY_HANG)
  for (;;) pause();
#endif
  return &descriptor;
}
