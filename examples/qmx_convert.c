/* qmx_convert.c - weight converter: .npy / .safetensors tensors -> a C header for firmware.
 *
 * Reads float32, float16 and bfloat16 tensors, quantizes each by a rule table with qmx
 * (qmx_compute_qparams + qmx_quantize) and writes one C header holding static const arrays
 * (aligned, for flash) of the quantized data, scales and zero points, a qmx_model_tensor
 * descriptor per tensor and a table of them all. Firmware includes that header plus qmx.h and
 * hands the arrays to qmx_dequantize or the qmx kernels. This is a host tool: it uses libc.
 *
 *   make build/qmx_convert
 *   build/qmx_convert [options] FILE.npy|FILE.safetensors ...
 *     -o, --output FILE      the header to write (default: standard output)
 *     --prefix NAME          C identifier prefix of everything emitted (default: model)
 *     --rule 'PATTERN=SPEC'  quantize tensors whose name matches PATTERN by SPEC; the first
 *                            matching rule wins (repeatable)
 *     --default SPEC         the SPEC of tensors no rule matches (default: int8:per_channel)
 *     --qmx-include PATH     what the header #includes for the qmx enums (default: qmx.h)
 *     --intmp FILE.json      MaxText intmp mixed-precision rules (after the --rule list,
 *                            before --default; mapping in qmx_convert/qmx_convert_core.h)
 *   SPEC = DTYPE[:OPTION]... with DTYPE int8 uint8 int16 uint16 int4 uint4 int2 uint2 int3..int7 nf4
 *   fp8_e4m3fn fp8_e5m2
 *   fp8_e4m3fnuz fp8_e5m2fnuz float skip, OPTION per_tensor per_channel per_block=N axis=A
 *   recipe=aqt|qwix|tflite|torch|onnx asym narrow preserve_max; block-scaled DTYPEs mxfp8
 *   mxfp8_e5m2 mxfp6_e2m3 mxfp6_e3m2 mxfp4 nvfp4 mxint8 with OPTIONs per_block=N axis=A
 *   rule=floor|ceil|even|rceil|qwix|microxcaling|ggml, nvfp4 two_level
 *   (details: qmx_convert/qmx_convert_core.h).
 *   A .npy file holds one tensor named after the file (without .npy); a .safetensors file
 *   holds named tensors. The format is recognised by content.
 *
 * Example:
 *   build/qmx_convert --prefix mlp --rule '*.bias=float' --rule 'fc2.*=int4:per_block=32' \
 *       --default int8:per_channel model.safetensors -o mlp_weights.h
 *
 * Exit status: 0 on success, 1 on any error (one line on stderr naming the file, the tensor
 * and the problem; see qmx_convert/qmx_files.h for the readers' checks), 2 on usage errors.
 */
#define QMX_IMPLEMENTATION
#include "qmx.h"
#include "qmx_convert/qmx_files.h"
#include "qmx_convert/qmx_convert_core.h"

static void usage(FILE *f) {
    fputs("usage: qmx_convert [-o OUT.h] [--prefix NAME] [--rule 'PATTERN=SPEC']... [--default SPEC]\n"
          "                   [--intmp RULES.json] [--qmx-include PATH] FILE.npy|FILE.safetensors...\n"
          "  SPEC = DTYPE[:OPTION]...  DTYPE: int8 uint8 int16 uint16 int4 uint4 int2 uint2\n"
          "         int3 int5 int6 int7 nf4 fp8_e4m3fn fp8_e5m2 fp8_e4m3fnuz fp8_e5m2fnuz float skip\n"
          "         OPTION: per_tensor per_channel per_block=N axis=A recipe=aqt|qwix|tflite|torch|onnx\n"
          "                 asym narrow preserve_max\n"
          "  block-scaled DTYPE: mxfp8 mxfp8_e5m2 mxfp6_e2m3 mxfp6_e3m2 mxfp4 nvfp4 mxint8\n"
          "         OPTION: per_block=N axis=A rule=floor|ceil|even|rceil|qwix|microxcaling|ggml\n"
          "                 two_level (nvfp4: torchao's fp32 tensor scale)\n"
          "  e.g. --rule '*.bias=float' --rule 'fc2.*=int4:per_block=32' --default int8:per_channel\n",
          f);
}

int main(int argc, char **argv) {
    qmxc_options o;
    qmxf_list tensors;
    qmxc_buf out;
    qmxc_intmp intmp;
    char err[768];
    size_t i;
    qmx_status st;
    FILE *f;
    int ok;

    memset(&tensors, 0, sizeof tensors);
    memset(&out, 0, sizeof out);
    memset(&intmp, 0, sizeof intmp);
    st = qmxc_parse_args(argc, argv, &o, err, sizeof err);
    if (st) {
        fprintf(stderr, "qmx_convert: %s\n", err);
        usage(stderr);
        return 2;
    }
    if (o.help) {
        usage(stdout);
        qmxc_options_free(&o);
        return 0;
    }
    if (o.intmp_path) { /* MaxText intmp rules */
        uint8_t *json = NULL;
        size_t len = 0;
        char msg[512];
        st = qmxf_slurp(o.intmp_path, &json, &len, err, sizeof err);
        if (!st) {
            st = qmxc_intmp_load((const char *)json, len, &intmp, msg, sizeof msg);
            if (st) snprintf(err, sizeof err, "%s: %s", o.intmp_path, msg);
        }
        free(json);
        if (!st) o.intmp = &intmp;
    }
    for (i = 0; i < o.n_inputs && !st; i++) st = qmxf_read_file(o.inputs[i], &tensors, err, sizeof err);
    if (!st) {
        fprintf(stderr, "qmx_convert: %lu tensors from %lu files\n", (unsigned long)tensors.n,
                (unsigned long)o.n_inputs);
        st = qmxc_convert(&o, &tensors, &out, stderr, err, sizeof err);
    }
    if (st) {
        fprintf(stderr, "qmx_convert: error (%s): %s\n", qmx_status_str(st), err);
        qmxf_list_free(&tensors);
        qmxc_options_free(&o);
        qmxc_intmp_free(&intmp);
        return 1;
    }
    f = o.out_path ? fopen(o.out_path, "wb") : stdout;
    ok = f && fwrite(out.p, 1, out.n, f) == out.n;
    if (f && f != stdout) ok = (fclose(f) == 0) && ok;
    if (!ok)
        fprintf(stderr, "qmx_convert: cannot write %s\n", o.out_path ? o.out_path : "standard output");
    else if (o.out_path)
        fprintf(stderr, "qmx_convert: wrote %s (%lu bytes)\n", o.out_path, (unsigned long)out.n);
    qmxc_buf_free(&out);
    qmxf_list_free(&tensors);
    qmxc_options_free(&o);
    qmxc_intmp_free(&intmp);
    return ok ? 0 : 1;
}
