# One static library per part (a folder of the tree), so the build says no to an upward
# include or call (docs/architecture.md, "Layering").
#
#   sg_part(FOLDER [DEPS part...] [LIBS lib...] [EXCLUDE file.c...])
#
# FOLDER is a path below the source root ("journal", "sensors/process"); the library is
# sg_<FOLDER with / as _> (sg_journal, sg_sensors_process). Its sources are FOLDER/*.c
# (not recursive: a sub-folder is a part of its own), found again at each build, so a new
# file needs no CMake edit. DEPS are the parts directly below it, which must be declared
# on an earlier line: the list reads bottom-up and cannot hold a cycle. The part links
# its DEPS (and so, transitively, everything below them) and LIBS.
#
# Its include root (build/layers/<name>) holds links to FOLDER and to every part below
# it, transitively (a header of a part below includes the headers of the parts below
# that), and nothing else: an include of a part above or beside it is "file not found".
# The root is made at configure time (sg_parts_done), fresh each time.
#
# What links against parts (the programs, tests, tools, benches, fuzz targets) uses
# sg_link_parts(TARGET SOURCE): it links the parts whose headers SOURCE includes.

set_property(GLOBAL PROPERTY SG_PARTS "")

function(sg_part folder)
  cmake_parse_arguments(P "" "" "DEPS;LIBS;EXCLUDE" ${ARGN})
  string(REPLACE "/" "_" name "${folder}")
  get_property(parts GLOBAL PROPERTY SG_PARTS)
  if(folder IN_LIST parts)
    message(FATAL_ERROR "sg_part(${folder}): declared twice")
  endif()
  set(closure "")
  set(dep_libs "")
  foreach(dep ${P_DEPS})
    if(NOT dep IN_LIST parts)
      message(FATAL_ERROR "sg_part(${folder}): ${dep} is not declared on an earlier line "
                          "(parts are listed bottom-up, each naming only parts below it)")
    endif()
    get_property(dc GLOBAL PROPERTY SG_PART_CLOSURE_${dep})
    list(APPEND closure ${dep} ${dc})
    string(REPLACE "/" "_" dn "${dep}")
    list(APPEND dep_libs sg_${dn})
  endforeach()
  list(REMOVE_DUPLICATES closure)

  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${folder}/*.c)
  foreach(x ${P_EXCLUDE})
    list(REMOVE_ITEM srcs ${CMAKE_SOURCE_DIR}/${folder}/${x})
  endforeach()
  set(root ${CMAKE_BINARY_DIR}/layers/${name})
  if(srcs)
    add_library(sg_${name} STATIC ${srcs})
    target_include_directories(sg_${name} PRIVATE ${root})
    target_link_libraries(sg_${name} PUBLIC ${dep_libs} ${P_LIBS})
  else()
    # Headers only: nothing to compile, the DEPS still pass on to what links it.
    add_library(sg_${name} INTERFACE)
    target_link_libraries(sg_${name} INTERFACE ${dep_libs} ${P_LIBS})
  endif()

  set_property(GLOBAL APPEND PROPERTY SG_PARTS ${folder})
  set_property(GLOBAL PROPERTY SG_PART_CLOSURE_${folder} ${closure})
  set_property(GLOBAL PROPERTY SG_PART_HASLIB_${folder} ${srcs})
endfunction()

# Links FOLDER of the source tree into root; when a part is nested inside FOLDER (a
# part "audit" with a part "audit/process"), links FOLDER's files one by one instead, so
# the nested part shows only where it is in the closure itself.
function(sg__link_folder root folder parts)
  set(nested FALSE)
  foreach(p ${parts})
    string(FIND "${p}" "${folder}/" at)
    if(at EQUAL 0)
      set(nested TRUE)
    endif()
  endforeach()
  get_filename_component(parent "${root}/${folder}" DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  if(NOT nested)
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${folder} ${root}/${folder} SYMBOLIC)
    return()
  endif()
  file(MAKE_DIRECTORY ${root}/${folder})
  file(GLOB files LIST_DIRECTORIES false CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${folder}/*)
  foreach(f ${files})
    get_filename_component(base ${f} NAME)
    file(CREATE_LINK ${f} ${root}/${folder}/${base} SYMBOLIC)
  endforeach()
endfunction()

# After the last sg_part: makes the include roots and writes build/layers/parts.txt, the
# part list the layering test (tests/layering/check_layers.sh) reads:
#   FOLDER <tab> library file or "-" <tab> the parts below it, space-separated
function(sg_parts_done)
  get_property(parts GLOBAL PROPERTY SG_PARTS)
  # Fresh roots: a link left from an earlier configure would let a removed DEP through.
  # (REMOVE_RECURSE removes the links, never what they point to.)
  file(REMOVE_RECURSE ${CMAKE_BINARY_DIR}/layers)
  set(table "")
  foreach(folder ${parts})
    string(REPLACE "/" "_" name "${folder}")
    get_property(closure GLOBAL PROPERTY SG_PART_CLOSURE_${folder})
    set(root ${CMAKE_BINARY_DIR}/layers/${name})
    file(MAKE_DIRECTORY ${root})
    foreach(f ${folder} ${closure})
      sg__link_folder(${root} ${f} "${parts}")
    endforeach()
    get_property(haslib GLOBAL PROPERTY SG_PART_HASLIB_${folder})
    if(haslib)
      set(file "$<TARGET_FILE:sg_${name}>")
    else()
      set(file "-")
    endif()
    string(REPLACE ";" " " below "${closure}")
    string(APPEND table "${folder}\t${file}\t${below}\n")
  endforeach()
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/layers/parts.txt CONTENT "${table}")
endfunction()

# The folders of the #include "dir/file" lines of src and, recursively, of the headers it
# includes that are not in a part (tests/unit/*.h, tests/tools/*.h).
function(sg__included_dirs src out)
  set(seen "")
  set(todo ${src})
  set(dirs "")
  while(todo)
    list(POP_FRONT todo f)
    if(f IN_LIST seen OR NOT EXISTS ${f})
      continue()
    endif()
    list(APPEND seen ${f})
    file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]+/[^\"/]+\"")
    foreach(l ${lines})
      string(REGEX REPLACE "^[^\"]*\"([^\"]+)/([^\"/]+)\".*$" "\\1" dir "${l}")
      string(REGEX REPLACE "^[^\"]*\"([^\"]+)\".*$" "\\1" path "${l}")
      list(APPEND dirs ${dir})
      if(dir MATCHES "^tests(/|$)")
        list(APPEND todo ${CMAKE_SOURCE_DIR}/${path})
      endif()
    endforeach()
  endwhile()
  list(REMOVE_DUPLICATES dirs)
  set(${out} ${dirs} PARENT_SCOPE)
endfunction()

# Links target (built from src) with the parts src includes, which bring the parts below
# them: a unit test of journal/ links sg_journal and sg_common and nothing else of ours;
# plus the libraries tests and tools call themselves (jansson to check JSON, OpenSSL,
# ldns, threads), all of which the parts link anyway.
# CMake re-reads src when it changes (CMAKE_CONFIGURE_DEPENDS), so a new include
# needs no CMake edit either.
function(sg_link_parts target src)
  get_property(parts GLOBAL PROPERTY SG_PARTS)
  sg__included_dirs(${src} dirs)
  set(libs "")
  foreach(d ${dirs})
    if(d IN_LIST parts)
      string(REPLACE "/" "_" name "${d}")
      list(APPEND libs sg_${name})
    endif()
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR})
  target_link_libraries(${target} PRIVATE ${libs} PkgConfig::JANSSON PkgConfig::OPENSSL
                        PkgConfig::LDNS Threads::Threads)
endfunction()
