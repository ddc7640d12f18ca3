// TimerSubject: java.util.Timer as a tlab exec subject (docs/protocol.md). Run: java
// adapters/java/TimerSubject.java (JDK 17 runs one file: the JSON reader repeats StpeSubject's).
// schedule -> timer.schedule(task, ceil(delay_ns / 1 ms)), refusing a delay below 0 ms with an
// `error`; cancel -> task.cancel(), true "prevented", false "too_late".
// A periodic schedule (period_ns, periodic; docs/protocol.md, "Periodic timers") ->
// fixed_delay: timer.schedule(task, ceil(delay_ns / 1 ms), ceil(period_ns / 1 ms)). Each run writes one
// `fired` under the series' id; the series stays armed (and in `pending`) until a cancel.
// A script (`then`, docs/protocol.md, "Scripts: callbacks that act"): the task, on the timer
// thread, writes `fired`, then performs each action as the request would be served, by the same
// code (timer.schedule, task.cancel()), each answer with "by": the task's id.
//
// Promises, with the JDK 17 Javadoc each rests on. delivery, exactly_once: Timer.schedule
// "Schedules the specified task for execution after the specified delay"; the task is
// "scheduled for one-time execution" (TimerTask.cancel). accurate_cancel: TimerTask.cancel
// returns "true if this task is scheduled for one-time execution and has not yet run ...
// (Loosely speaking, this method returns true if it prevents one or more scheduled executions
// from taking place.)" thread_safe: Timer "is thread-safe: multiple threads can share a single
// Timer object". Not promised: never_early (Timer "does not offer real-time guarantees"; the
// deadline is "delay + System.currentTimeMillis()", a wall-clock millisecond, so a task armed
// at x.9 ms for d ms may run at (x+d).0 ms); contains_errors ("If the timer's task execution
// thread terminates unexpectedly ... any further attempt to schedule a task on the timer will
// result in an IllegalStateException"); pending_count (`pending` is our own bookkeeping).
//
// Periodic kinds (the hello's `periodic`), in whole milliseconds:
//   Not fixed_rate, although Timer has scheduleAtFixedRate ("each execution is scheduled
//     relative to the scheduled execution time of the initial execution"): its period is whole
//     milliseconds, and a period rounded to them puts every run further off the protocol's
//     grid (up: ever later, a series lost at the drain; down: early), while refusing other
//     periods would refuse timers within range (README.md, "Timer and whole milliseconds").
//   fixed_delay: schedule(task, delay, period): "In fixed-delay execution, each execution is
//     scheduled relative to the actual execution time of the previous execution." Run k+1 is
//     due a period after run k began (S_k + P). The period is rounded up to whole ms, as a
//     delay is; a gap's extra (under 1 ms) does not add up, since every run counts from the one
//     before (from the wall-clock millisecond it began in, so a run may still come up to 1 ms
//     before S_k + P, as a one-shot may before its deadline).
//   Not fixed_rate_skip: no Timer method skips a missed run.
//   delivery and exactly_once per run as for a one-shot; never_early is not promised for runs
//   either (the grid, and a fixed-delay run's start, are wall-clock milliseconds).
//   accurate_cancel for a series: TimerTask.cancel: "If the task has been scheduled for
//     repeated execution, it will never run again. (If the task is running when this call
//     occurs, the task will run to completion, but will never run again.)" and it returns true
//     for a task "scheduled for repeated execution" (false once cancelled: "the task was already
//     cancelled"), so `prevented` iff this call stopped a live series. A run in progress may
//     finish, and the protocol wants its `fired` before the answer: Timer runs "all of the
//     timer's tasks, sequentially" on "a single background thread", so cancel() then schedules
//     an empty task due at once and answers when it has run (or the thread has ended): by then
//     the run in progress has written its `fired`, and cancel() made sure no later run begins.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.regex.*;

public class TimerSubject {
  static final PrintStream out =
      new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
  static final Object lock = new Object();  // guards stdout and the fields below
  static final Map<Long, TimerTask> timers = new HashMap<>();  // lock; every id armed
  static final Set<Long> series = new HashSet<>();  // lock; the periodic ones among them
  static final Set<Long> armed = new LinkedHashSet<>();  // lock; neither fired nor cancelled
  static final Set<Long> firing = new HashSet<>();  // lock; answered too_late, not yet fired
  static boolean closed;  // lock; `pending` was written, so nothing more is
  static boolean ending;  // lock; a `fail` task runs and will end the timer thread
  static long barriers, passed;  // lock; empty tasks scheduled, the last one that ran
  static final Timer timer = new Timer("tlab-timer", true);
  static final List<String> PERIODIC = List.of("fixed_delay");  // the header
  static final long MS = 1_000_000;

