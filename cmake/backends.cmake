# Decide which backends to build. Each backend lives in tuner/backends/<name>/ as its own
# CMake target (ktune_backend_<name>) and registers itself with the backend registry.
# KTUNE_WITH_<NAME>: AUTO builds it when the toolchain is found, ON fails when it is not,
# OFF skips it. The CPU backend is always built.

set(KTUNE_BACKEND_TARGETS ktune_backend_cpu)
set(KTUNE_BACKEND_SUMMARY "")

function(ktune_resolve_backend name found)
  string(TOUPPER ${name} upper)
  set(option_value ${KTUNE_WITH_${upper}})
  set(source_dir ${PROJECT_SOURCE_DIR}/tuner/backends/${name})
  if(option_value STREQUAL "OFF")
    set(KTUNE_BUILD_${upper} OFF PARENT_SCOPE)
    return()
  endif()
  if(NOT EXISTS ${source_dir}/CMakeLists.txt)
    if(option_value STREQUAL "ON")
      message(FATAL_ERROR "KTUNE_WITH_${upper}=ON but this source tree has no ${name} backend")
    endif()
    set(KTUNE_BUILD_${upper} OFF PARENT_SCOPE)
    return()
  endif()
  if(NOT ${found})
    if(option_value STREQUAL "ON")
      message(FATAL_ERROR "KTUNE_WITH_${upper}=ON but the ${name} toolchain was not found")
    endif()
    set(KTUNE_BUILD_${upper} OFF PARENT_SCOPE)
    return()
  endif()
  set(KTUNE_BUILD_${upper} ON PARENT_SCOPE)
endfunction()

find_package(CUDAToolkit QUIET)
ktune_resolve_backend(cuda CUDAToolkit_FOUND)
# HIP: only the headers are needed at build time (the runtime and hiprtc are loaded at run
# time). Debian's hip-config.cmake does not load on its own, so the headers are looked up.
find_path(KTUNE_HIP_INCLUDE_DIR hip/hiprtc.h PATHS /opt/rocm/include)
if(KTUNE_HIP_INCLUDE_DIR)
  set(ktune_hip_found TRUE)
else()
  set(ktune_hip_found FALSE)
endif()
ktune_resolve_backend(hip ktune_hip_found)
# Vulkan: the headers (the loader is opened at run time), glslc for the build-time SPIR-V and
# glslang's libraries for variants compiled at tune time.
find_package(Vulkan QUIET)
find_program(KTUNE_GLSLC glslc)
find_package(glslang CONFIG QUIET)
if(Vulkan_INCLUDE_DIRS AND KTUNE_GLSLC AND TARGET glslang::glslang AND TARGET glslang::SPIRV)
  set(ktune_vulkan_found TRUE)
else()
  set(ktune_vulkan_found FALSE)
endif()
ktune_resolve_backend(vulkan ktune_vulkan_found)

foreach(backend cuda hip vulkan)
  string(TOUPPER ${backend} upper)
  if(KTUNE_BUILD_${upper})
    list(APPEND KTUNE_BACKEND_TARGETS ktune_backend_${backend})
    string(APPEND KTUNE_BACKEND_SUMMARY " ${backend}")
  endif()
endforeach()
