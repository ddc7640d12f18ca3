// tlab/tool/base/build_info.h: facts about this build, fixed when it was configured/built.
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
// Paths of this build, for the binaries tlab drives (model_runs.h, kill_matrix.h);
// kModelsDir / kPropertyTestBin are "" when this build does not make them.
extern const char* const kSourceDir;
extern const char* const kModelsDir;
extern const char* const kPropertyTestBin;

}  // namespace tlab::tool