  public static void main(String[] args) throws Exception {
    System.setOut(System.err);  // stdout is the protocol only: a stray print goes to stderr
    String promises = "delivery exactly_once accurate_cancel thread_safe";
    emit("{\"type\":\"hello\",\"protocol\":1,\"name\":\"java-timer\",\"kind\":\"facility\","
        + "\"promises\":[\"" + promises.replace(" ", "\",\"") + "\"],"
        + "\"features\":[\"fail\",\"scripts\"],"
        + "\"periodic\":[\"" + String.join("\",\"", PERIODIC) + "\"],"
        + "\"version\":" + str(System.getProperty("java.version")) + "}");
    var in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      List<Action> then = new ArrayList<>();  // a schedule's script, if any
      Map<String, String> m = new Reader(line).request(then);
      long id = m.containsKey("id") ? num(m.get("id"), 1, MAX_ID) : 0;
      switch (m.get("type")) {
        case "\"schedule\"" -> {
          String kind = kind(m);  // null: a one-shot
          schedule(id, num(m.get("delay_ns"), Long.MIN_VALUE, Long.MAX_VALUE),
              m.get("fail").equals("true"), kind,
              kind == null ? 0 : num(m.get("period_ns"), 1, Long.MAX_VALUE), then, 0);
        }
        case "\"cancel\"" -> cancel(id, 0);
        default -> {  // shutdown: stop the timer, then say what is still armed
          synchronized (lock) {
            while (!firing.isEmpty()) lock.wait();  // a task told too_late runs: `fired` first
            closed = true;
            timer.cancel();
            emit("{\"type\":\"pending\",\"ids\":" + armed.toString().replace(" ", "") + "}");
          }
          System.exit(0);
        }
      }
    }
    die("stdin closed before shutdown");
  }

  // kind null: a one-shot; else a series of that kind (PERIODIC), every periodNs. `then`: the
  // one-shot's script (empty: none). by: 0 for a request, else the id whose script asks (its
  // task, on the timer thread, holds `lock`: reentrant).
  static void schedule(long id, long delayNs, boolean fail, String kind, long periodNs,
      List<Action> then, long by) {
    TimerTask task = new TimerTask() { public void run() { fire(id, fail, kind != null, then); } };
    synchronized (lock) {  // held to the answer: a task due at once must wait to write `fired`
      long t = System.nanoTime();  // before schedule(): its deadline is a later clock + delay
      try {
        long delayMs = ms(delayNs);
        if (kind == null) timer.schedule(task, delayMs);
        else timer.schedule(task, delayMs, ms(periodNs));
        timers.put(id, task);
        if (kind != null) series.add(id);
        armed.add(id);
        emit("{\"type\":\"scheduled\",\"id\":" + id + ",\"t_ns\":" + t + by(by) + "}");
      } catch (RuntimeException e) {  // a negative delay, or the timer thread died: not armed
        emit(error(id, e.toString(), by));
      }
    }
  }

  static long ms(long ns) {  // ceil(ns / 1 ms): `/` truncates towards 0, which is ceil below 0
    return ns / MS + (ns % MS > 0 ? 1 : 0);
  }

  // by: as in schedule. A script's cancel of its own task (it is running: cancel() is false for
  // a one-shot that has begun) answers too_late.
  static void cancel(long id, long by) throws InterruptedException {
    synchronized (lock) {
      TimerTask task = timers.get(id);  // null: its schedule was refused (or not yet read)
      boolean stopped = task != null && task.cancel();  // a series: false once cancelled
      if (stopped) armed.remove(id);
      else if (armed.contains(id)) firing.add(id);  // the timer thread has taken it to run
      // A run in progress writes `fired` first. A script runs on the timer thread itself, so no
      // run is in progress (the thread runs tasks "sequentially"), and waiting for an empty task
      // there would wait for itself: only a request waits.
      if (stopped && series.contains(id) && by == 0) awaitTimerThread();
      emit(task == null ? error(id, "never armed", by) : "{\"type\":\"cancelled\",\"id\":"
          + id + ",\"result\":\"" + (stopped ? "prevented" : "too_late") + "\"" + by(by) + "}");
    }
  }

  // Returns once the task the timer thread is running, if any, has returned: the thread runs
  // the timer's tasks "sequentially", so an empty task due now runs after it. `lock` held;
  // waiting releases it, so that a run can write its `fired`. A thread that a `fail` task is
  // ending runs nothing more (it may never run the empty task).
  static void awaitTimerThread() throws InterruptedException {
    long ticket = ++barriers;
    try {
      timer.schedule(new TimerTask() {
        public void run() {
          synchronized (lock) {
            passed = ticket;
            lock.notifyAll();
          }
        }
      }, 0);
    } catch (IllegalStateException e) {  // "Timer already cancelled": its thread has ended
      return;
    }
    while (passed < ticket && !ending) lock.wait();
  }

  // The task, on the timer thread: `fired` first, then its script, action by action, under
  // `lock` (so a task a script arms writes `fired` only after its `scheduled`, and `pending` comes
  // before the `fired` or after the whole script), then fail as asked, which ends that thread (a
  // `fail` task has no script). A run of a series writes `fired` and stays armed.
  static void fire(long id, boolean fail, boolean periodic, List<Action> then) {
    long t = System.nanoTime();
    synchronized (lock) {
      if (!periodic) armed.remove(id);
      boolean waited = firing.remove(id);  // shutdown waits for it
      if (fail) ending = true;  // a cancel waiting for this thread: it runs nothing more
      if (waited || fail) lock.notifyAll();
      if (!closed) {
        emit("{\"type\":\"fired\",\"id\":" + id + ",\"t_ns\":" + t + "}");
        for (Action a : then) {
          if (a.schedule()) schedule(a.id(), a.delayNs(), false, null, 0, a.then(), id);
          else cancelFromScript(a.id(), id);
        }
      }
    }
    if (fail) throw new RuntimeException("tlab asked task " + id + " to fail");
  }

  static void cancelFromScript(long id, long by) {
    try {
      cancel(id, by);
    } catch (InterruptedException e) {  // cancel waits only for a request (by == 0)
      throw new AssertionError(e);
    }
  }

  static void emit(String line) {  // one whole line, flushed at its '\n' (autoflush); `lock` held
    out.print(line + "\n");
    if (out.checkError()) die("stdout is closed");
  }

  // A request: one object, fixed keys per type (docs/protocol.schema.json; `fail` never with a
  // period, and a `fail` timer never with a script: docs/protocol.md); a schedule's `then` is an
  // array of 1 to 3 actions, each an object of fixed keys (a schedule action may carry its own
  // `then`), at most MAX_REARMS re-arms deep (docs/protocol.md, "Scripts"); else exit 2.
  static final Pattern KEY = Pattern.compile(
      "[ \\t]*\"(type|id|delay_ns|fail|period_ns|periodic|then|do)\"[ \\t]*:[ \\t]*");
  static final Pattern SCALAR = Pattern.compile("(\"(?:schedule|cancel|shutdown|fixed_rate|"
      + "fixed_rate_skip|fixed_delay)\"|-?(?:0|[1-9][0-9]*)|true|false)");
  static final Map<String, Set<Set<String>>> KEYS = Map.of("\"schedule\"", Set.of(
      Set.of("type", "id", "delay_ns"), Set.of("type", "id", "delay_ns", "fail"),
      Set.of("type", "id", "delay_ns", "period_ns", "periodic"),
      Set.of("type", "id", "delay_ns", "then"), Set.of("type", "id", "delay_ns", "fail", "then")),
      "\"cancel\"", Set.of(Set.of("type", "id")), "\"shutdown\"", Set.of(Set.of("type")));
  static final Map<String, Set<Set<String>>> ACTION_KEYS = Map.of("\"schedule\"", Set.of(
      Set.of("do", "id", "delay_ns"), Set.of("do", "id", "delay_ns", "then")),
      "\"cancel\"", Set.of(Set.of("do", "id")));
  static final int MAX_REARMS = 6;  // docs/protocol.md: scripts "nest at most 6 re-arms deep"
  static final long MAX_ID = (1L << 53) - 1;

  // One action of a script: schedule id after delayNs (with its own script), or cancel id.
  record Action(boolean schedule, long id, long delayNs, List<Action> then) {}

  // A strict reader of one request line (the reader thread's only).
  static final class Reader {
    final String s;
    int at;

    Reader(String s) {
      this.s = s;
    }

    // The request's fields (scalars as written; `then` as "[]"), its script's actions into `then`.
    Map<String, String> request(List<Action> then) {
      at = s.indexOf('{');
      if (at < 0 || !s.substring(0, at).isBlank()) die("not a JSON object: " + s);
      Map<String, String> m = object(then, 1);
      if (!s.substring(at).isBlank() || !m.getOrDefault("fail", "false").matches("true|false")
          || !KEYS.getOrDefault(m.getOrDefault("type", ""), Set.of()).contains(m.keySet())
          || m.containsKey("then") && m.get("fail") != null && !m.get("fail").equals("false"))
        die("not a request of docs/protocol.md: " + s);
      if ("\"schedule\"".equals(m.get("type"))) m.putIfAbsent("fail", "false");  // optional
      return m;
    }

    // {"key": value, ...}: the scalars as written; a `then` array's actions into `then`, as
    // actions `level` re-arms deep.
    Map<String, String> object(List<Action> then, int level) {
      var m = new HashMap<String, String>();
      next("{");
      do {
        Matcher k = KEY.matcher(s).region(at, s.length());
        if (!k.lookingAt()) die("malformed request: " + s);
        at = k.end();
        String value = "[]";
        if (k.group(1).equals("then")) {
          actions(then, level);
        } else {
          Matcher v = SCALAR.matcher(s).region(at, s.length());
          if (!v.lookingAt()) die("malformed request: " + s);
          at = v.end();
          value = v.group(1);
        }
        if (m.put(k.group(1), value) != null) die("duplicate key: " + s);
      } while (next(",}") == ',');
      return m;
    }

    // [action, ...]: 1 to 3 actions, into `out`; a schedule among them is re-arm `level`.
    void actions(List<Action> out, int level) {
      if (level > MAX_REARMS + 1) die("a script deeper than " + MAX_REARMS + " re-arms: " + s);
      next("[");
      do {
        List<Action> then = new ArrayList<>();
        Map<String, String> a = object(then, level + 1);
        boolean schedule = "\"schedule\"".equals(a.get("do"));
        if (!ACTION_KEYS.getOrDefault(a.getOrDefault("do", ""), Set.of()).contains(a.keySet())
            || schedule && level > MAX_REARMS || out.size() == 3)
          die("not a script of docs/protocol.md: " + s);
        long delayNs = schedule ? num(a.get("delay_ns"), Long.MIN_VALUE, Long.MAX_VALUE) : 0;
        out.add(new Action(schedule, num(a.get("id"), 1, MAX_ID), delayNs, List.copyOf(then)));
      } while (next(",]") == ',');
    }

    // Blanks, then one of `chars`, which it returns; else exit 2.
    char next(String chars) {
      while (at < s.length() && (s.charAt(at) == ' ' || s.charAt(at) == '\t')) at++;
      if (at == s.length() || chars.indexOf(s.charAt(at)) < 0) die("malformed request: " + s);
      return s.charAt(at++);
    }
  }

  // A schedule's periodic kind: null for a one-shot; a kind the hello does not list exits 2.
  static String kind(Map<String, String> m) {
    String v = m.get("periodic");
    for (String k : PERIODIC) if (('"' + k + '"').equals(v)) return k;
    if (v != null) die("periodic " + v + " is not a kind this subject's hello lists " + PERIODIC);
    return null;
  }

  static long num(String v, long min, long max) {
    try {
      long n = Long.parseLong(v);
      if (n >= min && n <= max) return n;
    } catch (NumberFormatException e) {}  // a string, a boolean, or beyond 64 bits
    return die("not an integer in [" + min + ", " + max + "]: " + v);
  }

  static String error(long id, String message, long by) {
    return "{\"type\":\"error\",\"id\":" + id + ",\"message\":" + str(message) + by(by) + "}";
  }

  static String by(long by) {  // an answer's `by`: 0 for a request's answer, which has none
    return by == 0 ? "" : ",\"by\":" + by;
  }

  static String str(String s) {  // a JSON string: 1000 characters at most, controls as spaces
    return '"' + s.substring(0, Math.min(s.length(), 1000)).replace("\\", "\\\\")
        .replace("\"", "\\\"").replaceAll("[\\x00-\\x1f]", " ") + '"';
  }

  static long die(String why) {  // never returns
    System.err.println("TimerSubject: " + why);
    System.exit(2);
    return 0;
  }
}
