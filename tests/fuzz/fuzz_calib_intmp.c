/* fuzz_calib_intmp.c - libFuzzer harness for the MaxText intmp JSON parser and the regex
 * subset: qmx_intmp_parse on the input (small rule/name buffers too), then a lookup of a few
 * layer names and of the input itself; qmx_intmp_fullmatch with the input split into pattern
 * and string. Statuses only, never a crash or a sanitizer report. */
#ifndef QMX_TEST_SEPARATE_IMPL
#define QMX_IMPLEMENTATION
#endif
#include "qmx_calib.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    qmx_intmp_rule rules[8];
    char names[512];
    qmx_intmp_config cfg;
    const qmx_intmp_rule *r;
    const char *s = (const char *)data;
    size_t cut;
    qmx_status st = qmx_intmp_parse(s, size, rules, 8, names, sizeof names, &cfg);
    if (st == QMX_OK) {
        static const char *layers[] = {"decoder/layers_0/self_attention/query", "a", "",
                                       "decoder/layers_12/mlp/wi_0"};
        size_t i;
        if (cfg.n_rules > 8) abort();
        for (i = 0; i < 4; i++) {
            st = qmx_intmp_lookup(&cfg, layers[i], strlen(layers[i]), &r);
            if (st != QMX_OK && st != QMX_ERR_ARG) abort();
        }
        st = qmx_intmp_lookup(&cfg, s, size < 300 ? size : 300, &r);
        if (st != QMX_OK && st != QMX_ERR_ARG) abort();
    } else if (st != QMX_ERR_PARSE && st != QMX_ERR_UNSUPPORTED && st != QMX_ERR_BUFFER_TOO_SMALL) {
        abort();
    }
    qmx_intmp_parse(s, size, rules, 1, names, 16, &cfg);
    cut = size ? data[0] % (size + 1) : 0;
    {
        int m = qmx_intmp_fullmatch(s, cut, s + cut, size - cut);
        if (m != 0 && m != 1 && m != QMX_ERR_PARSE && m != QMX_ERR_UNSUPPORTED) abort();
    }
    return 0;
}
