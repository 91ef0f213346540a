/* test_ast.c — the shape of the typed AST for small programs, compared with S-expression
 * dumps written by hand from the grammar and the typing rules in docs/language.md. */
#include "lang_test.h"

typedef struct ast_case {
    const char *name;
    const char *src;
    const char *want; /* pk_print_program() of the user's declarations */
} ast_case;

static const ast_case cases[] = {
    {"design doc restriction: struct-for, atomic +=, ivec3 / int literal",
     "kernel restrict(field<f32> fine, field<f32> coarse) {\n"
     "    for (I in fine) coarse[I / 2] += 0.125 * fine[I];\n"
     "}\n",
     "(kernel restrict ((field fine f32 3) (field coarse f32 3))\n"
     "  (block\n"
     "    (for-field parallel I ivec3 @fine\n"
     "      (assign += atomic (fa f32 coarse (div ivec3 I (splat ivec3 2:i32))) "
     "(mul f32 0.125:f32 (fa f32 fine I))))))\n"},
};

int main(void) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const ast_case *c = &cases[i];
        pk_result *r = lt_compile(c->src, 1);
        LT_CHECK(pk_result_ok(r), "%s: does not compile:\n%s", c->name, pk_result_text(r));
        if (pk_result_ok(r)) {
            char *got = pk_print_program(pk_result_program(r), 0);
            LT_CHECK(got && strcmp(got, c->want) == 0, "%s: AST differs", c->name);
            if (got && strcmp(got, c->want) != 0)
                lt_show_diff(c->name, c->want, got);
            free(got);
        }
        pk_result_free(r);
    }
    return lt_finish("lang_ast");
}
