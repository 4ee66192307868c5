# A man page from a command's --help (cmake -P): -DBIN= -DNAME= -DVERSION= -DOUT=
execute_process(COMMAND ${BIN} --help OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(text "${out}${err}")
# roff: a backslash is \e, a line starting with . or ' must be escaped.
string(REPLACE "\\" "\\e" text "${text}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
file(WRITE ${OUT}
".TH ${NAME} 1 \"\" \"gtmesh ${VERSION}\" \"gtmesh\"\n"
".SH NAME\n${NAME} \\- gtmesh global traffic manager\n"
".SH SYNOPSIS\n.nf\n${text}.fi\n"
".SH SEE ALSO\n/usr/share/doc/gtmesh/deploy.md\n")
