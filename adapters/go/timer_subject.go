// timer_subject: Go's time.AfterFunc and time.Ticker as a tlab exec subject (docs/protocol.md);
// README.md has the build command. schedule -> time.AfterFunc(delay_ns, f); cancel ->
// (*Timer).Stop(), true "prevented", false "too_late". With "fail", f writes `fired` and
// panics; nothing recovers. With "period_ns" (kind fixed_rate_skip, the only one listed): a
// series, AfterFunc(delay_ns) for run 0, whose func then starts time.NewTicker(period_ns)
// and serves runs 1, 2, ... from its ticks (README.md, "Periodic series"). With "then" (a
// script, docs/protocol.md, "Scripts: callbacks that act"): f writes `fired`, then performs each
// action as the request would be served, by the same code under the same mu (AfterFunc, Stop),
// each answer with "by": f's id.
//
// Promises, with the pkg.go.dev/time text each rests on. delivery, exactly_once, never_early:
// "AfterFunc waits for the duration to elapse and then calls f in its own goroutine."
// accurate_cancel: Stop "returns true if the call stops the timer, false if the timer has
// already expired or been stopped"; then "the function f has been started in its own
// goroutine". thread_safe: every AfterFunc and Stop is called under mu, the reader's and a
// script's (in its func's goroutine) alike, so no two run at once (Stop's doc forbids concurrent
// Stops of one Timer); a series' NewTicker runs in its run-0 goroutine under mu, and its
// Ticker.Stop once, in the reader or a script, under mu. Not promised: contains_errors
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

// request is every message tlab sends; a pointer or slice is nil when its key is absent.
type request struct {
	Type     string   `json:"type"`
	ID       *int64   `json:"id"`
	DelayNs  *int64   `json:"delay_ns"`
	Fail     *bool    `json:"fail"`
	PeriodNs *int64   `json:"period_ns"`
	Periodic *string  `json:"periodic"`
	Then     []action `json:"then"`
}

// action is one step of a script (`then`): "schedule" (id, delay_ns, its own then) or "cancel".
type action struct {
	Do      string   `json:"do"`
	ID      *int64   `json:"id"`
	DelayNs *int64   `json:"delay_ns"`
	Then    []action `json:"then"`
}

