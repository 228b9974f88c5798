# Generates build_info.hpp (ktune version and git commit) at every build, so the commit recorded
# with each run is the one the binary was built from. The file is rewritten only when it changes.
set(KTUNE_BUILD_INFO_DIR ${PROJECT_BINARY_DIR}/generated)
add_custom_target(ktune_build_info
  COMMAND ${CMAKE_COMMAND}
          -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DOUTPUT=${KTUNE_BUILD_INFO_DIR}/ktune/build_info.hpp
          -DVERSION=${PROJECT_VERSION}
          -P ${PROJECT_SOURCE_DIR}/cmake/write_build_info.cmake
  BYPRODUCTS ${KTUNE_BUILD_INFO_DIR}/ktune/build_info.hpp
  COMMENT "Recording ktune version and git commit"
  VERBATIM)
