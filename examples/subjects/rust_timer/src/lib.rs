//! A timer facility in Rust, exported to tlab through the subject ABI
//! (`tlab/subject.h`) as a `cdylib`, with no crates.
//!
//! Pending timers live in a `BTreeMap` keyed by (deadline, sequence number), so
//! equal deadlines fire in schedule order; each timer has a slot, and a handle is
//! `(generation << 32) | slot`: a slot's generation changes when its timer fires
//! or is cancelled, so a stale handle names no timer and cancel says TOO_LATE.
//!
//! | call     | cost                       |
//! |----------|----------------------------|
//! | schedule | O(log n)                   |
//! | cancel   | O(log n)                   |
//! | poll     | O(log n) per fired timer   |
//!
//! Ground rules: not THREAD_SAFE (tlab serialises the calls on an instance); poll
//! takes every due timer out of the map before calling `fired`, so a host that
//! re-enters finds it consistent. A panic never crosses the ABI: each call runs in
//! `catch_unwind` and a panic is `TLAB_EFAIL`. Built with the `after_cancel`
//! feature, cancel has a seeded bug (it says PREVENTED and leaves the timer armed).
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::os::raw::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

// tlab/subject.h, mirrored field for field (#[repr(C)], the same order).
const TLAB_SUBJECT_ABI_VERSION: u32 = 1;
const TLAB_OK: u32 = 0;
const TLAB_EINVAL: u32 = 1;
const TLAB_EFAIL: u32 = 4;
const TLAB_KIND_FACILITY: u32 = 1;
const TLAB_DRIVE_LOOP: u32 = 1;
const TLAB_CLOCK_HOST: u32 = 1;
const TLAB_CANCEL_PREVENTED: i32 = 1;
const TLAB_CANCEL_TOO_LATE: i32 = 2;
const TLAB_PROMISE_DELIVERY: u64 = 1 << 0;
const TLAB_PROMISE_EXACTLY_ONCE: u64 = 1 << 1;
const TLAB_PROMISE_NEVER_EARLY: u64 = 1 << 2;
const TLAB_PROMISE_ACCURATE_CANCEL: u64 = 1 << 3;
const TLAB_PROMISE_FIFO_TIES: u64 = 1 << 4;
const TLAB_PROMISE_PENDING_COUNT: u64 = 1 << 5;
const TLAB_PROMISE_VIRTUAL: u64 = 1 << 8;

type Fired = unsafe extern "C" fn(host: *mut c_void, cookie: u64);

#[repr(C)]
pub struct TlabSubjectConfig {
    struct_size: u32,
    permits: u32,
    now_ns: i64,
    tick_ns: i64,
    host: *mut c_void,
    fired: Option<Fired>,
}

#[repr(C)]
pub struct TlabSubject {
    abi_version: u32,
    struct_size: u32,
    name: *const c_char,
    summary: *const c_char,
    kind: u32,
    drive: u32,
    clock: u32,
    reserved: u32,
    promises: u64,
    max_delay_ns: i64,
    create: Option<unsafe extern "C" fn(*const TlabSubjectConfig, *mut *mut c_void) -> u32>,
    destroy: Option<unsafe extern "C" fn(*mut c_void)>,
    schedule: Option<unsafe extern "C" fn(*mut c_void, i64, i64, u64, *mut u64) -> u32>,
    cancel: Option<unsafe extern "C" fn(*mut c_void, u64, *mut i32) -> u32>,
    poll: Option<unsafe extern "C" fn(*mut c_void, i64) -> u32>,
    pending: Option<unsafe extern "C" fn(*mut c_void, *mut u64) -> u32>,
    acquire_for: Option<unsafe extern "C" fn(*mut c_void, i64, *mut i32) -> u32>,
    release: Option<unsafe extern "C" fn(*mut c_void) -> u32>,
    resolution_ns: i64,
    periodic: u32,
    reserved2: u32,
    schedule_periodic:
        Option<unsafe extern "C" fn(*mut c_void, i64, i64, i64, u32, u64, *mut u64) -> u32>,
}

// The descriptor holds raw pointers (to static strings), so it is not Sync by
// itself; nothing in it is ever written.
struct Descriptor(TlabSubject);
unsafe impl Sync for Descriptor {}

#[cfg(not(feature = "after_cancel"))]
const NAME: &[u8] = b"rust_timer_heap\0";
#[cfg(feature = "after_cancel")]
const NAME: &[u8] = b"rust_timer_heap_after_cancel\0";
#[cfg(not(feature = "after_cancel"))]
const SUMMARY: &[u8] = b"Rust BTreeMap timer, FIFO ties, {slot, generation} handles\0";
#[cfg(feature = "after_cancel")]
const SUMMARY: &[u8] = b"Rust BTreeMap timer; BUG: cancel leaves the timer armed\0";

