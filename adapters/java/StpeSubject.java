// StpeSubject: java.util.concurrent.ScheduledThreadPoolExecutor as a tlab exec subject
// (docs/protocol.md). Run: java adapters/java/StpeSubject.java (the JDK 17 source launcher
// runs one file, so the small JSON reader below is repeated in TimerSubject.java).
//
// schedule -> stpe.schedule(task, delay_ns, NANOSECONDS); cancel -> future.cancel(false), true
// "prevented", false "too_late". One worker thread, as java.util.Timer has (README.md).
//
// Promises, with the JDK 17 Javadoc each rests on:
//   delivery, exactly_once: ScheduledExecutorService.schedule "Submits a one-shot task that
//     becomes enabled after the given delay." never_early: STPE "Delayed tasks execute no
//     sooner than they are enabled". (STPE documents FIFO ties, but an exec hello cannot
//     claim fifo_ties: docs/protocol.md.)
//   contains_errors: ThreadPoolExecutor.afterExecute: FutureTask and such "catch and maintain
//     computational exceptions, and so they do not cause abrupt termination".
//   thread_safe: one reader thread makes every call, so pipelined requests are safe.
// Not promised: accurate_cancel (Future.cancel is false only if the task "could not be
// cancelled, typically because it has already completed": a started task is cancelled with
// true and, with cancel(false), "in-progress tasks are allowed to complete"); pending_count
// (the executor cannot list armed tasks: `pending` is this file's own bookkeeping).
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

  public static void main(String[] args) throws IOException {
    System.setOut(System.err);  // stdout is the protocol only: a stray print goes to stderr
    String promises = "delivery exactly_once never_early contains_errors thread_safe";
    emit("{\"type\":\"hello\",\"protocol\":1,\"name\":\"java-stpe\",\"kind\":\"facility\","
        + "\"promises\":[\"" + promises.replace(" ", "\",\"") + "\"],\"features\":[\"fail\"],"
        + "\"version\":" + str(System.getProperty("java.version")) + "}");
    var in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      Map<String, String> m = parse(line);
      long id = m.containsKey("id") ? num(m.get("id"), 1, (1L << 53) - 1) : 0;
      switch (m.get("type")) {
        case "\"schedule\"" -> schedule(id, num(m.get("delay_ns"), Long.MIN_VALUE, Long.MAX_VALUE),
            m.get("fail").equals("true"));
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

  static void schedule(long id, long delayNs, boolean fail) {
    synchronized (lock) {  // held to the answer: a task due at once must wait to write `fired`
      long t = System.nanoTime();  // before schedule(): its deadline is a later nanoTime() + delay
      try {
        timers.put(id, stpe.schedule(() -> fire(id, fail), delayNs, TimeUnit.NANOSECONDS));
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
      boolean stopped = f != null && f.cancel(false);
      if (stopped) armed.remove(id);
      emit(f == null ? error(id, "never armed") : "{\"type\":\"cancelled\",\"id\":" + id
          + ",\"result\":\"" + (stopped ? "prevented" : "too_late") + "\"}");
    }
  }

  // The task, on the worker: `fired` first, then fail as asked (the Future keeps the exception).
  static void fire(long id, boolean fail) {
    long t = System.nanoTime();
    synchronized (lock) {
      armed.remove(id);
      if (!closed) emit("{\"type\":\"fired\",\"id\":" + id + ",\"t_ns\":" + t + "}");
    }
    if (fail) throw new RuntimeException("tlab asked task " + id + " to fail");
  }

  static void emit(String line) {  // one whole line, flushed at its '\n' (autoflush); `lock` held
    out.print(line + "\n");
    if (out.checkError()) die("stdout is closed");
  }

  // A request: one flat object, fixed keys per type (docs/protocol.schema.json); else exit 2.
  static final Pattern FIELD = Pattern.compile("[ \\t]*\"(type|id|delay_ns|fail)\"[ \\t]*:[ \\t]*"
      + "(\"(?:schedule|cancel|shutdown)\"|-?(?:0|[1-9][0-9]*)|true|false)[ \\t]*([,}])");
  static final Map<String, Set<String>> KEYS = Map.of("\"schedule\"", Set.of("type", "id",
      "delay_ns", "fail"), "\"cancel\"", Set.of("type", "id"), "\"shutdown\"", Set.of("type"));

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
    if ("\"schedule\"".equals(m.get("type"))) m.putIfAbsent("fail", "false");  // optional
    if (!line.substring(f.end()).isBlank() || !m.getOrDefault("fail", "false").matches("true|false")
        || !m.keySet().equals(KEYS.get(m.getOrDefault("type", "\"shutdown\""))))
      die("not a request of docs/protocol.schema.json: " + line);
    return m;
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