// maxRearms: docs/protocol.md, scripts "nest at most 6 re-arms deep".
const maxRearms = 6

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
		"kind": "facility", "features": []string{"fail", "scripts"}, "periodic": periodicKinds,
		"promises": []string{"delivery", "exactly_once", "never_early", "accurate_cancel", "thread_safe"}})
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		r := parse(in.Bytes())
		switch r.Type {
		case "schedule":
			if r.PeriodNs != nil {
				schedulePeriodic(*r.ID, *r.DelayNs, *r.PeriodNs)
			} else {
				schedule(*r.ID, time.Duration(*r.DelayNs), r.Fail != nil && *r.Fail, r.Then)
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

func schedule(id int64, d time.Duration, fail bool, then []action) {
	mu.Lock() // held to the answer: a func due at once must wait to write `fired`
	defer mu.Unlock()
	scheduleLocked(id, d, fail, then, 0)
}

// scheduleLocked arms a one-shot (with its script, nil for none) and answers; mu held (it is not
// reentrant: a script calls this, not schedule). by: 0 for a request, else the id whose script
// asks.
func scheduleLocked(id int64, d time.Duration, fail bool, then []action, by int64) {
	t := time.Since(start).Nanoseconds() // before AfterFunc, whose deadline is a later now + d
	timers[id] = time.AfterFunc(d, func() { fire(id, fail, then) })
	armed[id] = true
	emit(answer(by, "type", "scheduled", "id", id, "t_ns", t))
}

func cancel(id int64) {
	mu.Lock()
	defer mu.Unlock()
	if _, ok := series[id]; !ok && timers[id] == nil { // tlab cancels only what it scheduled
		die(fmt.Sprintf("cancel of id %d, never scheduled", id))
	}
	cancelLocked(id, 0)
}

// cancelLocked stops a timer or series and answers; mu held, by as in scheduleLocked. A
// script's cancel of its own timer (its func is running: Stop is false) answers too_late; one
// of an id this process has not armed (its schedule is still in the pipe) answers error.
func cancelLocked(id, by int64) {
	if s, ok := series[id]; ok {
		cancelPeriodic(id, s, by)
		return
	}
	t, ok := timers[id]
	if !ok {
		emit(answer(by, "type", "error", "id", id, "message", "not armed: no schedule of it was read"))
		return
	}
	result := "too_late"
	if t.Stop() {
		result = "prevented"
		delete(armed, id)
	} else if armed[id] { // Stop's doc: f "has been started in its own goroutine"
		firing[id] = true
	}
	emit(answer(by, "type", "cancelled", "id", id, "result", result))
}

// fire is the AfterFunc func, in its own goroutine: `fired` first, then its script, action by
// action, under mu (so a timer a script arms writes `fired` only after its `scheduled`, and
// `pending` comes before the `fired` or after the whole script), then panic as asked (a `fail`
// timer has no script).
func fire(id int64, fail bool, then []action) {
	t := time.Since(start).Nanoseconds()
	mu.Lock()
	delete(armed, id)
	delete(firing, id)
	landed.Broadcast()
	if !closed {
		emit(map[string]any{"type": "fired", "id": id, "t_ns": t})
		for _, a := range then {
			if a.Do == "schedule" {
				scheduleLocked(*a.ID, time.Duration(*a.DelayNs), false, a.Then, id)
			} else {
				cancelLocked(*a.ID, id)
			}
		}
	}
	mu.Unlock()
	if fail {
		panic(fmt.Sprintf("tlab asked timer %d to fail", id))
	}
}

// answer is a message of key, value pairs, with "by" unless by is 0 (a request's answer).
func answer(by int64, kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	if by != 0 {
		m["by"] = by
	}
	return m
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
// by: as in scheduleLocked.
func cancelPeriodic(id int64, s *periodic, by int64) {
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
	emit(answer(by, "type", "cancelled", "id", id, "result", result))
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
// periodicKinds lists, and never with fail; then (a script) only with a one-shot that does not
// fail. Anything else ends the process with status 2.
func parse(line []byte) request {
	var r request
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil || dec.Decode(new(any)) != io.EOF {
		die(fmt.Sprintf("malformed request %q: %v", line, err))
	}
	idOK := validID(r.ID)
	oneShot := r.PeriodNs == nil && r.Periodic == nil
	isSeries := r.PeriodNs != nil && *r.PeriodNs >= 1 && r.Periodic != nil && r.Fail == nil &&
		*r.Periodic == periodicKinds[0] && r.Then == nil
	scriptOK := r.Then == nil || oneShot && (r.Fail == nil || !*r.Fail) && validScript(r.Then, 1)
	ok := map[string]bool{
		"schedule": idOK && r.DelayNs != nil && (oneShot || isSeries) && scriptOK,
		"cancel":   idOK && r.DelayNs == nil && r.Fail == nil && oneShot && r.Then == nil,
		"shutdown": r.ID == nil && r.DelayNs == nil && r.Fail == nil && oneShot && r.Then == nil,
	}[r.Type]
	if !ok {
		die(fmt.Sprintf("not a request of docs/protocol.schema.json: %q", line))
	}
	return r
}

func validID(id *int64) bool {
	return id != nil && *id >= 1 && *id <= 1<<53-1
}

// validScript: 1 to 3 actions, a schedule with id and delay_ns (and its own script, a level
// deeper), a cancel with id only; a schedule at most maxRearms levels deep.
func validScript(then []action, level int) bool {
	if len(then) < 1 || len(then) > 3 {
		return false
	}
	for _, a := range then {
		ok := a.Do == "cancel" && validID(a.ID) && a.DelayNs == nil && a.Then == nil ||
			a.Do == "schedule" && validID(a.ID) && a.DelayNs != nil && level <= maxRearms &&
				(a.Then == nil || validScript(a.Then, level+1))
		if !ok {
			return false
		}
	}
	return true
}

func die(why string) {
	fmt.Fprintln(os.Stderr, "timer_subject:", why)
	os.Exit(2)
}