static SUBJECT: Descriptor = Descriptor(TlabSubject {
    abi_version: TLAB_SUBJECT_ABI_VERSION,
    struct_size: std::mem::size_of::<TlabSubject>() as u32,
    name: NAME.as_ptr() as *const c_char,
    summary: SUMMARY.as_ptr() as *const c_char,
    kind: TLAB_KIND_FACILITY,
    drive: TLAB_DRIVE_LOOP,
    clock: TLAB_CLOCK_HOST,
    reserved: 0,
    promises: TLAB_PROMISE_DELIVERY
        | TLAB_PROMISE_EXACTLY_ONCE
        | TLAB_PROMISE_NEVER_EARLY
        | TLAB_PROMISE_ACCURATE_CANCEL
        | TLAB_PROMISE_FIFO_TIES
        | TLAB_PROMISE_PENDING_COUNT
        | TLAB_PROMISE_VIRTUAL,
    max_delay_ns: 0,
    create: Some(create),
    destroy: Some(destroy),
    schedule: Some(schedule),
    cancel: Some(cancel),
    poll: Some(poll),
    pending: Some(pending),
    acquire_for: None,
    release: None,
    resolution_ns: 0,
    periodic: 0,
    reserved2: 0,
    schedule_periodic: None,
});

/// The entry point tlab looks up.
#[no_mangle]
pub extern "C" fn tlab_subject_entry(host_abi_version: u32) -> *const TlabSubject {
    if host_abi_version == TLAB_SUBJECT_ABI_VERSION {
        &SUBJECT.0
    } else {
        std::ptr::null()
    }
}

struct Slot {
    generation: u32,
    key: Option<(i64, u64)>, // its place in `due` while pending
    cookie: u64,
}

struct Facility {
    host: *mut c_void,
    fired: Fired,
    slots: Vec<Slot>,
    free: Vec<u32>,
    due: BTreeMap<(i64, u64), u32>, // (deadline, seq) -> slot
    seq: u64,
}

impl Facility {
    fn settle(&mut self, slot: u32) {
        let s = &mut self.slots[slot as usize];
        s.key = None;
        s.generation = s.generation.wrapping_add(1);
        self.free.push(slot);
    }
}

/// `body` with panics turned into TLAB_EFAIL: a panic must not cross the ABI.
fn guarded(body: impl FnOnce() -> u32) -> u32 {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(TLAB_EFAIL)
}

unsafe extern "C" fn create(config: *const TlabSubjectConfig, out: *mut *mut c_void) -> u32 {
    guarded(|| {
        // (match, not let-else: Debian's rustc 1.63 builds this)
        let config = match config.as_ref() {
            Some(c) if (c.struct_size as usize) >= std::mem::size_of::<TlabSubjectConfig>() => c,
            _ => return TLAB_EINVAL,
        };
        let fired = match config.fired {
            Some(f) if !out.is_null() => f,
            _ => return TLAB_EINVAL,
        };
        let facility = Facility {
            host: config.host,
            fired,
            slots: Vec::new(),
            free: Vec::new(),
            due: BTreeMap::new(),
            seq: 0,
        };
        *out = Box::into_raw(Box::new(facility)) as *mut c_void;
        TLAB_OK
    })
}

unsafe extern "C" fn destroy(this: *mut c_void) {
    if !this.is_null() {
        drop(Box::from_raw(this as *mut Facility));
    }
}

unsafe extern "C" fn schedule(
    this: *mut c_void,
    now_ns: i64,
    delay_ns: i64,
    cookie: u64,
    handle: *mut u64,
) -> u32 {
    guarded(|| {
        let f = &mut *(this as *mut Facility);
        let slot = match f.free.pop() {
            Some(slot) => slot,
            None => {
                f.slots.push(Slot { generation: 0, key: None, cookie: 0 });
                (f.slots.len() - 1) as u32
            }
        };
        f.seq += 1;
        let key = (now_ns.saturating_add(delay_ns), f.seq);
        f.due.insert(key, slot);
        let s = &mut f.slots[slot as usize];
        s.key = Some(key);
        s.cookie = cookie;
        *handle = (u64::from(s.generation) << 32) | u64::from(slot);
        TLAB_OK
    })
}

unsafe extern "C" fn cancel(this: *mut c_void, handle: u64, result: *mut i32) -> u32 {
    guarded(|| {
        let f = &mut *(this as *mut Facility);
        let (slot, generation) = (handle as u32, (handle >> 32) as u32);
        let key = match f.slots.get(slot as usize) {
            Some(s) if s.generation == generation => s.key,
            _ => None,
        };
        *result = match key {
            None => TLAB_CANCEL_TOO_LATE,
            Some(_) if cfg!(feature = "after_cancel") => TLAB_CANCEL_PREVENTED, // BUG (seeded)
            Some(key) => {
                f.due.remove(&key);
                f.settle(slot);
                TLAB_CANCEL_PREVENTED
            }
        };
        TLAB_OK
    })
}

unsafe extern "C" fn poll(this: *mut c_void, now_ns: i64) -> u32 {
    guarded(|| {
        let f = &mut *(this as *mut Facility);
        let mut cookies = Vec::new();
        while let Some((&key, &slot)) = f.due.iter().next() {
            if key.0 > now_ns {
                break;
            }
            f.due.remove(&key);
            cookies.push(f.slots[slot as usize].cookie);
            f.settle(slot);
        }
        let (fired, host) = (f.fired, f.host);
        for cookie in cookies {
            fired(host, cookie);
        }
        TLAB_OK
    })
}

unsafe extern "C" fn pending(this: *mut c_void, count: *mut u64) -> u32 {
    guarded(|| {
        *count = (*(this as *const Facility)).due.len() as u64;
        TLAB_OK
    })
}
