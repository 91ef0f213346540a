/* test_errors.c — the exact text and position of diagnostics. Each expected text was written
 * by hand from the message catalogue in the checker and the position rules of
 * docs/language.md ("Diagnostics": 1-based lines and columns, a tab is one column and is
 * repeated in the caret line). Sources are compiled as "t.pk" with the standard library. */
#include "lang_test.h"

typedef struct err_case {
    const char *name;
    const char *src;
    const char *want; /* the complete rendered diagnostics */
    int ok;           /* expected pk_result_ok() (warnings only) */
} err_case;

static const err_case cases[] = {
    {"syntax: missing semicolon",
     "kernel k(f32 x) {\n"
     "    f32 y = x\n"
     "    f32 z = y;\n"
     "}\n",
     "t.pk:2:14: error: expected ';' at the end of the line, found 'f32' on line 3\n"
     "    f32 y = x\n"
     "             ^\n", 0},
    {"syntax: two errors, recovery at statement level",
     "kernel k(f32 x) {\n"
     "    f32 a = (x;\n"
     "    f32 b = x +;\n"
     "}\n",
     "t.pk:2:15: error: expected ')', found ';'\n"
     "    f32 a = (x;\n"
     "              ^\n"
     "t.pk:3:16: error: expected an expression, found ';'\n"
     "    f32 b = x +;\n"
     "               ^\n", 0},
    {"syntax: increment operator",
     "kernel k(i32 n) {\n"
     "    i32 i = 0;\n"
     "    i++;\n"
     "}\n",
     "t.pk:3:6: error: '++' is not supported; write 'x += 1'\n"
     "    i++;\n"
     "     ^\n", 0},
    {"syntax: C-style for loop",
     "kernel k(i32 n) {\n"
     "    for (i32 i = 0; i < n; i += 1) {}\n"
     "}\n",
     "t.pk:2:10: error: C-style for loops are not supported; write 'for (i in a .. b)'\n"
     "    for (i32 i = 0; i < n; i += 1) {}\n"
     "         ^\n", 0},
    {"syntax: missing initializer",
     "kernel k(i32 n) {\n"
     "    f32 x;\n"
     "}\n",
     "t.pk:2:9: error: variable 'x' needs an initializer\n"
     "    f32 x;\n"
     "        ^\n", 0},
    {"lexer: unterminated comment",
     "kernel k() {}\n"
     "  /* never closed\n",
     "t.pk:2:3: error: unterminated comment\n"
     "  /* never closed\n"
     "  ^\n", 0},
    {"lexer: stray character, then the syntax error it leaves",
     "kernel k() {\n"
     "    i32 x = 1 @ 2;\n"
     "}\n",
     "t.pk:2:15: error: unexpected character '@'\n"
     "    i32 x = 1 @ 2;\n"
     "              ^\n"
     "t.pk:2:17: error: expected ';', found '2'\n"
     "    i32 x = 1 @ 2;\n"
     "                ^\n", 0},
    {"name: unknown name",
     "kernel k(field<f32> q) {\n"
     "    for (I in q) q[I] = qq[I];\n"
     "}\n",
     "t.pk:2:25: error: unknown name 'qq'\n"
     "    for (I in q) q[I] = qq[I];\n"
     "                        ^\n", 0},
    {"name: tabs in the source line are kept in the caret line",
     "kernel k() {\n"
     "\tf32 y = \tzz;\n"
     "}\n",
     "t.pk:2:11: error: unknown name 'zz'\n"
     "\tf32 y = \tzz;\n"
     "\t        \t^\n", 0},
    {"name: a UTF-8 character in a comment is one column",
     "kernel k() {\n"
     "    f32 y = /* \xc3\xa9 */ zz;\n"
     "}\n",
     "t.pk:2:21: error: unknown name 'zz'\n"
     "    f32 y = /* \xc3\xa9 */ zz;\n"
     "                    ^\n", 0},
    {"name: unknown function",
     "func f32 f(f32 x) { return fooo(x); }\n",
     "t.pk:1:28: error: unknown function 'fooo'\n"
     "func f32 f(f32 x) { return fooo(x); }\n"
     "                           ^\n", 0},
    {"name: redeclaration in one scope, with a note",
     "kernel k() {\n"
     "    f32 a = 1.0;\n"
     "    f32 a = 2.0;\n"
     "}\n",
     "t.pk:3:9: error: 'a' is already declared as a variable at line 2\n"
     "    f32 a = 2.0;\n"
     "        ^\n"
     "t.pk:2:9: note: 'a' is declared here\n"
     "    f32 a = 1.0;\n"
     "        ^\n", 0},
    {"name: clash with the standard library names both places",
     "func f32 sample(field<f32> f, vec3 p) { return 0.0; }\n",
     "t.pk:1:10: error: 'sample' is already defined by the standard library at stdlib.pk:7:10\n"
     "func f32 sample(field<f32> f, vec3 p) { return 0.0; }\n"
     "         ^\n"
     "stdlib.pk:7:10: note: 'sample' is declared here\n"
     "func f32 sample(field<f32> f, vec3 p) {\n"
     "         ^\n", 0},
    {"name: builtin names are reserved",
     "kernel k() {\n"
     "    f32 min = 1.0;\n"
     "}\n",
     "t.pk:2:9: error: 'min' is a builtin function and cannot be redeclared\n"
     "    f32 min = 1.0;\n"
     "        ^\n", 0},
    {"type: the caret is at the start of the expression converted, not at its '[' or '+'",
     "kernel k(field<f32> q, field<vec3> v) {\n"
     "    for (I in q) {\n"
     "        q[I] = v[I];\n"
     "        f32 a = v[I] + v[I];\n"
     "    }\n"
     "}\n",
     "t.pk:3:16: error: cannot convert vec3 to f32 in the assignment\n"
     "        q[I] = v[I];\n"
     "               ^\n"
     "t.pk:4:17: error: cannot convert vec3 to f32 in the initializer of 'a'\n"
     "        f32 a = v[I] + v[I];\n"
     "                ^\n", 0},
    {"type: f64 to f32 needs a cast",
     "kernel k(field<f32> q, f64 s) {\n"
     "    for (I in q) q[I] = s;\n"
     "}\n",
     "t.pk:2:25: error: cannot convert f64 to f32 implicitly in the assignment; write f32(...)\n"
     "    for (I in q) q[I] = s;\n"
     "                        ^\n", 0},
    {"type: mismatched vector operands",
     "func vec3 f(vec3 a, ivec3 b) { return a + b; }\n",
     "t.pk:1:41: error: invalid operands to '+': vec3 and ivec3\n"
     "func vec3 f(vec3 a, ivec3 b) { return a + b; }\n"
     "                                        ^\n", 0},
    {"type: condition must be bool",
     "kernel k(i32 n) {\n"
     "    if (n) {}\n"
     "}\n",
     "t.pk:2:9: error: the condition of 'if' must be bool, found i32\n"
     "    if (n) {}\n"
     "        ^\n", 0},
    {"type: negative literal into u32",
     "kernel k() {\n"
     "    u32 x = -1;\n"
     "}\n",
     "t.pk:2:13: error: integer literal -1 does not fit in u32\n"
     "    u32 x = -1;\n"
     "            ^\n", 0},
    {"type: float literal past f32 (it would be inf)",
     "kernel k() {\n"
     "    f32 x = 1e39;\n"
     "}\n",
     "t.pk:2:13: error: float literal 1e+39 does not fit in f32 (at most about 3.4e38)\n"
     "    f32 x = 1e39;\n"
     "            ^\n", 0},
    {"type: float literal past f64",
     "kernel k() {\n"
     "    f64 x = 1e99999;\n"
     "}\n",
     "t.pk:2:13: error: float literal '1e99999' is too large (past f64's range)\n"
     "    f64 x = 1e99999;\n"
     "            ^\n", 0},
    {"type: swizzle beyond the vector",
     "func f32 f(vec2 v) { return v.z; }\n",
     "t.pk:1:31: error: vec2 has no component 'z'\n"
     "func f32 f(vec2 v) { return v.z; }\n"
     "                              ^\n", 0},
    {"type: missing return",
     "func f32 f(f32 x) {\n"
     "    if (x > 0.0) return x;\n"
     "}\n",
     "t.pk:1:10: error: function 'f' returns a value, so every path through its body must reach a 'return' (one inside a loop does not count: add a return after the loop)\n"
     "func f32 f(f32 x) {\n"
     "         ^\n", 0},
    {"arity: builtin",
     "func f32 f(f32 x) { return clamp(x, 0.0); }\n",
     "t.pk:1:28: error: wrong number of arguments to 'clamp': expected 3, found 2\n"
     "func f32 f(f32 x) { return clamp(x, 0.0); }\n"
     "                           ^\n", 0},
    {"arity: user function",
     "func f32 sq(f32 x) { return x * x; }\n"
     "kernel k(field<f32> q) {\n"
     "    for (I in q) q[I] = sq(q[I], 2.0);\n"
     "}\n",
     "t.pk:3:25: error: wrong number of arguments to 'sq': expected 1, found 2\n"
     "    for (I in q) q[I] = sq(q[I], 2.0);\n"
     "                        ^\n", 0},
    {"arity: constructor components",
     "kernel k() {\n"
     "    vec3 v = vec3(1.0, 2.0);\n"
     "}\n",
     "t.pk:2:14: error: vec3 needs 3 components, found 2\n"
     "    vec3 v = vec3(1.0, 2.0);\n"
     "             ^\n", 0},
    {"overloads: no candidate matches, candidates listed",
     "kernel k(field<f32> q) {\n"
     "    for (I in q) q[I] = sample(q, 1.0);\n"
     "}\n",
     "t.pk:2:25: error: no matching function for call to 'sample(field<f32, 3>, float literal)'\n"
     "    for (I in q) q[I] = sample(q, 1.0);\n"
     "                        ^\n"
     "stdlib.pk:7:10: note: candidate: sample(field<f32, 3>, vec3)\n"
     "func f32 sample(field<f32> f, vec3 p) {\n"
     "         ^\n"
     "stdlib.pk:19:11: note: candidate: sample(field<vec3, 3>, vec3)\n"
     "func vec3 sample(field<vec3> f, vec3 p) {\n"
     "          ^\n", 0},
    {"field: assigning a field as a value",
     "kernel k(field<f32> p, field<f32> q) {\n"
     "    q = p;\n"
     "}\n",
     "t.pk:2:5: error: cannot assign to field 'q'; assign to its elements: q[...] = ...\n"
     "    q = p;\n"
     "    ^\n"
     "t.pk:2:9: error: field 'p' cannot be used as a value; index it: p[...]\n"
     "    q = p;\n"
     "        ^\n", 0},
    {"field: 0-D field indexed with an index",
     "kernel k(field<f32> q, field<f32, 0> total) {\n"
     "    for (I in q) total[I] += q[I];\n"
     "}\n",
     "t.pk:2:24: error: 'total' is a 0-D field; access it as total[]\n"
     "    for (I in q) total[I] += q[I];\n"
     "                       ^\n", 0},
    {"assign: a scalar into a vec3 field element says to construct the vector",
     "kernel k(field<vec3> v) {\n"
     "    for (I in v) { v[I] = 0.0; }\n"
     "}\n",
     "t.pk:2:27: error: cannot convert a float literal to vec3 in the assignment: write vec3(...) around "
     "it (a scalar fills a vector only in arithmetic and op=)\n"
     "    for (I in v) { v[I] = 0.0; }\n"
     "                          ^\n", 0},
    {"field: 3-D field indexed with an i32",
     "kernel k(field<f32> q, i32 i) {\n"
     "    q[i] = 1.0;\n"
     "}\n",
     "t.pk:2:7: error: cannot convert i32 to ivec3 in the index of 'q'\n"
     "    q[i] = 1.0;\n"
     "      ^\n", 0},
    {"field: fields are not local variables",
     "kernel k() {\n"
     "    field<f32> g = 1.0;\n"
     "}\n",
     "t.pk:2:5: error: fields cannot be local variables; pass them as parameters\n"
     "    field<f32> g = 1.0;\n"
     "    ^\n", 0},
    {"struct-for: target is not a field",
     "kernel k(field<f32> q, f32 x) {\n"
     "    for (I in x) q[I] = 0.0;\n"
     "}\n",
     "t.pk:2:15: error: a struct-for iterates over a field; found f32 (for a range write 'a .. b')\n"
     "    for (I in x) q[I] = 0.0;\n"
     "              ^\n", 0},
    {"struct-for: not an outermost loop",
     "kernel k(field<f32> q) {\n"
     "    if (true) {\n"
     "        for (I in q) q[I] = 1.0;\n"
     "    }\n"
     "}\n",
     "t.pk:3:9: error: a struct-for 'for (I in f)' must be an outermost loop of a kernel\n"
     "        for (I in q) q[I] = 1.0;\n"
     "        ^\n", 0},
    {"struct-for: over a 0-D field",
     "kernel k(field<f32, 0> s) {\n"
     "    for (I in s) {}\n"
     "}\n",
     "t.pk:2:15: error: cannot iterate over 's': it is a 0-D field\n"
     "    for (I in s) {}\n"
     "              ^\n", 0},
    {"parallel: break leaves a parallel loop",
     "kernel k(field<f32> q) {\n"
     "    for (I in q) {\n"
     "        if (q[I] > 1.0) break;\n"
     "    }\n"
     "}\n",
     "t.pk:3:25: error: 'break' cannot leave a parallel loop; use 'continue' to skip an iteration\n"
     "        if (q[I] > 1.0) break;\n"
     "                        ^\n", 0},
    {"parallel: assigning a variable declared outside the loop",
     "kernel k(field<f32> q) {\n"
     "    f32 sum = 0.0;\n"
     "    for (I in q) sum += q[I];\n"
     "}\n",
     "t.pk:3:18: error: cannot assign to 'sum' inside a parallel loop: it is declared outside the "
     "loop (use a 0-D field for reductions)\n"
     "    for (I in q) sum += q[I];\n"
     "                 ^\n", 0},
    {"static loop: bounds must be constants",
     "kernel k(i32 n) {\n"
     "    for (static i in 0 .. n) {}\n"
     "}\n",
     "t.pk:2:5: error: bounds of a static loop must be constants\n"
     "    for (static i in 0 .. n) {}\n"
     "    ^\n", 0},
    {"recursion: direct",
     "func i32 f(i32 n) {\n"
     "    return n <= 1 ? 1 : n * f(n - 1);\n"
     "}\n",
     "t.pk:2:29: error: function 'f' calls itself; recursion is not allowed (functions are inlined)\n"
     "    return n <= 1 ? 1 : n * f(n - 1);\n"
     "                            ^\n", 0},
    {"recursion: through an overload of itself, told apart by parameter types",
     "func i32 f(i32 x) { return f(f32(x)); }\n"
     "func i32 f(f32 x) { return f(i32(x)); }\n",
     "t.pk:2:28: error: recursive call 'f(i32)' -> 'f(f32)' -> 'f(i32)'; recursion is not allowed (functions are inlined)\n"
     "func i32 f(f32 x) { return f(i32(x)); }\n"
     "                           ^\n", 0},
    {"recursion: through another function",
     "func f32 g(f32 a) { return h(a); }\n"
     "func f32 h(f32 a) { return g(a) + 1.0; }\n",
     "t.pk:2:28: error: recursive call 'g' -> 'h' -> 'g'; recursion is not allowed (functions are inlined)\n"
     "func f32 h(f32 a) { return g(a) + 1.0; }\n"
     "                           ^\n", 0},
    {"calls: a kernel cannot be called",
     "kernel a() {}\n"
     "kernel b() { a(); }\n",
     "t.pk:2:14: error: kernel 'a' cannot be called; only functions can\n"
     "kernel b() { a(); }\n"
     "             ^\n", 0},
    {"statements: return in a kernel",
     "kernel k() { return; }\n",
     "t.pk:1:14: error: 'return' is not allowed in a kernel\n"
     "kernel k() { return; }\n"
     "             ^\n", 0},
    {"statements: break outside a loop",
     "func f() { break; }\n",
     "t.pk:1:12: error: 'break' outside of a loop\n"
     "func f() { break; }\n"
     "           ^\n", 0},
    {"statements: expression without effect",
     "kernel k(f32 x) { x + 1.0; }\n",
     "t.pk:1:21: error: this expression has no effect\n"
     "kernel k(f32 x) { x + 1.0; }\n"
     "                    ^\n", 0},
    {"constants: not constant",
     "kernel k() {}\n"
     "func f32 one() { return 1.0; }\n"
     "const f32 C = one();\n",
     "t.pk:3:15: error: the initializer of constant 'C' is not a constant expression\n"
     "const f32 C = one();\n"
     "              ^\n", 0},
    {"warning: a constant NaN (an infinite one is an error)",
     "kernel k(field<f32> q) {\n"
     "    for (I in q) q[I] = f32(i32(0.0 / 0.0));\n"
     "}\n",
     "t.pk:2:33: warning: the constant expression's value is NaN (0/0, inf - inf or the like)\n"
     "    for (I in q) q[I] = f32(i32(0.0 / 0.0));\n"
     "                                ^\n",
     1},
    {"warning: unused variable (the program is still valid)",
     "kernel k(field<f32> q) {\n"
     "    f32 unused = 1.0;\n"
     "    for (I in q) q[I] = 0.0;\n"
     "}\n",
     "t.pk:2:9: warning: unused variable 'unused'\n"
     "    f32 unused = 1.0;\n"
     "        ^\n",
     1},
    /* Characters pasted from documents: each named, with what to type, one error per slip
     * (the name stays one name, the minus sign reads as '-'); it was "non-ASCII character
     * outside a comment" with no character named and five errors for the name alone. */
    {"lexer: non-ASCII letter in a name, no-break space, minus sign",
     "func f32 f(f32 x) {\n"
     "    f32 d\xc3\xa9nsit\xc3\xa9 = x;\n"
     "    f32 y\xc2\xa0= x \xe2\x88\x92 1.0;\n"
     "    return y;\n"
     "}\n",
     "t.pk:2:10: error: non-ASCII character U+00E9 '\xc3\xa9' in the name 'd\xc3\xa9nsit\xc3\xa9': names are ASCII letters, digits and '_'\n"
     "    f32 d\xc3\xa9nsit\xc3\xa9 = x;\n"
     "         ^\n"
     "t.pk:3:10: error: non-ASCII character U+00A0 outside a comment (a no-break space: type a plain space)\n"
     "    f32 y\xc2\xa0= x \xe2\x88\x92 1.0;\n"
     "         ^\n"
     "t.pk:3:15: error: non-ASCII character U+2212 '\xe2\x88\x92' outside a comment (a minus sign: type '-')\n"
     "    f32 y\xc2\xa0= x \xe2\x88\x92 1.0;\n"
     "              ^\n", 0},
    /* a local named like the kernel: one error, and its uses mean the local (they said "'k'
     * is a kernel; call it with 'k(...)'", and kernels cannot be called) */
    {"scope: a local named like its kernel",
     "kernel k(field<f32> q) {\n"
     "    f32 k = 1.0;\n"
     "    q[0, 0, 0] = k;\n"
     "}\n",
     "t.pk:2:9: error: 'k' is already declared as a kernel at line 1\n"
     "    f32 k = 1.0;\n"
     "        ^\n"
     "t.pk:1:8: note: 'k' is declared here\n"
     "kernel k(field<f32> q) {\n"
     "       ^\n", 0},
    {"type: a folded value that does not fit is not called a literal",
     "func i32 f() {\n"
     "    i32 a = 1 << 40;\n"
     "    return a;\n"
     "}\n",
     "t.pk:2:15: error: the constant expression's value 1099511627776 does not fit in i32\n"
     "    i32 a = 1 << 40;\n"
     "              ^\n", 0},
    /* old Mac line ends: the comment ends at its line (it ran to the end of the file, and
     * every error was on line 1) */
    {"lexer: lines ended by a CR alone",
     "func f32 f(f32 x) {\r"
     "    // a comment\r"
     "    f32 y = x\r"
     "    return y;\r"
     "}\r",
     "t.pk:3:14: error: expected ';' at the end of the line, found 'return' on line 4\n"
     "    f32 y = x\n"
     "             ^\n", 0},
    {"type: i32 and u32 operands say which cast to write",
     "func bool f(i32 m, u32 n) {\n"
     "    return n > m;\n"
     "}\n",
     "t.pk:2:14: error: invalid operands to '>': u32 and i32 (i32 and u32 do not mix implicitly: convert one with i32(...), u32(...) or i64(...))\n"
     "    return n > m;\n"
     "             ^\n", 0},
};

