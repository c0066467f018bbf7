# MgenKernelFilter.cmake -- MGEN_KERNELS must select at least one kernel: a typo would otherwise
# build a library with no kernels that fails only at run time (MGEN_ERR_NO_KERNEL).
#
# The names come from a manifest.tsv (the committed snapshot's: marlin-gen's default set, kept
# current by the gen.current test), because at configure time marlin-gen is not built yet; the
# generator itself also refuses a filter that matches nothing, at build time.
#
#   include(MgenKernelFilter)  mgen_check_kernel_filter(GLOBS MANIFEST)  -> FATAL_ERROR or count
#   cmake -DGLOBS=... -DMANIFEST=... -P cmake/MgenKernelFilter.cmake      (the test's entry)

# fnmatch glob (*, ?, [set], [!set]) -> an anchored CMake regex.
function(mgen_glob_to_regex glob out)
  set(rx "")
  string(LENGTH "${glob}" len)
  set(in_set OFF)
  set(i 0)
  while(i LESS len)
    string(SUBSTRING "${glob}" ${i} 1 ch)
    if(in_set)
      if(ch STREQUAL "]")
        set(in_set OFF)
      endif()
      string(APPEND rx "${ch}")
    elseif(ch STREQUAL "*")
      string(APPEND rx ".*")
    elseif(ch STREQUAL "?")
      string(APPEND rx ".")
    elseif(ch STREQUAL "[")
      set(in_set ON)
      string(APPEND rx "[")
      math(EXPR next "${i} + 1")
      string(SUBSTRING "${glob}" ${next} 1 bang)
      if(bang STREQUAL "!")
        string(APPEND rx "^")
        set(i ${next})
      endif()
    elseif(ch MATCHES "[][.+^$()|\\\\]")
      string(APPEND rx "\\${ch}")
    else()
      string(APPEND rx "${ch}")
    endif()
    math(EXPR i "${i} + 1")
  endwhile()
  set(${out} "^${rx}$" PARENT_SCOPE)
endfunction()

# Fails the configuration if no kernel name of `manifest` matches one of the comma-separated
# `globs`; otherwise sets MGEN_KERNELS_SELECTED to the number selected.
function(mgen_check_kernel_filter globs manifest)
  if(NOT EXISTS "${manifest}")
    message(FATAL_ERROR "MGEN_KERNELS: no ${manifest} to check the filter against")
  endif()
  file(STRINGS "${manifest}" rows REGEX "^mgen_")
  list(LENGTH rows total)
  string(REPLACE "," ";" glob_list "${globs}")
  set(selected 0)
  foreach(row IN LISTS rows)
    string(REGEX REPLACE "\t.*" "" name "${row}")
    foreach(glob IN LISTS glob_list)
      mgen_glob_to_regex("${glob}" rx)
      if(name MATCHES "${rx}")
        math(EXPR selected "${selected} + 1")
        break()
      endif()
    endforeach()
  endforeach()
  if(selected EQUAL 0)
    message(FATAL_ERROR "MGEN_KERNELS='${globs}' matches none of the ${total} kernels of "
            "${manifest} (names look like mgen_sm80_f16_u4b8_g128_64x256x128_s2_w8_sw3x4x4; "
            "`marlin-gen --list` prints them all; if you added kernels to the templates, "
            "refresh the snapshot first: cmake --build <dir> --target mgen_snapshot)")
  endif()
  set(MGEN_KERNELS_SELECTED ${selected} PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  mgen_check_kernel_filter("${GLOBS}" "${MANIFEST}")
  message(STATUS "MGEN_KERNELS='${GLOBS}' selects ${MGEN_KERNELS_SELECTED} kernels")
endif()
