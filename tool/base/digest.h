// tlab/tool/base/digest.h: a stable 64-bit digest of bytes, for keys and
// fingerprints that must agree across processes, builds and machines.
//
// FNV-1a 64 (Fowler, Noll, Vo; the IETF draft-eastlake-fnv): the same value on
// every build and platform, with no seed, so every shard of one plan computes the
// same partition (plan/shard.h in_shard) and the report's plan and scenario digests
// (report/report.h ShardRecord) compare across the shards' machines. It is not a
// cryptographic hash: a digest here catches accidents (a different plan, an edited
// scenario), not an adversary.
//
// Cost: O(bytes), one multiply per byte. Ground rules: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tlab::tool {

// fnv1a64: FNV-1a, 64 bits, over `bytes`.
std::uint64_t fnv1a64(std::string_view bytes);
// digest_hex: fnv1a64 as 16 lower-case hex digits (the report's plan and scenario
// digests).
std::string digest_hex(std::string_view bytes);

}  // namespace tlab::tool
