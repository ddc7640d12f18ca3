// timer_subject: Go's time.AfterFunc and time.Ticker as a tlab exec subject (docs/protocol.md);
// README.md has the build command. schedule -> time.AfterFunc(delay_ns, f); cancel ->
// (*Timer).Stop(), true "prevented", false "too_late". With "fail", f writes `fired` and
// panics; nothing recovers. With "period_ns" (kind fixed_rate_skip, the only one listed): a
// series, AfterFunc(delay_ns) for run 0, whose func then starts time.NewTicker(period_ns)
// and serves runs 1, 2, ... from its ticks (README.md, "Periodic series").
//
// Promises, with the pkg.go.dev/time text each rests on. delivery, exactly_once, never_early:
// "AfterFunc waits for the duration to elapse and then calls f in its own goroutine."
// accurate_cancel: Stop "returns true if the call stops the timer, false if the timer has
// already expired or been stopped"; then "the function f has been started in its own
// goroutine". thread_safe: only the reader goroutine calls AfterFunc and Stop (Stop's doc
// forbids concurrent Stops of one Timer); a series' NewTicker runs in its run-0 goroutine
// under mu, and its Ticker.Stop once, in the reader, under mu. Not promised: contains_errors
// (a panic ends the program), pending_count (`pending` is this file's own bookkeeping).
//
// Periodic, fixed_rate_skip: NewTicker "returns a new Ticker containing a channel that will
// send the current time on the channel after each tick. The period of the ticks is specified
// by the duration argument. The ticker will adjust the time interval or drop ticks to make up
// for slow receivers." That is the protocol's skip kind, and package time's only periodic
// timer: no fixed_rate (catch-up) or fixed_delay is listed. delivery: a tick comes "after each
// tick" until Stop; exactly_once holds per run (one goroutine per series, one `fired` per run
// it takes). never_early: run 0 is AfterFunc's; for runs 1, 2, ... Go does not document the
// protocol's rule (run k+1 at the first grid point after run k began), and a run that began
// late can find the next tick sent before that point, so the guarantee is this file's: a tick
// read before that point, on the clock t_ns is read from, is dropped, as the Ticker drops
// ticks itself, and the next one is awaited. accurate_cancel: "Stop turns off a ticker. After
// Stop, no more ticks will be sent." but "Stop does not close the channel", and a tick already
// in it may still be read; so again the guarantee is this file's: the cancel sets the series'
// stopped flag under mu, and a run writes `fired` only under mu with the flag clear. A live
// series answers "prevented", a stopped one "too_late".
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"
	"time"
)

// request is every message tlab sends; a pointer is nil when its key is absent.
type request struct {
	Type     string  `json:"type"`
	ID       *int64  `json:"id"`
	DelayNs  *int64  `json:"delay_ns"`
	Fail     *bool   `json:"fail"`
	PeriodNs *int64  `json:"period_ns"`
	Periodic *string `json:"periodic"`
}

// periodicKinds: the hello's `periodic`, and the only kind a schedule may ask for.
var periodicKinds = []string{"fixed_rate_skip"}

var (
	start  = time.Now() // t_ns is time.Since(start): Go's monotonic reading
	mu     sync.Mutex   // guards out and every variable below; held for a whole line
	out    = bufio.NewWriter(os.Stdout)
	timers = map[int64]*time.Timer{} // mu; every one-shot id armed
	series = map[int64]*periodic{}   // mu; every series id armed
	armed  = map[int64]bool{}        // mu; neither fired nor stopped
	firing = map[int64]bool{}        // mu; answered too_late, `fired` not written yet
	closed bool                      // mu; `pending` was written, so nothing more is
	landed = sync.NewCond(&mu)       // a func wrote `fired`
)

