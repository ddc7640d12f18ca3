// tlab/tool/subjects/exec/adapters.h: the exec adapters tlab ships (adapters/ in
// the source tree), by name: `--subject exec:python-asyncio` runs the installed
// adapter, so a user needs neither the source tree nor the adapter's path.
//
// Where they are (adapters_dir): $TLAB_ADAPTERS_DIR when set, else
// <this executable's directory>/../share/tlab/adapters, the layout the build tree
// (adapters/CMakeLists.txt stages them there: the scripts copied, the Go adapter
// built, the Java ones compiled once) and `cmake --install` or the .deb
// (P/bin/tlab and P/share/tlab/adapters) both have.
//
//   | name           | runtime | file under the directory  | compiled form               |
//   |----------------|---------|---------------------------|-----------------------------|
//   | python-asyncio | python3 | python/asyncio_subject.py | -                           |
//   | node-timers    | node    | node/timers_subject.js    | -                           |
//   | java-stpe      | java    | java/StpeSubject.java     | java/classes (javac once)   |
//   | java-timer     | java    | java/TimerSubject.java    | java/classes                |
//   | go-time        | -       | go/timer_subject          | built by the project's build|
//
// A name is its adapter's hello name. A Java adapter runs from java/classes when
// the build compiled it there (a JVM start, not a compile, per case), else from
// its source (java's source launcher compiles it on every start, ~2 s). A missing
// file or runtime is an error that says how to get it (exit 2 at the probe).
//
// Cost: a few stat(2) calls per resolution. Ground rules: pure functions of the
// file system and the environment; any thread.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace tlab::tool::exec {

struct ExecAdapter {
  std::string_view name;        // --subject exec:<name>, and its hello's name
  std::string_view runtime;     // the program that runs `file` ("": file is the program)
  std::string_view file;        // relative to adapters_dir()
  std::string_view java_class;  // a Java adapter's class, run from java/classes if built
  std::string_view summary;     // one line for `tlab list subjects`
  std::string_view missing;     // how to get it when `file` (or its runtime) is absent
};

inline constexpr std::array<ExecAdapter, 5> kExecAdapters{{
    {"python-asyncio", "python3", "python/asyncio_subject.py", "",
     "Python asyncio loop.call_later / TimerHandle.cancel", "install python3 (scripts/setup)"},
    {"node-timers", "node", "node/timers_subject.js", "", "Node.js setTimeout / clearTimeout",
     "install nodejs (scripts/setup)"},
    {"java-stpe", "java", "java/StpeSubject.java", "StpeSubject",
     "Java ScheduledThreadPoolExecutor.schedule / Future.cancel", "install a JDK (scripts/setup)"},
    {"java-timer", "java", "java/TimerSubject.java", "TimerSubject",
     "java.util.Timer.schedule / TimerTask.cancel", "install a JDK (scripts/setup)"},
    {"go-time", "", "go/timer_subject", "", "Go time.AfterFunc / Timer.Stop",
     "install golang-go (scripts/setup) and build tlab again: the build makes it from "
     "adapters/go/"},
}};

// adapters_dir: where the adapters are (the rule above); "" when this executable's
// path cannot be read and TLAB_ADAPTERS_DIR is unset.
std::string adapters_dir();

// find_adapter: the adapter named `name`, or nullptr.
const ExecAdapter* find_adapter(std::string_view name);

// adapter_argv: the command line that runs `a`; empty with `error` saying what is
// missing and how to get it.
std::vector<std::string> adapter_argv(const ExecAdapter& a, std::string& error);

// adapter_available: whether adapter_argv(a) would succeed; `why` says why not.
bool adapter_available(const ExecAdapter& a, std::string& why);

}  // namespace tlab::tool::exec
