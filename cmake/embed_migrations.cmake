# Script mode (cmake -P): embeds every MIGRATIONS_DIR/NNN_<name>.sql into OUTPUT, a C++ header
# with an array of {version, name, sql} in version order. Versions must be 1, 2, 3, ... without
# gaps or duplicates, so a migration can never be skipped or applied twice under two names.
#   cmake -DMIGRATIONS_DIR=<dir> -DOUTPUT=<header> -P embed_migrations.cmake
if(NOT MIGRATIONS_DIR OR NOT OUTPUT)
  message(FATAL_ERROR "embed_migrations.cmake: pass -DMIGRATIONS_DIR=... and -DOUTPUT=...")
endif()

file(GLOB files LIST_DIRECTORIES false "${MIGRATIONS_DIR}/*.sql")
list(SORT files)
if(NOT files)
  message(FATAL_ERROR "embed_migrations.cmake: no migrations (*.sql) in ${MIGRATIONS_DIR}")
endif()

set(delimiter "ktune_sql")
set(entries "")
set(expected 1)
foreach(file IN LISTS files)
  get_filename_component(base "${file}" NAME_WE)
  if(NOT base MATCHES "^([0-9][0-9][0-9])_([A-Za-z0-9_]+)$")
    message(FATAL_ERROR "${file}: a migration must be named NNN_<name>.sql (e.g. 001_initial.sql)")
  endif()
  set(number "${CMAKE_MATCH_1}")
  set(name "${CMAKE_MATCH_2}")
  math(EXPR version "${number}")  # strips leading zeros
  if(NOT version EQUAL expected)
    message(FATAL_ERROR "${file}: expected migration number ${expected} next (numbers start at 001 "
                        "and have no gaps or duplicates), got ${number}")
  endif()
  file(READ "${file}" sql)
  string(FIND "${sql}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file}: contains the raw-string delimiter )${delimiter}\"")
  endif()
  string(APPEND entries "    {${version}, \"${name}\", R\"${delimiter}(${sql})${delimiter}\"},\n")
  math(EXPR expected "${expected} + 1")
endforeach()
math(EXPR latest "${expected} - 1")

set(content "// Generated at build time from db/migrations/*.sql by cmake/embed_migrations.cmake.
// Do not edit; add a new NNN_<name>.sql instead.
#pragma once

#include <array>
#include <string_view>

namespace ktune::migrations {

struct Migration {
  int version;
  std::string_view name;
  std::string_view sql;
};

inline constexpr int kLatestVersion = ${latest};

inline constexpr std::array<Migration, ${latest}> kAll{{
${entries}}};

}  // namespace ktune::migrations
")

if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