/* Deep nesting stops the parse with one error at the token where the limit is crossed. */
static void check_nesting(void) {
    enum { N = 300 };
    char src[64 + 2 * N];
    strcpy(src, "kernel k(f32 x) { f32 y = ");
    size_t n = strlen(src); /* 26: the first '(' is at column 27 */
    for (int i = 0; i < N; i++)
        src[n++] = '(';
    src[n++] = 'x';
    for (int i = 0; i < N; i++)
        src[n++] = ')';
    strcpy(src + n, "; }\n");
    pk_result *r = lt_compile(src, 0);
    /* statement (1) + initializer (2) + one level per '(' : the 255th '(' reaches 257 */
    const char *want = "t.pk:1:282: error: nesting is too deep (more than 256 levels)\n";
    const char *got = pk_result_text(r);
    LT_CHECK(strncmp(got, want, strlen(want)) == 0, "nesting: got %.200s", got);
    LT_CHECK(pk_result_error_count(r) == 1, "nesting: %u errors", pk_result_error_count(r));
    pk_result_free(r);

    /* a long left-deep chain is not recursion in the parser, but its depth is still bounded */
    size_t len = 40 + 4 * 1000;
    char *chain = malloc(len);
    strcpy(chain, "kernel k(f32 x) { f32 y = x");
    for (int i = 0; i < 1000; i++)
        strcat(chain, " + x");
    strcat(chain, "; }");
    r = lt_compile(chain, 0);
    LT_CHECK(!pk_result_ok(r) && strstr(pk_result_text(r), "expression is nested too deeply"),
             "chain: %.200s", pk_result_text(r));
    pk_result_free(r);
    free(chain);
}

