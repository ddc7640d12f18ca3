// tlab/tool/subjects/plugin.cc: see plugin.h.
#include "subjects/plugin.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/fork_call.h"
#include "subjects/exec/exec_subject.h"
#include "subjects/subjects.h"

namespace tlab::tool {

namespace {

// How long a probe may take (dlopen, constructors, the entry call, reading the
// descriptor) before it counts as hung.
constexpr int kProbeLimitMs = 10'000;
constexpr std::size_t kMaxName = 64;
constexpr std::size_t kMaxSummary = 400;

struct Spec {
  std::string library;  // empty: a built-in row
  std::string entry;
};

Spec parse_spec(const std::string& spec) {
  if (!is_library_spec(spec)) return {};
  Spec s{spec, TLAB_SUBJECT_ENTRY_NAME};
  const std::size_t colon = spec.rfind(':');
  if (colon != std::string::npos && spec.find('/', colon) == std::string::npos) {
    s.library = spec.substr(0, colon);
    s.entry = spec.substr(colon + 1);
  }
  return s;
}

bool valid_name(const char* p) {
  const std::size_t n = ::strnlen(p, kMaxName + 1);
  if (n == 0 || n > kMaxName) return false;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = p[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// Stages a probe child reports before each risky step, so that a crash or hang
// names the step it happened in.
constexpr const char* kStageNames[] = {"loading the library (dlopen, its constructors)",
                                       "calling the entry point", "reading the descriptor"};

}  // namespace

PromiseSet promises_of_abi(std::uint64_t bits) {
  struct Map {
    std::uint64_t bit;
    Promise p;
  };
  static constexpr Map kMap[] = {
      {TLAB_PROMISE_DELIVERY, Promise::kDelivery},
      {TLAB_PROMISE_EXACTLY_ONCE, Promise::kExactlyOnce},
      {TLAB_PROMISE_NEVER_EARLY, Promise::kNeverEarly},
      {TLAB_PROMISE_ACCURATE_CANCEL, Promise::kAccurateCancel},
      {TLAB_PROMISE_FIFO_TIES, Promise::kFifoTies},
      {TLAB_PROMISE_PENDING_COUNT, Promise::kPendingCount},
      {TLAB_PROMISE_THREAD_SAFE, Promise::kThreadSafe},
      {TLAB_PROMISE_MUTUAL_EXCLUSION, Promise::kMutualExclusion},
      {TLAB_PROMISE_VIRTUAL, Promise::kVirtualTime},
      {TLAB_PROMISE_NO_SPURIOUS_TIMEOUT, Promise::kNoSpuriousTimeout},
      {TLAB_PROMISE_REENTRANT, Promise::kReentrant},
      {TLAB_PROMISE_NEXT_PASS, Promise::kNextPass},
  };
  PromiseSet out;
  for (const Map& m : kMap) {
    if ((bits & m.bit) != 0) out = out | m.p;
  }
  return out;
}

bool check_descriptor(const tlab_subject& d, std::string& field, std::string& why) {
  auto bad = [&](const char* f, std::string w) {
    field = f;
    why = std::move(w);
    return false;
  };
  if (d.abi_version != TLAB_SUBJECT_ABI_VERSION) {
    return bad("abi_version", fmt::format("is {}; this tlab speaks subject ABI version {}",
                                          d.abi_version, TLAB_SUBJECT_ABI_VERSION));
  }
  if (d.struct_size < TLAB_SUBJECT_V1_SIZE) {
    return bad("struct_size", fmt::format("is {}; ABI version {} needs at least {}", d.struct_size,
                                          TLAB_SUBJECT_ABI_VERSION, TLAB_SUBJECT_V1_SIZE));
  }
  if (d.name == nullptr || !valid_name(d.name)) {
    return bad("name", fmt::format("must be 1 to {} characters of [A-Za-z0-9_.-]", kMaxName));
  }
  if (d.summary == nullptr || ::strnlen(d.summary, kMaxSummary + 1) > kMaxSummary) {
    return bad("summary", fmt::format("must be a string of at most {} bytes", kMaxSummary));
  }
  if (d.reserved != 0) return bad("reserved", "must be 0");
  if (d.max_delay_ns < 0) return bad("max_delay_ns", "must be >= 0 (0 means INT64_MAX)");
  // Read only where struct_size covers it (a subject built before the field).
  if (d.struct_size >= offsetof(tlab_subject, resolution_ns) + sizeof d.resolution_ns &&
      (d.resolution_ns < 0 || d.resolution_ns > 1'000'000'000)) {
    return bad("resolution_ns",
               fmt::format("is {}; must be 0 to 1000000000 (1 s)", d.resolution_ns));
  }
  if (d.struct_size >= offsetof(tlab_subject, schedule_periodic) + sizeof d.schedule_periodic) {
    if (d.reserved2 != 0) return bad("reserved2", "must be 0");
    if ((d.periodic & ~TLAB_PERIODIC_ALL) != 0) {
      return bad("periodic",
                 fmt::format("has unknown bits 0x{:x}", d.periodic & ~TLAB_PERIODIC_ALL));
    }
    if (d.periodic != 0 && d.kind != TLAB_KIND_FACILITY) {
      return bad("periodic",
                 "is set, but only a facility (TLAB_KIND_FACILITY) has periodic timers");
    }
    if ((d.periodic != 0) != (d.schedule_periodic != nullptr)) {
      return bad("schedule_periodic", d.periodic != 0
                                          ? "is NULL, but periodic names kinds it arms"
                                          : "is set, but periodic is 0 (name the kinds it arms)");
    }
  }
  if (d.clock != TLAB_CLOCK_HOST && d.clock != TLAB_CLOCK_MONOTONIC) {
    return bad(
        "clock",
        fmt::format("is {}; must be TLAB_CLOCK_HOST (1) or TLAB_CLOCK_MONOTONIC (2)", d.clock));
  }
  if (d.create == nullptr) return bad("create", "is NULL");
  if (d.destroy == nullptr) return bad("destroy", "is NULL");
  if ((d.promises & ~TLAB_PROMISE_ALL) != 0) {
    return bad("promises", fmt::format("has unknown bits 0x{:x}", d.promises & ~TLAB_PROMISE_ALL));
  }
  if (d.kind == TLAB_KIND_FACILITY) {
    if (d.schedule == nullptr) return bad("schedule", "is NULL (a facility must schedule)");
    if (d.cancel == nullptr) return bad("cancel", "is NULL (a facility must cancel)");
    if (d.drive == TLAB_DRIVE_LOOP && d.poll == nullptr) {
      return bad("poll", "is NULL, but drive is TLAB_DRIVE_LOOP (tlab must be able to poll)");
    }
    if (d.drive == TLAB_DRIVE_SELF && d.poll != nullptr) {
      return bad("poll",
                 "is set, but drive is TLAB_DRIVE_SELF (a self-driven subject is not polled)");
    }
    if (d.drive != TLAB_DRIVE_LOOP && d.drive != TLAB_DRIVE_SELF) {
      return bad("drive",
                 fmt::format("is {}; must be TLAB_DRIVE_LOOP (1) or TLAB_DRIVE_SELF (2)", d.drive));
    }
    if (d.acquire_for != nullptr || d.release != nullptr) {
      return bad(d.acquire_for != nullptr ? "acquire_for" : "release",
                 "is set, but kind is TLAB_KIND_FACILITY (timed-wait calls must be NULL)");
    }
    if ((d.promises & TLAB_PROMISE_MUTUAL_EXCLUSION) != 0) {
      return bad("promises", "MUTUAL_EXCLUSION is a timed-wait promise; this is a facility");
    }
    if ((d.promises & TLAB_PROMISE_NO_SPURIOUS_TIMEOUT) != 0) {
      return bad("promises", "NO_SPURIOUS_TIMEOUT is a timed-wait promise; this is a facility");
    }
    if ((d.promises & TLAB_PROMISE_PENDING_COUNT) != 0 && d.pending == nullptr) {
      return bad("promises", "PENDING_COUNT is promised but pending is NULL");
    }
    if ((d.promises & TLAB_PROMISE_REENTRANT) != 0 && d.drive != TLAB_DRIVE_LOOP &&
        (d.promises & TLAB_PROMISE_THREAD_SAFE) == 0) {
      return bad("promises",
                 "REENTRANT needs drive TLAB_DRIVE_LOOP or THREAD_SAFE (a self-driven subject's "
                 "callbacks would call it concurrently with tlab's serialised calls)");
    }
    if ((d.promises & TLAB_PROMISE_NEXT_PASS) != 0 &&
        (d.drive != TLAB_DRIVE_LOOP || (d.promises & TLAB_PROMISE_REENTRANT) == 0)) {
      return bad("promises",
                 "NEXT_PASS needs drive TLAB_DRIVE_LOOP (a pass is one poll) and REENTRANT "
                 "(only a callback can arm a timer within a pass)");
    }
    if ((d.promises & TLAB_PROMISE_VIRTUAL) != 0 &&
        (d.clock != TLAB_CLOCK_HOST || d.drive != TLAB_DRIVE_LOOP)) {
      return bad("promises",
                 "VIRTUAL needs clock TLAB_CLOCK_HOST and drive TLAB_DRIVE_LOOP (tlab must own "
                 "the subject's time)");
    }
    return true;
  }
  if (d.kind == TLAB_KIND_TIMED_WAIT) {
    if (d.acquire_for == nullptr) return bad("acquire_for", "is NULL (a timed wait must acquire)");
    if (d.release == nullptr) return bad("release", "is NULL (a timed wait must release)");
    if (d.schedule != nullptr || d.cancel != nullptr || d.poll != nullptr || d.pending != nullptr) {
      return bad(d.schedule != nullptr ? "schedule"
                 : d.cancel != nullptr ? "cancel"
                 : d.poll != nullptr   ? "poll"
                                       : "pending",
                 "is set, but kind is TLAB_KIND_TIMED_WAIT (facility calls must be NULL)");
    }
    constexpr std::uint64_t kFacilityOnly = TLAB_PROMISE_ACCURATE_CANCEL | TLAB_PROMISE_FIFO_TIES |
                                            TLAB_PROMISE_PENDING_COUNT | TLAB_PROMISE_VIRTUAL |
                                            TLAB_PROMISE_EXACTLY_ONCE | TLAB_PROMISE_REENTRANT |
                                            TLAB_PROMISE_NEXT_PASS;
    if ((d.promises & kFacilityOnly) != 0) {
      return bad("promises", fmt::format("{} are facility promises; this is a timed wait",
                                         promises_of_abi(d.promises & kFacilityOnly).names()));
    }
    return true;
  }
  return bad(
      "kind",
      fmt::format("is {}; must be TLAB_KIND_FACILITY (1) or TLAB_KIND_TIMED_WAIT (2)", d.kind));
}

bool is_library_spec(std::string_view spec) {
  std::string_view path = spec;
  const std::size_t colon = spec.rfind(':');
  if (colon != std::string_view::npos && spec.find('/', colon) == std::string_view::npos) {
    path = spec.substr(0, colon);
  }
  return path.find('/') != std::string_view::npos ||
         (path.size() > 3 && path.substr(path.size() - 3) == ".so");
}

namespace {

// full_descriptor: `d` itself when it has every field this tlab reads, else a copy
// of what it has with the later fields 0 (subject.h: a field struct_size does not
// cover reads as 0). The copy lives as long as the library, which is never
// unloaded: one per library opened, a few hundred bytes.
const tlab_subject* full_descriptor(const tlab_subject* d) {
  if (d->struct_size >= sizeof(tlab_subject)) return d;
  auto* full = new tlab_subject{};  // NOLINT: as long-lived as the loaded library
  std::memcpy(full, d, d->struct_size);
  full->struct_size = sizeof(tlab_subject);
  return full;
}

// open_with_stages: open_subject, reporting each stage to `stage` (may be null).
const tlab_subject* open_with_stages(const std::string& spec, std::string& error,
                                     void (*stage)(int, int), int fd) {
  const Spec s = parse_spec(spec);
  if (s.library.empty()) {
    const SubjectInfo* row = find_subject(spec);
    if (row == nullptr) {
      error = fmt::format(
          "--subject {}: no such subject (`tlab list subjects`), and not a shared "
          "library path (give one with a '/' or ending in .so)",
          spec);
      return nullptr;
    }
    if (row->abi == nullptr) {
      error = fmt::format("--subject {}: this {} cannot be run through the subject ABI", spec,
                          name_of(row->origin));
      return nullptr;
    }
    const tlab_subject* d = row->abi(row->name);
    std::string field, why;
    if (d == nullptr || !check_descriptor(*d, field, why)) {
      error = fmt::format("--subject {}: built-in descriptor is invalid: {} {}", spec, field, why);
      return nullptr;
    }
    return d;
  }
  if (s.library.find('/') != std::string::npos) {
    struct stat st {};
    if (::stat(s.library.c_str(), &st) != 0) {
      error = fmt::format("--subject {}: {}: {}", spec, s.library, std::strerror(errno));
      return nullptr;
    }
    if (S_ISDIR(st.st_mode)) {
      error = fmt::format("--subject {}: {} is a directory", spec, s.library);
      return nullptr;
    }
  }
  if (stage != nullptr) stage(fd, 0);
  void* h = ::dlopen(s.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = ::dlerror();
    error = fmt::format("--subject {}: cannot load {}: {}", spec, s.library,
                        e != nullptr ? e : "unknown dlopen error");
    // dlopen searches a name without '/' on the library path only, never the
    // current folder: a user who names a file here means ./NAME.
    struct stat here {};
    if (s.library.find('/') == std::string::npos && ::stat(s.library.c_str(), &here) == 0) {
      error += fmt::format(
          " (a name without '/' is looked up on the library path, not in the current folder; "
          "for the file here, write --subject ./{})",
          s.library);
    }
    return nullptr;
  }
  ::dlerror();
  void* sym = ::dlsym(h, s.entry.c_str());
  if (sym == nullptr) {
    error = fmt::format(
        "--subject {}: {} does not export the entry symbol `{}` (extern \"C\" "
        "const tlab_subject* {}(uint32_t); tlab/subject.h)",
        spec, s.library, s.entry, s.entry);
    return nullptr;
  }
  if (stage != nullptr) stage(fd, 1);
  auto entry = reinterpret_cast<tlab_subject_entry_fn>(sym);
  const tlab_subject* d = entry(TLAB_SUBJECT_ABI_VERSION);
  if (d == nullptr) {
    error = fmt::format(
        "--subject {}: {}: {}({}) returned NULL (the library cannot serve subject "
        "ABI version {})",
        spec, s.library, s.entry, TLAB_SUBJECT_ABI_VERSION, TLAB_SUBJECT_ABI_VERSION);
    return nullptr;
  }
  if (stage != nullptr) stage(fd, 2);
  std::string field, why;
  if (!check_descriptor(*d, field, why)) {
    error = fmt::format("--subject {}: {}: the descriptor returned by {} is invalid: field {} {}",
                        spec, s.library, s.entry, field, why);
    return nullptr;
  }
  return full_descriptor(d);
}

void write_stage(int fd, int stage) {
  write_fd(fd, std::string(1, static_cast<char>('0' + stage)));
}

}  // namespace

const tlab_subject* open_subject(const std::string& spec, std::string& error) {
  return open_with_stages(spec, error, nullptr, -1);
}

std::optional<SubjectFacts> probe_subject(const std::string& spec, std::string& error) {
  if (exec::is_exec_spec(spec)) {
    // Starting a subject process can take a second (a JVM): once per command. The
    // CLI and a case target resolved by spec (case_targets.h) may both ask, on the
    // CLI thread.
    static std::map<std::string, SubjectFacts> probed;
    if (auto it = probed.find(spec); it != probed.end()) return it->second;
    std::optional<SubjectFacts> f = exec::probe_exec_subject(spec, error);
    if (f) probed.emplace(spec, *f);
    return f;
  }
  const Spec s = parse_spec(spec);
  if (s.library.empty()) {
    // A built-in row: nothing foreign runs, so no child is needed.
    const tlab_subject* d = open_subject(spec, error);
    if (d == nullptr) return std::nullopt;
    SubjectFacts f;
    f.spec = spec;
    f.name = d->name;
    f.summary = d->summary;
    f.kind = d->kind;
    f.drive = d->drive;
    f.clock = d->clock;
    f.promise_bits = d->promises;
    f.promises = promises_of_abi(d->promises);
    f.max_delay_ns = d->max_delay_ns;
    f.has_pending = d->pending != nullptr;
    f.periodic = d->periodic;
    return f;
  }
  const ForkResult child = fork_call(
      [&](int fd) {
        std::string err;
        const tlab_subject* d = open_with_stages(spec, err, &write_stage, fd);
        nlohmann::json j;
        if (d == nullptr) {
          j["error"] = err;
        } else {
          j = {{"name", d->name},
               {"summary", d->summary},
               {"kind", d->kind},
               {"drive", d->drive},
               {"clock", d->clock},
               {"promises", d->promises},
               {"max_delay_ns", d->max_delay_ns},
               {"has_pending", d->pending != nullptr},
               {"periodic", d->periodic}};
        }
        write_fd(fd, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      },
      kProbeLimitMs);
  if (child.failed_to_start) {
    error = fmt::format("--subject {}: {}", spec, child.out);
    return std::nullopt;
  }
  const std::string& got = child.out;
  const bool hung = child.timed_out;
  // Stages are single digits before the '{' that starts the JSON.
  const std::size_t brace = got.find('{');
  const std::string stages = got.substr(0, brace);
  const int last = stages.empty() ? 0 : stages.back() - '0';
  const char* step = kStageNames[last < 0 || last > 2 ? 0 : last];
  const std::string where = last >= 1 ? fmt::format("{} ({})", s.library, s.entry) : s.library;
  if (hung) {
    error = fmt::format("--subject {}: {}: hung while {} (no answer within {} s)", spec, where,
                        step, kProbeLimitMs / 1000);
    return std::nullopt;
  }
  if (child.interrupted) {
    error = fmt::format("--subject {}: interrupted while probing {}", spec, where);
    return std::nullopt;
  }
  if (brace == std::string::npos) {
    error = fmt::format("--subject {}: {}: the probe died while {}: {}", spec, where, step,
                        child.describe(kProbeLimitMs));
    return std::nullopt;
  }
  const nlohmann::json j = nlohmann::json::parse(got.substr(brace), nullptr,
                                                 /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    error = fmt::format("--subject {}: {}: the probe's answer was unreadable", spec, where);
    return std::nullopt;
  }
  if (j.contains("error")) {
    error = j["error"].get<std::string>();
    return std::nullopt;
  }
  SubjectFacts f;
  f.spec = spec;
  f.library = s.library;
  f.entry = s.entry;
  f.name = j.at("name").get<std::string>();
  f.summary = j.at("summary").get<std::string>();
  f.kind = j.at("kind").get<std::uint32_t>();
  f.drive = j.at("drive").get<std::uint32_t>();
  f.clock = j.at("clock").get<std::uint32_t>();
  f.promise_bits = j.at("promises").get<std::uint64_t>();
  f.promises = promises_of_abi(f.promise_bits);
  f.max_delay_ns = j.at("max_delay_ns").get<std::int64_t>();
  f.has_pending = j.at("has_pending").get<bool>();
  f.periodic = j.at("periodic").get<std::uint32_t>();
  return f;
}

}  // namespace tlab::tool
