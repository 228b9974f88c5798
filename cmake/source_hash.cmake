# ktune_source_hash(<target> <name> <sources...>): generates ktune/source_hash/<name>.hpp holding a
# hash of the compiler, the CPU kernel flags and every file of the source tree the compiler reads
# when it compiles <sources> (its own dependency output, -MM, with the kernels' flags): the
# sources, the headers they include, and the headers those include. The hash keys stored
# measurements, so an edit to any file a kernel depends on has it measured afresh, never reused.
# The list of files read is handed to the build tool as a depfile, so editing any of them
# regenerates the hash.
function(ktune_source_hash target name)
  set(output ${KTUNE_BUILD_INFO_DIR}/ktune/source_hash/${name}.hpp)
  set(depfile ${KTUNE_BUILD_INFO_DIR}/ktune/source_hash/${name}.d)
  set(sources "")
  foreach(source ${ARGN})
    list(APPEND sources ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  endforeach()
  string(REPLACE ";" "|" sources_arg "${sources}")
  set(flags -std=c++${CMAKE_CXX_STANDARD} ${KTUNE_CPU_KERNEL_FLAGS} -I${PROJECT_SOURCE_DIR} -I${KTUNE_BUILD_INFO_DIR})
  string(REPLACE ";" "|" flags_arg "${flags}")
  string(REPLACE ";" " " kernel_flags "${KTUNE_CPU_KERNEL_FLAGS}")
  set(flavour "${CMAKE_CXX_COMPILER_ID}-${CMAKE_CXX_COMPILER_VERSION} ${kernel_flags}")
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} -DDEPFILE=${depfile} -DNAME=${name} "-DSOURCES=${sources_arg}"
            "-DCOMPILER=${CMAKE_CXX_COMPILER}" "-DFLAGS=${flags_arg}" "-DFLAVOUR=${flavour}"
            -DROOT=${PROJECT_SOURCE_DIR} -DBUILD_ROOT=${PROJECT_BINARY_DIR}
            -P ${PROJECT_SOURCE_DIR}/cmake/write_source_hash.cmake
    DEPENDS ${sources} ${PROJECT_SOURCE_DIR}/cmake/write_source_hash.cmake
    DEPFILE ${depfile}
    COMMENT "Hashing ${name} and the files it includes"
    VERBATIM)
  target_sources(${target} PRIVATE ${output})
endfunction()
