# embed.cmake — writes a C file holding a text file's bytes, so the library carries its
# standard library without reading files at run time. Run as:
#   cmake -DIN=<file> -DOUT=<file.c> -DNAME=<symbol> -P embed.cmake
# The array gets a terminating NUL; NAME_size excludes it.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hexlen)
math(EXPR size "${hexlen} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# break the single line every 16 bytes for readable diffs of the generated file
set(row "")
foreach(i RANGE 15)
  string(APPEND row "0x[0-9a-f][0-9a-f],")
endforeach()
string(REGEX REPLACE "(${row})" "\\1\n    " bytes "${bytes}")
file(WRITE "${OUT}.tmp"
  "/* Generated from ${IN} by embed.cmake; do not edit. */\n"
  "#include <stddef.h>\n"
  "const unsigned char ${NAME}_bytes[] = {\n    ${bytes}0x00\n};\n"
  "const size_t ${NAME}_size = ${size};\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
