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
//
// Promises, with the JDK 17 Javadoc each rests on:
//   delivery, exactly_once: ScheduledExecutorService.schedule "Submits a one-shot task that
//     becomes enabled after the given delay." never_early: STPE "Delayed tasks execute no
//     sooner than they are enabled". (STPE documents FIFO ties, but an exec hello cannot
//     claim fifo_ties: docs/protocol.md.)
//   contains_errors: ThreadPoolExecutor.afterExecute: FutureTask and such "catch and maintain
//     computational exceptions, and so they do not cause abrupt termination".
//   thread_safe: one reader thread makes every call, so pipelined requests are safe.
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
        + "\"promises\":[\"" + promises.replace(" ", "\",\"") + "\"],\"features\":[\"fail\"],"
        + "\"periodic\":[\"" + String.join("\",\"", PERIODIC) + "\"],"
        + "\"version\":" + str(System.getProperty("java.version")) + "}");
    var in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      Map<String, String> m = parse(line);
      long id = m.containsKey("id") ? num(m.get("id"), 1, (1L << 53) - 1) : 0;
      switch (m.get("type")) {
        case "\"schedule\"" -> {
          String kind = kind(m);  // null: a one-shot
          schedule(id, num(m.get("delay_ns"), Long.MIN_VALUE, Long.MAX_VALUE),
              m.get("fail").equals("true"), kind,
              kind == null ? 0 : num(m.get("period_ns"), 1, Long.MAX_VALUE));
        }
        case "\"cancel\"" -> cancel(id);
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

  // kind null: a one-shot; else a series of that kind (PERIODIC), every periodNs.
  static void schedule(long id, long delayNs, boolean fail, String kind, long periodNs) {
    synchronized (lock) {  // held to the answer: a task due at once must wait to write `fired`
      long t = System.nanoTime();  // before schedule(): its deadline is a later nanoTime() + delay
      Runnable task = () -> fire(id, fail, kind != null);
      try {
        timers.put(id, kind == null ? stpe.schedule(task, delayNs, TimeUnit.NANOSECONDS)
            : kind.equals("fixed_rate")
            ? stpe.scheduleAtFixedRate(task, delayNs, periodNs, TimeUnit.NANOSECONDS)
            : stpe.scheduleWithFixedDelay(task, delayNs, periodNs, TimeUnit.NANOSECONDS));
        armed.add(id);
        emit("{\"type\":\"scheduled\",\"id\":" + id + ",\"t_ns\":" + t + "}");
      } catch (RuntimeException e) {  // the executor refused: nothing was armed
        emit(error(id, e.toString()));
      }
    }
  }

  static void cancel(long id) {
    synchronized (lock) {
      ScheduledFuture<?> f = timers.get(id);  // null: its schedule was refused
      boolean stopped = f != null && f.cancel(false);  // a series: false once cancelled
      if (stopped) armed.remove(id);
      emit(f == null ? error(id, "never armed") : "{\"type\":\"cancelled\",\"id\":" + id
          + ",\"result\":\"" + (stopped ? "prevented" : "too_late") + "\"}");
    }
  }

  // The task, on the worker: `fired` first, then fail as asked (the Future keeps the exception).
  // A run of a series writes `fired` and stays armed.
  static void fire(long id, boolean fail, boolean periodic) {
    long t = System.nanoTime();
    synchronized (lock) {
      if (!periodic) armed.remove(id);
      if (!closed) emit("{\"type\":\"fired\",\"id\":" + id + ",\"t_ns\":" + t + "}");
    }
    if (fail) throw new RuntimeException("tlab asked task " + id + " to fail");
  }

  static void emit(String line) {  // one whole line, flushed at its '\n' (autoflush); `lock` held
    out.print(line + "\n");
    if (out.checkError()) die("stdout is closed");
  }

  // A request: one flat object, fixed keys per type (docs/protocol.schema.json; `fail` never with
  // a period, docs/protocol.md); else exit 2.
  static final Pattern FIELD = Pattern.compile("[ \\t]*\"(type|id|delay_ns|fail|period_ns|"
      + "periodic)\"[ \\t]*:[ \\t]*(\"(?:schedule|cancel|shutdown|fixed_rate|fixed_rate_skip|"
      + "fixed_delay)\"|-?(?:0|[1-9][0-9]*)|true|false)[ \\t]*([,}])");
  static final Map<String, Set<Set<String>>> KEYS = Map.of("\"schedule\"", Set.of(
      Set.of("type", "id", "delay_ns"), Set.of("type", "id", "delay_ns", "fail"),
      Set.of("type", "id", "delay_ns", "period_ns", "periodic")),
      "\"cancel\"", Set.of(Set.of("type", "id")), "\"shutdown\"", Set.of(Set.of("type")));

  static Map<String, String> parse(String line) {
    var m = new HashMap<String, String>();
    Matcher f = FIELD.matcher(line);
    int at = line.indexOf('{');
    if (at < 0 || !line.substring(0, at).isBlank()) die("not a JSON object: " + line);
    for (at++; ; at = f.end()) {
      if (!f.region(at, line.length()).lookingAt()) die("malformed request: " + line);
      if (m.put(f.group(1), f.group(2)) != null) die("duplicate key: " + line);
      if (f.group(3).equals("}")) break;
    }
    if (!line.substring(f.end()).isBlank() || !m.getOrDefault("fail", "false").matches("true|false")
        || !KEYS.getOrDefault(m.getOrDefault("type", ""), Set.of()).contains(m.keySet()))
      die("not a request of docs/protocol.md: " + line);
    if ("\"schedule\"".equals(m.get("type"))) m.putIfAbsent("fail", "false");  // optional
    return m;
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

  static String error(long id, String message) {
    return "{\"type\":\"error\",\"id\":" + id + ",\"message\":" + str(message) + "}";
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