func main() {
	emit(map[string]any{"type": "hello", "protocol": 1, "name": "go-time", "version": runtime.Version(),
		"kind": "facility", "features": []string{"fail"}, "periodic": periodicKinds,
		"promises": []string{"delivery", "exactly_once", "never_early", "accurate_cancel", "thread_safe"}})
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		r := parse(in.Bytes())
		switch r.Type {
		case "schedule":
			if r.PeriodNs != nil {
				schedulePeriodic(*r.ID, *r.DelayNs, *r.PeriodNs)
			} else {
				schedule(*r.ID, time.Duration(*r.DelayNs), r.Fail != nil && *r.Fail)
			}
		case "cancel":
			cancel(*r.ID)
		case "shutdown": // say what is still armed, and go: no timer fires after os.Exit
			mu.Lock()
			for len(firing) > 0 { // a func told too_late is running: its `fired` goes first
				landed.Wait()
			}
			closed = true
			ids := []int64{}
			for id := range armed {
				ids = append(ids, id)
			}
			emit(map[string]any{"type": "pending", "ids": ids})
			os.Exit(0)
		}
	}
	die(fmt.Sprintf("stdin closed before shutdown (%v)", in.Err()))
}

func schedule(id int64, d time.Duration, fail bool) {
	mu.Lock() // held to the answer: a func due at once must wait to write `fired`
	defer mu.Unlock()
	t := time.Since(start).Nanoseconds() // before AfterFunc, whose deadline is a later now + d
	timers[id] = time.AfterFunc(d, func() { fire(id, fail) })
	armed[id] = true
	emit(map[string]any{"type": "scheduled", "id": id, "t_ns": t})
}

func cancel(id int64) {
	mu.Lock()
	defer mu.Unlock()
	if s, ok := series[id]; ok {
		cancelPeriodic(id, s)
		return
	}
	t, ok := timers[id] // every schedule arms one, so ok always holds
	if !ok {
		die(fmt.Sprintf("cancel of id %d, never scheduled", id))
	}
	result := "too_late"
	if t.Stop() {
		result = "prevented"
		delete(armed, id)
	} else if armed[id] { // Stop's doc: f "has been started in its own goroutine"
		firing[id] = true
	}
	emit(map[string]any{"type": "cancelled", "id": id, "result": result})
}

// fire is the AfterFunc func, in its own goroutine: `fired` first, then panic as asked.
func fire(id int64, fail bool) {
	t := time.Since(start).Nanoseconds()
	mu.Lock()
	delete(armed, id)
	delete(firing, id)
	landed.Broadcast()
	if !closed {
		emit(map[string]any{"type": "fired", "id": id, "t_ns": t})
	}
	mu.Unlock()
	if fail {
		panic(fmt.Sprintf("tlab asked timer %d to fail", id))
	}
}

// periodic is one fixed_rate_skip series: run 0 on an AfterFunc, runs 1, 2, ... on a Ticker.
type periodic struct {
	period  int64        // ns, >= 1
	origins [2]int64     // the grid's origin: scheduled t_ns + delay_ns, and + max(0, delay_ns)
	first   *time.Timer  // run 0's AfterFunc
	ticker  *time.Ticker // mu; nil until run 0 started it
	done    chan struct{}
	stopped bool // mu; set by the cancel that answered prevented; no run writes `fired` after
}

func schedulePeriodic(id, d, p int64) {
	mu.Lock() // held to the answer, as in schedule
	defer mu.Unlock()
	t := time.Since(start).Nanoseconds() // before AfterFunc, whose deadline is a later now + d
	s := &periodic{period: p, origins: [2]int64{addSat(t, d), addSat(t, maxInt64(0, d))},
		done: make(chan struct{})}
	s.first = time.AfterFunc(time.Duration(d), func() { s.run(id) })
	series[id] = s
	armed[id] = true
	emit(map[string]any{"type": "scheduled", "id": id, "t_ns": t})
}

// cancelPeriodic: a live series is stopped here, under mu, so no run writes `fired` after
// this answer (a run checks stopped under mu first): prevented. A stopped one is too_late.
func cancelPeriodic(id int64, s *periodic) {
	result := "too_late"
	if !s.stopped {
		s.stopped = true
		s.first.Stop() // false once run 0 began; stopped keeps it from writing or ticking
		if s.ticker != nil {
			s.ticker.Stop()
		}
		close(s.done) // ends the goroutine waiting on the Ticker (Stop does not close C)
		delete(armed, id)
		result = "prevented"
	}
	emit(map[string]any{"type": "cancelled", "id": id, "result": result})
}

