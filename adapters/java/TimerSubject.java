// TimerSubject: java.util.Timer as a tlab exec subject (docs/protocol.md). Run: java
// adapters/java/TimerSubject.java (JDK 17 runs one file: the JSON reader repeats StpeSubject's).
// schedule -> timer.schedule(task, ceil(delay_ns / 1 ms)), refusing a delay below 0 ms with an
// `error`; cancel -> task.cancel(), true "prevented", false "too_late".
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
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.regex.*;

public class TimerSubject {
  static final PrintStream out =
      new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
  static final Object lock = new Object();  // guards stdout and the four fields below
  static final Map<Long, TimerTask> timers = new HashMap<>();  // lock; every id armed
  static final Set<Long> armed = new LinkedHashSet<>();  // lock; neither fired nor cancelled
  static final Set<Long> firing = new HashSet<>();  // lock; answered too_late, not yet fired
  static boolean closed;  // lock; `pending` was written, so nothing more is
  static final Timer timer = new Timer("tlab-timer", true);

  public static void main(String[] args) throws Exception {
    System.setOut(System.err);  // stdout is the protocol only: a stray print goes to stderr
    String promises = "delivery exactly_once accurate_cancel thread_safe";
    emit("{\"type\":\"hello\",\"protocol\":1,\"name\":\"java-timer\",\"kind\":\"facility\","
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

  static void schedule(long id, long delayNs, boolean fail) {
    long ms = delayNs / 1_000_000 + (delayNs % 1_000_000 > 0 ? 1 : 0);  // ceil: `/` truncates
    TimerTask task = new TimerTask() { public void run() { fire(id, fail); } };
    synchronized (lock) {  // held to the answer: a task due at once must wait to write `fired`
      long t = System.nanoTime();  // before schedule(): its deadline is a later clock + delay
      try {
        timer.schedule(task, ms);
        timers.put(id, task);
        armed.add(id);
        emit("{\"type\":\"scheduled\",\"id\":" + id + ",\"t_ns\":" + t + "}");
      } catch (RuntimeException e) {  // a negative delay, or the timer thread died: not armed
        emit(error(id, e.toString()));
      }
    }
  }

  static void cancel(long id) {
    synchronized (lock) {
      TimerTask task = timers.get(id);  // null: its schedule was refused
      boolean stopped = task != null && task.cancel();
      if (stopped) armed.remove(id);
      else if (armed.contains(id)) firing.add(id);  // the timer thread has taken it to run
      emit(task == null ? error(id, "never armed") : "{\"type\":\"cancelled\",\"id\":" + id
          + ",\"result\":\"" + (stopped ? "prevented" : "too_late") + "\"}");
    }
  }

  // The task, on the timer thread: `fired` first, then fail as asked, which ends that thread.
  static void fire(long id, boolean fail) {
    long t = System.nanoTime();
    synchronized (lock) {
      armed.remove(id);
      if (firing.remove(id)) lock.notifyAll();
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
    System.err.println("TimerSubject: " + why);
    System.exit(2);
    return 0;
  }
}
