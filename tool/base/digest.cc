// tlab/tool/base/digest.cc: see digest.h.
#include "base/digest.h"

#include <fmt/format.h>

namespace tlab::tool {

std::uint64_t fnv1a64(std::string_view bytes) {
  // The FNV-1a 64-bit offset basis and prime (draft-eastlake-fnv, section 2).
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string digest_hex(std::string_view bytes) { return fmt::format("{:016x}", fnv1a64(bytes)); }

}  // namespace tlab::tool
