# Kernel families: the Eigen-heavy compute code (core, vocoder, acoustic) is one internal shared library,
# libkokoro_compute.so.0, built once per x86-64 level. glibc's loader (2.33+) picks the best variant for the
# CPU from the glibc-hwcaps/ subdirectories beside the baseline one (docs/architecture.md, "Kernel families").
#
#   native build (default):   one variant, -march=native, in lib/
#   KOKORO_PORTABLE=ON:       x86-64 in lib/, x86-64-v3 (AVX2+FMA) and x86-64-v4 (AVX-512; AVX512-BF16 on
#                             the bf16 kernel files only, which run after a CPU check) in lib/glibc-hwcaps/<level>/
#
# Every variant also sits alone in lib/kernels/<level>/ so that tests can force one with LD_LIBRARY_PATH
# (and KOKORO_KERNELS=<level>, which the test binaries check against kokoro::kernel_family()).
# KOKORO_KERNEL_TEST_VARIANTS adds variants to a native build for those forced tests only (not dispatched).

# Same Eigen memory layout in every variant and in the code that calls them (engine, apps, tests): Eigen's
# default alignment follows the vector width (16, 32 or 64 bytes), and with 16 it frees with free() what a
# 64-byte variant would free with its own aligned_free: a Tensor allocated on one side and freed on the other
# would corrupt the heap. 64 everywhere is what the native AVX-512 build already uses.
add_compile_definitions(EIGEN_MAX_ALIGN_BYTES=64 EIGEN_MAX_STATIC_ALIGN_BYTES=64)

if(KOKORO_PORTABLE)
  set(KOKORO_KERNEL_VARIANTS x86-64 x86-64-v3 x86-64-v4)
  set(KOKORO_DEFAULT_KERNEL_VARIANT x86-64)
else()
  set(KOKORO_KERNEL_VARIANTS native ${KOKORO_KERNEL_TEST_VARIANTS})
  set(KOKORO_DEFAULT_KERNEL_VARIANT native)
endif()
list(REMOVE_DUPLICATES KOKORO_KERNEL_VARIANTS)

# -mtune of the portable variants: generic (what a package should be); a CPU name trades that for the same
# instruction scheduling (and FMA contraction choices) as a -march=native build on that CPU.
set(KOKORO_PORTABLE_TUNE "generic" CACHE STRING "-mtune of the portable build's compute variants")

# Appended to every variant's flags. The fuzz trees (scripts/fuzz-frontend.sh) set -O0: the frontend calls
# only the asset lookup of core/, and the optimised kernels were half of that tree's build.
set(KOKORO_COMPUTE_EXTRA_FLAGS "" CACHE STRING "Extra compile options of the compute library")

# Compiler flags of a variant, and whether its bf16 kernel files get AVX512-BF16.
function(kokoro_variant_flags variant out_flags out_bf16)
  set(bf16 OFF)
  if(variant STREQUAL "native")
    set(flags -march=native)
  elseif(variant STREQUAL "x86-64")
    set(flags -march=x86-64 -mtune=${KOKORO_PORTABLE_TUNE})
  elseif(variant MATCHES "^x86-64-v[234]$")
    set(flags -march=${variant} -mtune=${KOKORO_PORTABLE_TUNE})
    if(variant STREQUAL "x86-64-v4")
      set(bf16 ON)
    endif()
  else()
    message(FATAL_ERROR "Unknown kernel variant '${variant}' (native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4)")
  endif()
  set(${out_flags} ${flags} PARENT_SCOPE)
  set(${out_bf16} ${bf16} PARENT_SCOPE)
endfunction()

