# MgenFamilies.cmake -- the kernel families of a templates folder, found rather than listed:
# every <family>/spec.lua, and the CUDA architectures its spec names. Used by the top
# CMakeLists.txt and by the family-seam test (tests/CMakeLists.txt).

# mgen_families(TEMPLATES_DIR OUT_VAR): the families (folder names), sorted.
function(mgen_families dir out)
  file(GLOB specs RELATIVE ${dir} CONFIGURE_DEPENDS ${dir}/*/spec.lua)
  string(REPLACE "/spec.lua" "" families "${specs}")
  list(SORT families)
  set(${out} "${families}" PARENT_SCOPE)
endfunction()

# mgen_family_archs(SPEC DEFAULT OUT_VAR): the CUDA architectures spec file SPEC names on a line
# `M.cuda_architectures = "90a"`, else DEFAULT.
function(mgen_family_archs spec default out)
  file(STRINGS ${spec} line REGEX "^M\\.cuda_architectures = \"[^\"]*\"")
  if(line)
    string(REGEX REPLACE "^M\\.cuda_architectures = \"([^\"]*)\".*" "\\1" archs "${line}")
  else()
    set(archs "${default}")
  endif()
  set(${out} "${archs}" PARENT_SCOPE)
endfunction()
