# tlab_write_if_changed(<file> <content>): writes <file> only when its content would
# change, so a generator script that runs on every build causes no rebuild.
# Included by embed_files.cmake and git_revision.cmake.
function(tlab_write_if_changed path content)
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${content}")
endfunction()
