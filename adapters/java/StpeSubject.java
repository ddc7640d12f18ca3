// StpeSubject: java.util.concurrent.ScheduledThreadPoolExecutor as a tlab exec subject
// (docs/protocol.md). Run: java adapters/java/StpeSubject.java (the JDK 17 source launcher
// runs one file, so the small JSON reader below is repeated in TimerSubject.java).
//
// schedule -> stpe.schedule(task, delay_ns, NANOSECONDS); cancel -> future.cancel(false), true
// "prevented", false "too_late". One worker thread, as java.util.Timer has (README.md).
// A periodic schedule (period_ns, periodic; docs/protocol.md, "Periodic timers") ->
// fixed_rate: stpe.scheduleAtFixedRate(task, delay_ns, period_ns, NANOSECONDS); fixed_delay:
// stpe.scheduleWithFixedDelay(task, delay_ns, period_ns, NANOSECONDS). Each run writes one
// `fired` under the series' id; the series stays armed (and in `pending`) until a cancel.
// A script (`then`, docs/protocol.md, "Scripts: callbacks that act"): the task, on the worker,
// writes `fired`, then performs each action as the request would be served, by the same code
// (stpe.schedule, future.cancel(false)), each answer with "by": the task's id.
//
// Promises, with the JDK 17 Javadoc each rests on:
//   delivery, exactly_once: ScheduledExecutorService.schedule "Submits a one-shot task that
//     becomes enabled after the given delay." never_early: STPE "Delayed tasks execute no
//     sooner than they are enabled". (STPE documents FIFO ties, but an exec hello cannot
//     claim fifo_ties: docs/protocol.md.)
//   contains_errors: ThreadPoolExecutor.afterExecute: FutureTask and such "catch and maintain
//     computational exceptions, and so they do not cause abrupt termination".
//   thread_safe: every call is made under `lock`, by the one reader thread or by a script on the
//     worker, so pipelined requests are safe.
// Periodic kinds (the hello's `periodic`), all in nanoseconds, so no period is rounded:
//   fixed_rate: scheduleAtFixedRate "Submits a periodic action that becomes enabled first after
//     the given initial delay, and subsequently with the given period; that is, executions will
//     commence after initialDelay, then initialDelay + period, then initialDelay + 2 * period,
//     and so on." and "If any execution of this task takes longer than its period, then
//     subsequent executions may start late, but will not concurrently execute": every grid
//     point is a run, a late one starts late (back to back, caught up), none is skipped.
//   fixed_delay: scheduleWithFixedDelay "... and subsequently with the given delay between the
//     termination of one execution and the commencement of the next": run k+1 at E_k + P.
//   Not fixed_rate_skip: no STPE method skips a missed grid point.
//   delivery and never_early hold run by run: "The sequence of task executions continues
//   indefinitely until one of the following exceptional completions occur: The task is
//   explicitly cancelled via the returned future. ..." (or shutdownNow, or a run throws, which
//   these runs never do: `fail` never comes with a period); each run is "enabled" at its time
//   and "Delayed tasks execute no sooner than they are enabled". exactly_once is per run:
//   "Successive executions of a periodic task ... do not overlap."
// Not promised: accurate_cancel (Future.cancel is false only if the task "could not be
// cancelled, typically because it has already completed": a started task is cancelled with
// true and, with cancel(false), "in-progress tasks are allowed to complete"). A series is the
// same: cancel(false) is true while a run is in progress, and that run's `fired` line may come
// after `prevented` (the answer is right, the order is not). pending_count (the executor cannot
// list armed tasks: `pending` is this file's own bookkeeping).
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;
import java.util.regex.*;

public class StpeSubject {
  static final PrintStream out =
      new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
  static final Object lock = new Object();  // guards stdout and the three fields below
  static final Map<Long, ScheduledFuture<?>> timers = new HashMap<>();  // lock; every id armed
  static final Set<Long> armed = new LinkedHashSet<>();  // lock; neither fired nor cancelled
  static boolean closed;  // lock; `pending` was written, so nothing more is
  static final ScheduledThreadPoolExecutor stpe = new ScheduledThreadPoolExecutor(1);
  static final List<String> PERIODIC = List.of("fixed_rate", "fixed_delay");  // the header

  public static void main(String[] args) throws IOException {
    System.setOut(System.err);  // stdout is the protocol only: a stray print goes to stderr
    String promises = "delivery exactly_once never_early contains_errors thread_safe";
    emit("{\"type\":\"hello\",\"protocol\":1,\"name\":\"java-stpe\",\"kind\":\"facility\","
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
        default -> {  // shutdown: stop the executor, then say what is still armed
          synchronized (lock) {
            closed = true;
            stpe.shutdownNow();
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
  // task, on the worker, holds `lock`: reentrant).
  static void schedule(long id, long delayNs, boolean fail, String kind, long periodNs,
      List<Action> then, long by) {
    synchronized (lock) {  // held to the answer: a task due at once must wait to write `fired`
      long t = System.nanoTime();  // before schedule(): its deadline is a later nanoTime() + delay
      Runnable task = () -> fire(id, fail, kind != null, then);
      try {
        timers.put(id, kind == null ? stpe.schedule(task, delayNs, TimeUnit.NANOSECONDS)
            : kind.equals("fixed_rate")
            ? stpe.scheduleAtFixedRate(task, delayNs, periodNs, TimeUnit.NANOSECONDS)
            : stpe.scheduleWithFixedDelay(task, delayNs, periodNs, TimeUnit.NANOSECONDS));
        armed.add(id);
        emit("{\"type\":\"scheduled\",\"id\":" + id + ",\"t_ns\":" + t + by(by) + "}");
      } catch (RuntimeException e) {  // the executor refused: nothing was armed
        emit(error(id, e.toString(), by));
      }
    }
  }

  // by: as in schedule. A script's cancel of its own task (it is running) is cancel(false) too:
  // true, so "prevented" (the documented behaviour; accurate_cancel is not promised).
  static void cancel(long id, long by) {
    synchronized (lock) {
      ScheduledFuture<?> f = timers.get(id);  // null: its schedule was refused (or not yet read)
      boolean stopped = f != null && f.cancel(false);  // a series: false once cancelled
      if (stopped) armed.remove(id);
      emit(f == null ? error(id, "never armed", by) : "{\"type\":\"cancelled\",\"id\":" + id
          + ",\"result\":\"" + (stopped ? "prevented" : "too_late") + "\"" + by(by) + "}");
    }
  }

  // The task, on the worker: `fired` first, then its script, action by action, under `lock` (so
  // a task a script arms writes `fired` only after its `scheduled`, and `pending` comes before the
  // `fired` or after the whole script), then fail as asked (the Future keeps the exception;
  // a `fail` task has no script). A run of a series writes `fired` and stays armed.
  static void fire(long id, boolean fail, boolean periodic, List<Action> then) {
    long t = System.nanoTime();
    synchronized (lock) {
      if (!periodic) armed.remove(id);
      if (!closed) {
        emit("{\"type\":\"fired\",\"id\":" + id + ",\"t_ns\":" + t + "}");
        for (Action a : then) {
          if (a.schedule()) schedule(a.id(), a.delayNs(), false, null, 0, a.then(), id);
          else cancel(a.id(), id);
        }
      }
    }
    if (fail) throw new RuntimeException("tlab asked task " + id + " to fail");
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
    System.err.println("StpeSubject: " + why);
    System.exit(2);
    return 0;
  }
}
