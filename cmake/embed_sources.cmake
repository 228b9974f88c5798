# ktune_embed_sources(<target> <name> <files...>): generates ktune/embedded/<name>.hpp holding each
# file's text as `ktune::embedded::<name>` (a list of {path, text}), regenerated when a file
# changes. Kernel sources compiled at tune time (NVRTC) travel inside the binary this way.
function(ktune_embed_sources target name)
  set(output ${KTUNE_BUILD_INFO_DIR}/ktune/embedded/${name}.hpp)
  set(sources "")
  foreach(source ${ARGN})
    list(APPEND sources ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  endforeach()
  string(REPLACE ";" "|" sources_arg "${sources}")
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} -DNAME=${name} "-DSOURCES=${sources_arg}"
            -DROOT=${PROJECT_SOURCE_DIR} -P ${PROJECT_SOURCE_DIR}/cmake/write_embedded_sources.cmake
    DEPENDS ${sources} ${PROJECT_SOURCE_DIR}/cmake/write_embedded_sources.cmake
    COMMENT "Embedding ${name}"
    VERBATIM)
  target_sources(${target} PRIVATE ${output})
endfunction()