/* Error cap: many independent errors stop at the limit with a closing line. */
static void check_cap(void) {
    char src[4096] = "kernel k() {\n";
    for (int i = 0; i < 30; i++)
        strcat(src, "    nope = 1;\n");
    strcat(src, "}\n");
    pk_result *r = lt_compile(src, 0);
    LT_CHECK(pk_result_error_count(r) == 20, "cap: %u errors", pk_result_error_count(r));
    const char *t = pk_result_text(r);
    const char *tail = "too many errors; stopped after 20\n";
    LT_CHECK(strlen(t) > strlen(tail) && strcmp(t + strlen(t) - strlen(tail), tail) == 0,
             "cap: text ends with %s", t + (strlen(t) > 60 ? strlen(t) - 60 : 0));
    pk_result_free(r);
}

/* A failed compile's report (pk_result_error_text) holds the errors with their notes, not the
 * warnings before them: 60 unused variables render to about 4.5 KB, more than an ABI error
 * string holds, and the one error comes last. */
static void check_errors_before_warnings(void) {
    /* a function with an error gets no unused-variable warnings, so the warnings are in two
     * other kernels */
    char src[8192] = "";
    for (int k = 0; k < 2; k++) {
        strcat(src, k ? "kernel b() {\n" : "kernel a() {\n");
        for (int i = 0; i < 30; i++) {
            char line[64];
            snprintf(line, sizeof line, "    f32 unused_%02d = 1.0;\n", i);
            strcat(src, line);
        }
        strcat(src, "}\n");
    }
    strcat(src, "kernel k() {\n    nope = 1;\n}\n"); /* the error on line 66 */
    pk_result *r = lt_compile(src, 0);
    const char *want = "t.pk:66:5: error: unknown name 'nope'\n"
                       "    nope = 1;\n"
                       "    ^\n"
                       "(and 60 warnings, not shown while there are errors)\n";
    LT_CHECK(strcmp(pk_result_error_text(r), want) == 0, "errors first: got %.300s",
             pk_result_error_text(r));
    LT_CHECK(strlen(pk_result_text(r)) > 4096 && strstr(pk_result_text(r), "b(") == NULL && strstr(pk_result_text(r), "t.pk:63:9: warning: unused variable 'unused_29'"),
             "full text: %zu bytes", strlen(pk_result_text(r)));
    pk_result_free(r);

    /* without warnings, and with warnings only, the report is the whole text */
    r = lt_compile("kernel k() {\n    nope = 1;\n}\n", 0);
    LT_CHECK(strcmp(pk_result_error_text(r), pk_result_text(r)) == 0, "errors only differ");
    pk_result_free(r);
    r = lt_compile("kernel k() {\n    f32 u = 1.0;\n}\n", 0);
    LT_CHECK(pk_result_ok(r) && strstr(pk_result_error_text(r), "unused variable 'u'"),
             "warnings only: %s", pk_result_error_text(r));
    pk_result_free(r);
}

int main(void) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const err_case *c = &cases[i];
        pk_result *r = lt_compile(c->src, 0);
        const char *got = pk_result_text(r);
        LT_CHECK(strcmp(got, c->want) == 0, "%s: text differs", c->name);
        if (strcmp(got, c->want) != 0)
            lt_show_diff(c->name, c->want, got);
        LT_CHECK(pk_result_ok(r) == c->ok, "%s: ok=%d", c->name, pk_result_ok(r));
        LT_CHECK(c->ok || pk_result_program(r) == NULL, "%s: a program despite errors", c->name);
        pk_result_free(r);
    }
    check_nesting();
    check_cap();
    check_errors_before_warnings();
    return lt_finish("lang_errors");
}
