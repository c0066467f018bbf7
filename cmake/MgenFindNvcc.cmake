# MgenFindNvcc.cmake -- included before check_language(CUDA): finds nvcc where CUDA's installers
# put it. They install into /usr/local/cuda/bin and leave PATH alone, and CMake looks for the CUDA
# compiler on PATH only, so without this the README's quick start configured a build without
# the library on a machine with the toolkit.
#
# Left alone: a CMAKE_CUDA_COMPILER given (-D, or found by an earlier configure), CUDACXX in the
# environment, and an nvcc on PATH (CMake's own search finds those). Otherwise the first nvcc of
# $CUDA_PATH/bin and /usr/local/cuda/bin becomes CMAKE_CUDA_COMPILER, with a STATUS line saying
# so. A cached NOTFOUND (check_language's, from a configure before the toolkit was installed) is
# looked for again. MGEN_NVCC_SEARCHED names the places looked in, for the messages of a build
# without CUDA.
if(CMAKE_CUDA_COMPILER MATCHES "NOTFOUND$" AND NOT DEFINED ENV{CUDACXX})
  unset(CMAKE_CUDA_COMPILER CACHE)
endif()
if(DEFINED CMAKE_CUDA_COMPILER)
  set(MGEN_NVCC_SEARCHED "CMAKE_CUDA_COMPILER=${CMAKE_CUDA_COMPILER}")
elseif(DEFINED ENV{CUDACXX})
  set(MGEN_NVCC_SEARCHED "CUDACXX=$ENV{CUDACXX}")
else()
  set(MGEN_NVCC_SEARCHED "PATH")
  # PATH only: check_language's search does not see CMake's system paths (/usr/local/bin).
  find_program(mgen_nvcc_on_path nvcc PATHS ENV PATH NO_DEFAULT_PATH NO_CACHE)
  if(NOT mgen_nvcc_on_path)
    set(mgen_nvcc_dirs "")
    if(DEFINED ENV{CUDA_PATH} AND NOT "$ENV{CUDA_PATH}" STREQUAL "")
      list(APPEND mgen_nvcc_dirs "$ENV{CUDA_PATH}/bin")
    endif()
    list(APPEND mgen_nvcc_dirs /usr/local/cuda/bin)
    list(JOIN mgen_nvcc_dirs ", " mgen_nvcc_dirs_text)
    string(APPEND MGEN_NVCC_SEARCHED ", ${mgen_nvcc_dirs_text}")
    find_program(mgen_nvcc nvcc PATHS ${mgen_nvcc_dirs} NO_DEFAULT_PATH NO_CACHE)
    if(mgen_nvcc)
      message(STATUS "marlin-gen: nvcc is not on PATH; using ${mgen_nvcc} "
                     "(-DCMAKE_CUDA_COMPILER=... picks another)")
      set(CMAKE_CUDA_COMPILER "${mgen_nvcc}" CACHE FILEPATH "CUDA compiler")
    endif()
  endif()
endif()
