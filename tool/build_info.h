// tlab/tool/build_info.h: facts about this build, fixed when it was configured/built.
//
// kTlabVersion, kBuildType and kCxxFlags come from CMake at configure time
// (build_info.cc.in); kGitRevision is regenerated at build time by
// tool/cmake/git_revision.cmake so it names the commit actually built ("unknown"
// outside a git checkout, "-dirty" with uncommitted changes).
//
// Ground rules: constants; safe from any thread.
#pragma once

namespace tlab::tool {

extern const char* const kTlabVersion;
extern const char* const kBuildType;
extern const char* const kCxxFlags;
extern const char* const kGitRevision;

}  // namespace tlab::tool
