# library_size.cmake -- cmake -DLIB=path -DLIMIT=bytes -P library_size.cmake: fails where the
# built library is larger than LIMIT (the house limit on libmgen.so, CONTRIBUTING.md: the default
# kernel set grows only within it), and prints its size either way.
if(NOT EXISTS "${LIB}")
  message(FATAL_ERROR "library_size: no library at '${LIB}'")
endif()
file(SIZE "${LIB}" size)
math(EXPR mb "${size} / 1000000")
if(size GREATER LIMIT)
  message(FATAL_ERROR "library_size: ${LIB} is ${size} bytes (${mb} MB), over the limit of ${LIMIT}")
endif()
message(STATUS "library_size: ${LIB} is ${size} bytes (${mb} MB), limit ${LIMIT}")
