# Script mode: OUTPUT, DEPFILE, NAME, SOURCES ("|"-separated), COMPILER, FLAGS ("|"-separated),
# FLAVOUR (compiler and flags, hashed too), ROOT (the source tree), BUILD_ROOT (the build tree).
# Asks the compiler which files the sources read (-MM -MG: generated headers that do not exist
# yet are listed, not fatal), hashes those of the source tree (path relative to ROOT, then text,
# in path order), writes the hash header, and writes a depfile naming every file read.
string(REPLACE "|" ";" source_list "${SOURCES}")
string(REPLACE "|" ";" flag_list "${FLAGS}")
set(dependencies "")
foreach(source ${source_list})
  execute_process(
    COMMAND ${COMPILER} ${flag_list} -MM -MG -MT target -x c++ ${source}
    OUTPUT_VARIABLE rule
    ERROR_VARIABLE error
    RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "listing the files ${source} includes failed:\n${error}")
  endif()
  # "target: a.cpp b.hpp \<newline> c.hpp" -> a list of paths (none of ours contain spaces).
  string(REGEX REPLACE "^target:" "" rule "${rule}")
  string(REGEX REPLACE "\\\\\n" " " rule "${rule}")
  string(REGEX REPLACE "[ \t\r\n]+" ";" rule "${rule}")
  foreach(path ${rule})
    if(path STREQUAL "")
      continue()
    endif()
    get_filename_component(path "${path}" ABSOLUTE BASE_DIR "${ROOT}")
    list(APPEND dependencies "${path}")
  endforeach()
endforeach()
list(REMOVE_DUPLICATES dependencies)

# Files of the source tree only: the compiler and its system headers are in FLAVOUR, and
# generated headers (this one among them) live in the build tree.
set(hashed "")
foreach(path ${dependencies})
  string(FIND "${path}" "${BUILD_ROOT}/" in_build)
  string(FIND "${path}" "${ROOT}/" in_source)
  if(in_build EQUAL 0 OR NOT in_source EQUAL 0 OR NOT EXISTS "${path}")
    continue()
  endif()
  file(RELATIVE_PATH relative "${ROOT}" "${path}")
  list(APPEND hashed "${relative}")
endforeach()
list(SORT hashed)
set(all "${FLAVOUR}\n")
foreach(relative ${hashed})
  file(READ "${ROOT}/${relative}" text)
  string(APPEND all "${relative}\n${text}")
endforeach()
string(SHA256 hash "${all}")
string(SUBSTRING ${hash} 0 16 short)
string(REPLACE ";" "\n//   " listed "${hashed}")
file(WRITE ${OUTPUT} "// Generated at build time. Do not edit.\n// The hash of the compiler, the kernel flags and these files:\n//   ${listed}\n#pragma once\nnamespace ktune::source_hash {\ninline constexpr const char* ${NAME} = \"${short}\";\n}\n")

# The build tree's files are left out of the depfile too: this header is one of them.
set(depfile_paths "")
foreach(relative ${hashed})
  string(APPEND depfile_paths " \\\n  ${ROOT}/${relative}")
endforeach()
file(WRITE ${DEPFILE} "${OUTPUT}:${depfile_paths}\n")
