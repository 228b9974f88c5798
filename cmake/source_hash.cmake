# ktune_source_hash(<target> <name> <sources...>): generates <name>_source_hash.hpp holding the
# SHA-256 of the sources plus the compiler and flags, regenerated whenever a source changes.
# The hash keys measurements, so edited kernel code is measured afresh, never reused.
function(ktune_source_hash target name)
  set(output ${KTUNE_BUILD_INFO_DIR}/ktune/source_hash/${name}.hpp)
  set(sources "")
  foreach(source ${ARGN})
    list(APPEND sources ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  endforeach()
  string(REPLACE ";" "|" sources_arg "${sources}")
  string(REPLACE ";" " " flags "${KTUNE_CPU_KERNEL_FLAGS}")
  set(flavour "${CMAKE_CXX_COMPILER_ID}-${CMAKE_CXX_COMPILER_VERSION} ${flags}")
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} -DNAME=${name} "-DSOURCES=${sources_arg}"
            "-DFLAVOUR=${flavour}" -P ${PROJECT_SOURCE_DIR}/cmake/write_source_hash.cmake
    DEPENDS ${sources} ${PROJECT_SOURCE_DIR}/cmake/write_source_hash.cmake
    COMMENT "Hashing ${name} sources"
    VERBATIM)
  target_sources(${target} PRIVATE ${output})
endfunction()
