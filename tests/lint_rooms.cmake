# Fails when the house outgrows its rooms or its layers bend (models/, algorithms/, sim/):
#  - a .c file over 1,000 lines, or a function over 100 (its opening { in column 0 to its
#    closing } in column 0, both counted);
#  - a README.md over 800 lines (the front page and every folder's manual; results/ holds
#    generated reproduction pages and is not checked);
#  - an include circle between modules (a module is X.c with X.h; A -> B when A.c or A.h
#    includes B.h), an include pointing upward (models/ -> algorithms/ or sim/, algorithms/
#    -> sim/), or sim/ naming an algorithm (a header algorithms/registry.c includes).
#    A header-only X_impl.h (state shared by X's files) is part of module X.
# ALLOW (tests/lint_rooms.allow) lists rooms still over their limit, each with the size it
# may not exceed: a listed room that grows fails, and so does one back within the limit
# that is still listed, so the list only shrinks.
cmake_minimum_required(VERSION 3.16)
set(MAX_FILE 1000)
set(MAX_FUNC 100)
set(MAX_README 800)

file(GLOB_RECURSE srcs RELATIVE ${SRC} ${SRC}/models/*.c ${SRC}/models/*.h ${SRC}/algorithms/*.c
     ${SRC}/algorithms/*.h ${SRC}/sim/*.c ${SRC}/sim/*.h)
list(SORT srcs)
set(bad "")

# the allowances: "PATH LINES" or "PATH:FUNCTION LINES"
set(allowed "")
if(EXISTS ${ALLOW})
  file(STRINGS ${ALLOW} allow_lines REGEX "^[^#]")
  foreach(a IN LISTS allow_lines)
    string(REGEX MATCH "^([^ ]+) +([0-9]+)$" m "${a}")
    if(NOT m)
      string(APPEND bad "${ALLOW}: malformed line '${a}' (PATH LINES or PATH:FUNCTION LINES)\n")
      continue()
    endif()
    string(MAKE_C_IDENTIFIER "${CMAKE_MATCH_1}" id)
    set(allow_${id} ${CMAKE_MATCH_2})
    list(APPEND allowed ${id})
  endforeach()
endif()
set(used "")

# check(WHAT SIZE LIMIT): WHAT over LIMIT fails unless allowed at least SIZE
macro(check what size limit)
  string(MAKE_C_IDENTIFIER "${what}" _id)
  if(DEFINED allow_${_id})
    list(APPEND used ${_id})
    if(${size} GREATER ${allow_${_id}})
      string(APPEND bad "${what}: ${size} lines, grew past its allowance of ${allow_${_id}}\n")
    elseif(NOT ${size} GREATER ${limit})
      string(APPEND bad "${what}: ${size} lines, within the limit of ${limit}: remove it from ${ALLOW}\n")
    endif()
  elseif(${size} GREATER ${limit})
    string(APPEND bad "${what}: ${size} lines, over the limit of ${limit}\n")
  endif()
endmacro()

# read_lines(FILE VAR): FILE's lines, empty ones kept, with the characters a CMake list
# treats specially (; [ ]) replaced, so that the list splits at newlines only.
function(read_lines file var)
  file(READ ${file} text)
  string(REPLACE "\\" "/" text "${text}")
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "[" "(" text "${text}")
  string(REPLACE "]" ")" text "${text}")
  string(REGEX REPLACE "\n$" "" text "${text}")
  string(REPLACE "\n" ";" text "${text}")
  set(${var} "${text}" PARENT_SCOPE)
endfunction()

# sizes: files and functions
foreach(f IN LISTS srcs)
  read_lines(${SRC}/${f} lines)
  list(LENGTH lines n)
  if(f MATCHES "\\.c$")
    check("${f}" ${n} ${MAX_FILE})
  endif()
  set(i 0)
  set(sig "")
  set(start 0)
  foreach(line IN LISTS lines)
    math(EXPR i "${i}+1")
    if(line MATCHES "^[A-Za-z_]" AND start EQUAL 0)
      set(sig "${line}") # a top-level line: the latest one starts the function's signature
    elseif(line MATCHES "^{")
      set(start ${i})
      string(REGEX MATCH "([A-Za-z_][A-Za-z0-9_]*)[ \t]*\\(" m "${sig}")
      set(fname "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^}" AND start GREATER 0)
      math(EXPR len "${i}-${start}+1")
      if(fname)
        check("${f}:${fname}" ${len} ${MAX_FUNC})
      endif()
      set(start 0)
    endif()
  endforeach()
endforeach()

# READMEs
file(GLOB_RECURSE readmes RELATIVE ${SRC} ${SRC}/README.md ${SRC}/models/*.md ${SRC}/algorithms/*.md
     ${SRC}/sim/*.md ${SRC}/platforms/*.md ${SRC}/tests/*.md)
foreach(f IN LISTS readmes)
  read_lines(${SRC}/${f} lines)
  list(LENGTH lines n)
  check("${f}" ${n} ${MAX_README})
endforeach()

foreach(id IN LISTS allowed)
  list(FIND used ${id} k)
  if(k EQUAL -1)
    string(APPEND bad "${ALLOW}: an allowance for a room that no longer exists (${id}): remove it\n")
  endif()
endforeach()

# layers and circles
file(STRINGS ${SRC}/algorithms/registry.c reg REGEX "^#include \"algorithms/")
set(algo_headers "")
foreach(line IN LISTS reg)
  string(REGEX REPLACE "^#include \"(.*)\".*" "\\1" h "${line}")
  if(NOT h STREQUAL "algorithms/registry.h")
    list(APPEND algo_headers ${h})
  endif()
endforeach()
set(modules "")
foreach(f IN LISTS srcs)
  string(REGEX REPLACE "\\.[ch]$" "" mod "${f}")
  string(REGEX REPLACE "_impl$" "" mod "${mod}") # X_impl.h: the private half of module X
  string(MAKE_C_IDENTIFIER "${mod}" mid)
  list(APPEND modules ${mod})
  file(STRINGS ${SRC}/${f} incs REGEX "^#include \"(models|algorithms|sim)/")
  foreach(line IN LISTS incs)
    string(REGEX REPLACE "^#include \"(.*)\".*" "\\1" h "${line}")
    string(REGEX REPLACE "\\.h$" "" to "${h}")
    string(REGEX REPLACE "_impl$" "" to "${to}")
    if(to STREQUAL mod)
      continue()
    endif()
    list(APPEND deps_${mid} ${to})
    if((f MATCHES "^models/" AND h MATCHES "^(algorithms|sim)/") OR (f MATCHES "^algorithms/" AND h MATCHES "^sim/"))
      string(APPEND bad "${f}: includes ${h}, a layer above it\n")
    endif()
    if(f MATCHES "^sim/" AND h IN_LIST algo_headers)
      string(APPEND bad "${f}: includes ${h}: sim/ reaches the algorithms only through the registry\n")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES modules)
foreach(mod IN LISTS modules) # a circle: a module reachable from itself
  string(MAKE_C_IDENTIFIER "${mod}" mid)
  set(seen "")
  set(queue ${deps_${mid}})
  while(queue)
    list(POP_FRONT queue next)
    if(next STREQUAL mod)
      string(APPEND bad "${mod}: in an include circle (it reaches itself; it includes ${deps_${mid}})\n")
      break()
    endif()
    if(NOT next IN_LIST seen)
      list(APPEND seen ${next})
      string(MAKE_C_IDENTIFIER "${next}" nid)
      list(APPEND queue ${deps_${nid}})
    endif()
  endwhile()
endforeach()

if(bad)
  message(FATAL_ERROR "rooms lint:\n${bad}")
endif()
list(LENGTH srcs n_files)
list(LENGTH modules n_mod)
message(STATUS "rooms lint: clean (${n_files} files, ${n_mod} modules)")
