// subject.cc: example::Wheel as a tlab subject. The adapter (tlab/subject_adapter.h)
// turns any TimerQueue with a std::uint64_t payload into the subject ABI; this
// line defines the plugin's exported entry point, tlab_subject_entry.
#include "tlab/subject_adapter.h"
#include "wheel.h"

using CppWheel = example::Wheel<std::uint64_t>;
TLAB_EXPORT_QUEUE_SUBJECT(CppWheel, "cpp_wheel", "a user's 256-bucket hashed wheel (C++ adapter)")
