// timer_subject: Go's time.AfterFunc as a tlab exec subject (docs/protocol.md); README.md has
// the build command. schedule -> time.AfterFunc(delay_ns, f); cancel -> (*Timer).Stop(), true
// "prevented", false "too_late". With "fail", f writes `fired` and panics; nothing recovers.
//
// Promises, with the pkg.go.dev/time text each rests on. delivery, exactly_once, never_early:
// "AfterFunc waits for the duration to elapse and then calls f in its own goroutine."
// accurate_cancel: Stop "returns true if the call stops the timer, false if the timer has
// already expired or been stopped"; then "the function f has been started in its own
// goroutine". thread_safe: only the reader goroutine calls AfterFunc and Stop (Stop's doc
// forbids concurrent Stops of one Timer). Not promised: contains_errors (a panic ends the
// program), pending_count (`pending` is this file's own bookkeeping).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"
)

// request is every message tlab sends; a pointer is nil when its key is absent.
type request struct {
	Type    string `json:"type"`
	ID      *int64 `json:"id"`
	DelayNs *int64 `json:"delay_ns"`
	Fail    *bool  `json:"fail"`
}

var (
	start  = time.Now() // t_ns is time.Since(start): Go's monotonic reading
	mu     sync.Mutex   // guards out and every variable below; held for a whole line
	out    = bufio.NewWriter(os.Stdout)
	timers = map[int64]*time.Timer{} // mu; every id armed
	armed  = map[int64]bool{}        // mu; neither fired nor stopped
	firing = map[int64]bool{}        // mu; answered too_late, `fired` not written yet
	closed bool                      // mu; `pending` was written, so nothing more is
	landed = sync.NewCond(&mu)       // a func wrote `fired`
)

func main() {
	emit(map[string]any{"type": "hello", "protocol": 1, "name": "go-time", "version": runtime.Version(),
		"kind": "facility", "features": []string{"fail"},
		"promises": []string{"delivery", "exactly_once", "never_early", "accurate_cancel", "thread_safe"}})
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		r := parse(in.Bytes())
		switch r.Type {
		case "schedule":
			schedule(*r.ID, time.Duration(*r.DelayNs), r.Fail != nil && *r.Fail)
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

// emit writes one whole line and flushes it; callers hold mu (or are alone, as hello is).
func emit(msg map[string]any) {
	b, _ := json.Marshal(msg) // maps of strings, numbers and slices always marshal
	out.Write(append(b, '\n'))
	if err := out.Flush(); err != nil {
		die("stdout: " + err.Error())
	}
}

// parse reads one request strictly: known keys only, each type with exactly its keys
// (docs/protocol.schema.json), ids in range. Anything else ends the process with status 2.
func parse(line []byte) request {
	var r request
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil || dec.Decode(new(any)) != io.EOF {
		die(fmt.Sprintf("malformed request %q: %v", line, err))
	}
	idOK := r.ID != nil && *r.ID >= 1 && *r.ID <= 1<<53-1
	ok := map[string]bool{
		"schedule": idOK && r.DelayNs != nil,
		"cancel":   idOK && r.DelayNs == nil && r.Fail == nil,
		"shutdown": r.ID == nil && r.DelayNs == nil && r.Fail == nil,
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