// run is the AfterFunc func of run 0, in its own goroutine, which then serves every later
// run: one run at a time per series. Run 0 starts the Ticker after reading its t_ns, so tick
// 1 is due after t_ns + period, never before run 1's grid point.
func (s *periodic) run(id int64) {
	t := time.Since(start).Nanoseconds()
	mu.Lock()
	if s.stopped || closed {
		mu.Unlock()
		return
	}
	emit(map[string]any{"type": "fired", "id": id, "t_ns": t})
	s.ticker = time.NewTicker(time.Duration(s.period))
	tick := s.ticker.C
	mu.Unlock()
	due := s.nextDue(t)
	for {
		select {
		case <-s.done:
			return
		case <-tick:
		}
		t := time.Since(start).Nanoseconds()
		if t < due { // before the protocol's next run: dropped, as the Ticker drops ticks
			continue
		}
		mu.Lock()
		if s.stopped || closed {
			mu.Unlock()
			return
		}
		emit(map[string]any{"type": "fired", "id": id, "t_ns": t})
		mu.Unlock()
		due = s.nextDue(t)
	}
}

// nextDue: when the run after one that began at t is due, fixed_rate_skip's rule: the first
// point strictly after t of the grid origin + k*period, saturated. Both origins are kept (a
// negative delay_ns is due at once, but the grid may also be read from scheduled t_ns +
// delay_ns); the later of the two answers is never early on either grid.
func (s *periodic) nextDue(t int64) int64 {
	due := int64(math.MinInt64)
	for _, o := range s.origins {
		if t < o { // not reached: run 0 is not before its origins
			due = maxInt64(due, o)
			continue
		}
		r := int64((uint64(t) - uint64(o)) % uint64(s.period)) // t >= o, exact in uint64
		if t-r > math.MaxInt64-s.period {
			return math.MaxInt64
		}
		due = maxInt64(due, t-r+s.period)
	}
	return due
}

func addSat(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	if b < 0 && a < math.MinInt64-b {
		return math.MinInt64
	}
	return a + b
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// emit writes one whole line and flushes it; callers hold mu (or are alone, as hello is).
func emit(msg map[string]any) {
	b, _ := json.Marshal(msg) // maps of strings, numbers and slices always marshal
	out.Write(append(b, '\n'))
	if err := out.Flush(); err != nil {
		die("stdout: " + err.Error())
	}
}

// parse reads one request strictly: known keys only, each type with exactly its keys
// (docs/protocol.schema.json), ids in range; period_ns (>= 1) comes with periodic, of a kind
// periodicKinds lists, and never with fail. Anything else ends the process with status 2.
func parse(line []byte) request {
	var r request
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil || dec.Decode(new(any)) != io.EOF {
		die(fmt.Sprintf("malformed request %q: %v", line, err))
	}
	idOK := r.ID != nil && *r.ID >= 1 && *r.ID <= 1<<53-1
	oneShot := r.PeriodNs == nil && r.Periodic == nil
	isSeries := r.PeriodNs != nil && *r.PeriodNs >= 1 && r.Periodic != nil && r.Fail == nil &&
		*r.Periodic == periodicKinds[0]
	ok := map[string]bool{
		"schedule": idOK && r.DelayNs != nil && (oneShot || isSeries),
		"cancel":   idOK && r.DelayNs == nil && r.Fail == nil && oneShot,
		"shutdown": r.ID == nil && r.DelayNs == nil && r.Fail == nil && oneShot,
	}[r.Type]
	if !ok {
		die(fmt.Sprintf("not a request of docs/protocol.schema.json: %q", line))
	}
	return r
}

func die(why string) {
	fmt.Fprintln(os.Stderr, "timer_subject:", why)
	os.Exit(2)
}
