// timer.go: a timer facility in Go, exported to tlab through the subject ABI
// (tlab/subject.h) with -buildmode=c-shared; subject.c holds the descriptor.
//
// A container/heap of pending timers ordered by (deadline, sequence number), each
// in a slot of a growable table; handles are (generation << 32) | slot, and a
// slot's generation changes when its timer fires or is cancelled, so a stale
// handle names no timer and cancel says TOO_LATE.
//
//	schedule  O(log n)   cancel  O(log n)   poll  O(log n) per fired timer
//
// Ground rules: not THREAD_SAFE (tlab serialises the calls on an instance); poll
// takes every due timer out of the heap before calling fired(), so a fired()
// that re-enters finds the heap consistent. Promises: DELIVERY, EXACTLY_ONCE,
// NEVER_EARLY, ACCURATE_CANCEL, FIFO_TIES, PENDING_COUNT, VIRTUAL.
package main

/*
#include <stdint.h>
typedef void (*go_timer_fired_fn)(void*, uint64_t);
void go_timer_call_fired(go_timer_fired_fn fired, void* host, uint64_t cookie);
int go_timer_seeded_bug(void);
*/
import "C"

import (
	"container/heap"
	"math"
	"runtime/cgo"
	"unsafe"
)

// tlab_cancel_result values (tlab/subject.h).
const (
	cancelPrevented = 1
	cancelTooLate   = 2
)

type slot struct {
	generation uint32
	live       bool
	deadline   int64
	seq        uint64
	cookie     uint64
	pos        int // index in the heap
}

type facility struct {
	host  unsafe.Pointer // tlab's, passed back to fired; never dereferenced here
	fired C.go_timer_fired_fn
	slots []slot
	free  []uint32
	heap  timerHeap
	seq   uint64
	bug   bool
}

// timerHeap holds slot indices ordered by (deadline, seq); it keeps slot.pos.
type timerHeap struct {
	f   *facility
	idx []uint32
}

func (h timerHeap) Len() int { return len(h.idx) }
func (h timerHeap) Less(i, j int) bool {
	a, b := &h.f.slots[h.idx[i]], &h.f.slots[h.idx[j]]
	if a.deadline != b.deadline {
		return a.deadline < b.deadline
	}
	return a.seq < b.seq
}
func (h timerHeap) Swap(i, j int) {
	h.idx[i], h.idx[j] = h.idx[j], h.idx[i]
	h.f.slots[h.idx[i]].pos = i
	h.f.slots[h.idx[j]].pos = j
}
func (h *timerHeap) Push(x any) {
	s := x.(uint32)
	h.f.slots[s].pos = len(h.idx)
	h.idx = append(h.idx, s)
}
func (h *timerHeap) Pop() any {
	s := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return s
}

func get(self C.uintptr_t) *facility { return cgo.Handle(self).Value().(*facility) }

// satAdd: now + delay, saturating (a negative delay is due at once).
func satAdd(now, delay int64) int64 {
	if delay > 0 && now > math.MaxInt64-delay {
		return math.MaxInt64
	}
	if delay < 0 && now < math.MinInt64-delay {
		return math.MinInt64
	}
	return now + delay
}

//export goCreate
func goCreate(host unsafe.Pointer, fired C.go_timer_fired_fn) C.uintptr_t {
	f := &facility{host: host, fired: fired, bug: C.go_timer_seeded_bug() != 0}
	f.heap.f = f
	return C.uintptr_t(cgo.NewHandle(f))
}

//export goDestroy
func goDestroy(self C.uintptr_t) { cgo.Handle(self).Delete() }

//export goSchedule
func goSchedule(self C.uintptr_t, now, delay C.int64_t, cookie C.uint64_t) C.uint64_t {
	f := get(self)
	var s uint32
	if n := len(f.free); n > 0 {
		s, f.free = f.free[n-1], f.free[:n-1]
	} else {
		f.slots = append(f.slots, slot{})
		s = uint32(len(f.slots) - 1)
	}
	f.seq++
	sl := &f.slots[s]
	sl.live, sl.deadline, sl.seq, sl.cookie = true, satAdd(int64(now), int64(delay)), f.seq, uint64(cookie)
	heap.Push(&f.heap, s)
	return C.uint64_t(uint64(sl.generation)<<32 | uint64(s))
}

// settle frees slot s: its generation moves on, so old handles go stale.
func (f *facility) settle(s uint32) {
	f.slots[s].live = false
	f.slots[s].generation++
	f.free = append(f.free, s)
}

//export goCancel
func goCancel(self C.uintptr_t, handle C.uint64_t) C.int32_t {
	f := get(self)
	s, gen := uint32(handle), uint32(uint64(handle)>>32)
	if int(s) >= len(f.slots) || !f.slots[s].live || f.slots[s].generation != gen {
		return cancelTooLate
	}
	if f.bug {
		return cancelPrevented // BUG (seeded): says stopped, leaves it in the heap
	}
	heap.Remove(&f.heap, f.slots[s].pos)
	f.settle(s)
	return cancelPrevented
}

//export goPoll
func goPoll(self C.uintptr_t, now C.int64_t) {
	f := get(self)
	var due []uint64
	for f.heap.Len() > 0 && f.slots[f.heap.idx[0]].deadline <= int64(now) {
		s := heap.Pop(&f.heap).(uint32)
		due = append(due, f.slots[s].cookie)
		f.settle(s)
	}
	for _, cookie := range due {
		C.go_timer_call_fired(f.fired, f.host, C.uint64_t(cookie))
	}
}

//export goPending
func goPending(self C.uintptr_t) C.uint64_t { return C.uint64_t(get(self).heap.Len()) }

func main() {}