# One part of the compute library (core, vocoder or acoustic): an OBJECT library per variant
# (kokoro_<part>_<variant>, compiled with its flags) and the INTERFACE target kokoro_<part> the rest of the
# tree links, which brings the default variant's shared library and the part's usage requirements.
#   kokoro_compute_part(core SOURCES a.cpp ... LINK <usage requirements> PRIVATE_LINK <link-only libraries>)
# Source-file properties set in the part's directory apply to every variant (they are directory-scoped).
function(kokoro_compute_part part)
  cmake_parse_arguments(P "" "" "SOURCES;LINK;PRIVATE_LINK;BF16_SOURCES" ${ARGN})
  add_library(kokoro_${part} INTERFACE)
  target_link_libraries(kokoro_${part} INTERFACE kokoro_compute ${P_LINK})
  foreach(variant ${KOKORO_KERNEL_VARIANTS})
    set(t kokoro_${part}_${variant})
    add_library(${t} OBJECT ${P_SOURCES})
    kokoro_variant_flags(${variant} flags bf16)
    target_compile_options(${t} PRIVATE ${flags} ${KOKORO_COMPUTE_EXTRA_FLAGS})
    target_compile_definitions(${t} PRIVATE KOKORO_KERNEL_VARIANT="${variant}")
    target_link_libraries(${t} PUBLIC ${P_LINK} PRIVATE ${P_PRIVATE_LINK})
    if(bf16)
      target_compile_definitions(${t} PRIVATE KOKORO_BF16_KERNELS)  # for kokoro::kernel_family()
    endif()
    set_target_properties(${t} PROPERTIES KOKORO_BF16_KERNELS ${bf16} KOKORO_KERNEL_VARIANT ${variant})
  endforeach()
  # The bf16 and int8 kernels (AVX512-BF16 and AVX512-VNNI intrinsics) get -mavx512bf16 -mavx512vnni in the
  # variants that have them (every CPU with BF16 has VNNI); they only run once bf16_supported() or
  # int8_supported() has seen the CPU report the extension.
  if(P_BF16_SOURCES)
    set_source_files_properties(${P_BF16_SOURCES} PROPERTIES COMPILE_OPTIONS
      "$<$<BOOL:$<TARGET_PROPERTY:KOKORO_BF16_KERNELS>>:-mavx512bf16;-mavx512vnni>")
  endif()
  set_property(GLOBAL APPEND PROPERTY KOKORO_COMPUTE_PARTS ${part})
  set_property(GLOBAL APPEND PROPERTY KOKORO_COMPUTE_PRIVATE_LINK ${P_PRIVATE_LINK})
endfunction()

# After the parts: the shared library of each variant. The default one is the target kokoro_compute (what the
# tree links, in lib/); a portable build's others go to lib/glibc-hwcaps/<level>/, a native build's test
# variants only to lib/kernels/<level>/ (never dispatched: the native one must win on this CPU).
function(kokoro_compute_libraries)
  get_property(parts GLOBAL PROPERTY KOKORO_COMPUTE_PARTS)
  get_property(private_link GLOBAL PROPERTY KOKORO_COMPUTE_PRIVATE_LINK)
  set(lib_dir ${CMAKE_BINARY_DIR}/lib)
  set(KOKORO_COMPUTE_VARIANT_TARGETS "")
  foreach(variant ${KOKORO_KERNEL_VARIANTS})
    if(variant STREQUAL KOKORO_DEFAULT_KERNEL_VARIANT)
      set(t kokoro_compute)
      set(out ${lib_dir})
    else()
      set(t kokoro_compute_${variant})
      if(KOKORO_PORTABLE)
        set(out ${lib_dir}/glibc-hwcaps/${variant})
      else()
        set(out ${lib_dir}/kernels/${variant})
      endif()
      list(APPEND KOKORO_COMPUTE_VARIANT_TARGETS ${t})
    endif()
    set(objects)
    foreach(part ${parts})
      list(APPEND objects kokoro_${part}_${variant})
    endforeach()
    add_library(${t} SHARED)
    # Linking the object libraries adds their objects and their usage requirements (Eigen, spdlog, ...).
    target_link_libraries(${t} PRIVATE ${objects} ${private_link})
    set_target_properties(${t} PROPERTIES OUTPUT_NAME kokoro_compute SOVERSION 0 LIBRARY_OUTPUT_DIRECTORY ${out})
    # Bind the library's own definitions (the Eigen templates instantiated for this variant among them): a
    # caller's copy compiled for another level must never be picked for the library's inner calls.
    target_link_options(${t} PRIVATE -Wl,-Bsymbolic-functions)
    if(NOT KOKORO_SANITIZE)  # clang links no sanitizer runtime into shared libraries: their symbols stay undefined
      target_link_options(${t} PRIVATE -Wl,--no-undefined)
    endif()
    # Every variant alone in lib/kernels/<variant>/ (the default one by symlink) for the forced-family tests.
    if(NOT out STREQUAL ${lib_dir}/kernels/${variant})
      add_custom_command(TARGET ${t} POST_BUILD
        COMMAND ${CMAKE_COMMAND} -E make_directory ${lib_dir}/kernels/${variant}
        COMMAND ${CMAKE_COMMAND} -E create_symlink $<TARGET_FILE:${t}> ${lib_dir}/kernels/${variant}/libkokoro_compute.so.0
        VERBATIM)
    endif()
  endforeach()
  # Whatever links the default library gets the others built beside it.
  if(KOKORO_COMPUTE_VARIANT_TARGETS)
    add_dependencies(kokoro_compute ${KOKORO_COMPUTE_VARIANT_TARGETS})
  endif()
  set(KOKORO_COMPUTE_VARIANT_TARGETS ${KOKORO_COMPUTE_VARIANT_TARGETS} PARENT_SCOPE)
endfunction()
